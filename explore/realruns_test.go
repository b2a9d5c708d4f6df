package explore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
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

// TestRealInterruptedIsIncomplete: a real campaign cut short by an interrupt
// (a cancelled context, as Ctrl-C gives) ends as incomplete, exit 3, in text
// and in JSON, never as a pass or an input error.
func TestRealInterruptedIsIncomplete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, jsonOut := range []bool{false, true} {
		args := []string{"real", "--lease", "builtin", "--sink", "atomic", "--runs", "5", "--out", t.TempDir()}
		if jsonOut {
			args = append(args, "--json")
		}
		var out, errb strings.Builder
		code := run(ctx, args, &out, &errb, designs.All())
		if code != exitIncomplete {
			t.Fatalf("json=%v: exit %d, want %d\n%s\n%s", jsonOut, code, exitIncomplete, out.String(), errb.String())
		}
		if !jsonOut {
			if !strings.Contains(out.String(), "incomplete: 0 of 5 runs done (interrupted)") {
				t.Errorf("text ending does not say incomplete:\n%s", out.String())
			}
			continue
		}
		var v struct {
			Complete *bool  `json:"complete"`
			Stopped  string `json:"stopped"`
			Budget   int    `json:"budget"`
		}
		if err := json.Unmarshal([]byte(out.String()), &v); err != nil || v.Complete == nil || *v.Complete || v.Stopped != "interrupted" || v.Budget != 5 {
			t.Errorf("json ending %+v (%v):\n%s", v, err, out.String())
		}
	}
}
