package explore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRealRunNumbersAgree: the run explore real says it first caught is
// the run whose history it saved under that number (runs count from 1).
func TestRealRunNumbersAgree(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := explore(t, "real", "--lease", "builtin", "--sink", "none", "--runs", "10", "--json", "--out", out)
	var v struct {
		FirstCaught int      `json:"firstCaught"`
		Files       []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if v.FirstCaught == 0 {
		t.Fatalf("no run of a target that checks no token was caught in 10 (exit %d)\n%s", code, stdout)
	}
	want := "run-" + strconv.Itoa(v.FirstCaught) + ".jsonl"
	for _, f := range v.Files {
		if filepath.Base(f) == want {
			if _, err := os.Stat(f); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("first caught at run %d, but no %s among %v", v.FirstCaught, want, v.Files)
}
