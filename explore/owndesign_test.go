package explore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnDesignModule builds examples/owndesign, a module of its own that
// requires fencecheck and registers a design beside the catalogue with
// explore.Main, and runs its search: the user's design is listed, and a
// breadth-first search of it finds its stale write.
func TestOwnDesignModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds another module")
	}
	dir, err := filepath.Abs("../examples/owndesign")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "owndesign")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off") // its go.mod and go.sum are complete
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in examples/owndesign: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "variants").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "my-lock-delay") {
		t.Fatalf("owndesign variants: %v\n%s", err, out)
	}
	search := exec.Command(bin, "search", "--variant", "my-lock-delay", "--mode", "bfs", "--unexpected",
		"--workers", "2", "--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--drops", "0",
		"--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0",
		"--sink-restarts", "0", "--out", t.TempDir())
	out, err = search.CombinedOutput()
	if code := search.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "my-lock-delay violates fencing") {
		t.Fatalf("owndesign search: exit %d (%v), want 1 with fencing\n%s", code, err, out)
	}
}
