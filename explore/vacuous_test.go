package explore

import (
	"strings"
	"testing"
)

// TestVacuousSearchIsNoPass: a search that finds nothing because its bound
// never lets a takeover happen (one grant) says so and exits 3, never 0.
func TestVacuousSearchIsNoPass(t *testing.T) {
	args := []string{"search", "--variant", "reference", "--unexpected", "--workers", "2", "--resources", "1",
		"--ttl", "1", "--ops", "1", "--grants", "1", "--drops", "0", "--dups", "0", "--crashes", "0",
		"--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0", "--quiet", "--out", t.TempDir()}
	for _, mode := range []string{"bfs", "random"} {
		code, stdout, _ := explore(t, append(args, "--mode", mode, "--runs", "200")...)
		if code != exitIncomplete || !strings.Contains(stdout, "never reached takeover") {
			t.Errorf("--mode %s: exit %d, want %d saying what was never reached\n%s", mode, code, exitIncomplete, stdout)
		}
	}
}
