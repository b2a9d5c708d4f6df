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
	outDir := t.TempDir()
	search := exec.Command(bin, "search", "--variant", "my-lock-delay", "--mode", "bfs", "--unexpected",
		"--workers", "2", "--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--drops", "0",
		"--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0",
		"--sink-restarts", "0", "--out", outDir)
	search.Stderr = nil // the progress lines
	out, err = search.Output()
	if code := search.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "my-lock-delay violates fencing") {
		t.Fatalf("owndesign search: exit %d (%v), want 1 with fencing\n%s", code, err, out)
	}
	docShowsOutput(t, "../docs/your-own-variant.md", "$ go run . search --variant my-lock-delay",
		strings.ReplaceAll(string(out), outDir, "explore-out"))
}

// docShowsOutput checks the output block of the page at path that starts
// with the command line cmd against a run's output: each line of the
// block after the command is a line of the output, in order; one that ends
// in "..." a line's beginning; a line "..." stands for any lines.
func docShowsOutput(t *testing.T, path, cmd, out string) {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(page), "\n"+cmd)
	if !ok {
		t.Fatalf("%s shows no %q", path, cmd)
	}
	block, _, _ = strings.Cut(block, "\n```")
	lines := strings.Split(out, "\n")
	at := 0
	for _, want := range strings.Split(block, "\n")[1:] {
		if want == "..." || strings.HasPrefix(want, "    --") { // the command's own continuation
			continue
		}
		prefix, cut := strings.CutSuffix(want, "...")
		for at < len(lines) && lines[at] != want && !(cut && strings.HasPrefix(lines[at], prefix)) {
			at++
		}
		if at == len(lines) {
			t.Fatalf("%s shows %q, which the run does not print (in that order):\n%s", path, want, out)
		}
		at++
	}
}
