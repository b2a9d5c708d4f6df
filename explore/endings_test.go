package explore

import (
	"context"
	"encoding/json"
	"github.com/fencecheck/fencecheck/designs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyBFS bounds a BFS search that completes in a few milliseconds.
var tinyBFS = []string{"--mode", "bfs", "--workers", "2", "--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2",
	"--in-flight", "1", "--drops", "0", "--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0",
	"--sink-restarts", "0"}

type ending struct {
	Complete *bool  `json:"complete"`
	Runs     int    `json:"runs"`
	Budget   int    `json:"budget"`
	Stopped  string `json:"stopped"`
	BFS      *struct {
		States   uint64 `json:"states"`
		MaxDepth int    `json:"maxDepth"`
	} `json:"bfs"`
}

func decodeEnding(t *testing.T, stdout string) ending {
	t.Helper()
	var e ending
	if err := json.Unmarshal([]byte(stdout), &e); err != nil || e.Complete == nil {
		t.Fatalf("--json: %v, no \"complete\"\n%s", err, stdout)
	}
	return e
}

// TestSearchStoppedByTimeIsIncomplete: --time ends a random search long
// before its budget: it says incomplete and how far it got, exits 3, and
// --json counts the runs done, not the budget.
func TestSearchStoppedByTimeIsIncomplete(t *testing.T) {
	args := []string{"search", "--variant", "reference", "--invariant", "fencing", "--runs", "1000000", "--time", "1ns", "--out", t.TempDir()}
	code, stdout, _ := explore(t, args...)
	if code != exitIncomplete || !strings.Contains(stdout, "incomplete") || !strings.Contains(stdout, "of 1000000 runs done") ||
		strings.Contains(stdout, "no violation found (") {
		t.Fatalf("exit %d, want 3 and how far it got\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(args, "--json")...)
	e := decodeEnding(t, stdout)
	if code != exitIncomplete || *e.Complete || e.Budget != 1000000 || e.Runs >= e.Budget || e.Stopped != "time limit" {
		t.Fatalf("--json: exit %d, %+v", code, e)
	}
}

// TestSearchInterruptedIsIncomplete: a cancelled context (Ctrl-C) ends
// both searches as incomplete.
func TestSearchInterruptedIsIncomplete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, mode := range []string{"random", "bfs"} {
		args := []string{"search", "--variant", "reference", "--invariant", "fencing", "--mode", mode, "--json", "--out", t.TempDir()}
		var out, errb strings.Builder
		code := run(ctx, args, &out, &errb, designs.All())
		e := decodeEnding(t, out.String())
		if code != exitIncomplete || *e.Complete || e.Stopped != "interrupted" {
			t.Errorf("%s: exit %d, %+v", mode, code, e)
		}
	}
}

// TestBFSEndings: a BFS that exhausts its space (or its depth bound) is
// complete (exit 0); one stopped by --time or --max-states is incomplete
// (exit 3) and says states, depth and frontier.
func TestBFSEndings(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--out", t.TempDir()}, tinyBFS...)
	for _, c := range []struct {
		extra []string
		code  int
	}{
		{nil, exitOK},
		{[]string{"--depth", "22"}, exitOK},
		{[]string{"--depth", "2"}, exitIncomplete}, // no takeover within 2 steps: vacuous, no proof
		{[]string{"--max-states", "10"}, exitIncomplete},
		{[]string{"--time", "1ns"}, exitIncomplete},
	} {
		code, stdout, _ := explore(t, append(base, c.extra...)...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s", c.extra, code, c.code, stdout)
			continue
		}
		if c.code == exitIncomplete && (!strings.Contains(stdout, "incomplete: ") ||
			!strings.Contains(stdout, "frontier") && !strings.Contains(stdout, "never reached")) {
			t.Errorf("%v: does not say incomplete and how far\n%s", c.extra, stdout)
		}
		code, stdout, _ = explore(t, append(append(base, c.extra...), "--json")...)
		if e := decodeEnding(t, stdout); code != c.code || *e.Complete != (c.code == exitOK) || e.BFS == nil {
			t.Errorf("%v --json: exit %d, %+v", c.extra, code, e)
		}
	}
}

// TestCampaignInterruptedIsIncomplete: an interrupted campaign does not
// claim its verdicts: it says incomplete and exits 3.
func TestCampaignInterruptedIsIncomplete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"--out", t.TempDir()}, &out, &errb, designs.All())
	if code != exitIncomplete || !strings.Contains(out.String(), "incomplete") || strings.Contains(out.String(), "as expected") {
		t.Fatalf("exit %d, want 3\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	code = run(ctx, []string{"--json", "--out", t.TempDir()}, &out, &errb, designs.All())
	var v struct {
		OK       bool `json:"ok"`
		Complete bool `json:"complete"`
		Runs     int  `json:"runs"`
		Budget   int  `json:"budget"`
	}
	if err := json.Unmarshal([]byte(out.String()), &v); err != nil || code != exitIncomplete || v.OK || v.Complete || v.Runs != 0 || v.Budget != 3000 {
		t.Fatalf("--json: exit %d, %+v %v\n%s", code, v, err, out.String())
	}
	code, stdout, _ := explore(t, "campaign", "--time", "1ns", "--out", t.TempDir())
	if code != exitIncomplete || !strings.Contains(stdout, "incomplete (time limit)") {
		t.Fatalf("--time 1ns: exit %d\n%s", code, stdout)
	}
}

// TestMergeOfAnIncompleteJobIsIncomplete: the merge of a split search is
// incomplete when any job is.
func TestMergeOfAnIncompleteJobIsIncomplete(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range [][]string{{"--runs", "40", "--steps", "100"}, append(append([]string{}, tinyBFS...), "--shard-depth", "2")} {
		var files []string
		for i, extra := range [][]string{nil, {"--time", "1ns"}} {
			args := append(append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--json", "--out", dir,
				"--shard", []string{"0/2", "1/2"}[i]}, mode...), extra...)
			_, stdout, _ := explore(t, args...)
			f := filepath.Join(dir, []string{"a.json", "b.json"}[i])
			if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		code, stdout, _ := explore(t, append([]string{"merge"}, files...)...)
		if code != exitIncomplete || !strings.Contains(stdout, "incomplete: job 1/2") {
			t.Errorf("%v: merge exit %d, want 3\n%s", mode[:2], code, stdout)
		}
		if mode[0] == "--mode" && !strings.Contains(stdout, "proof: none: the search is incomplete: job 1/2 stopped early") {
			t.Errorf("%v: merge proves something of an incomplete job\n%s", mode[:2], stdout)
		}
		code, stdout, _ = explore(t, append([]string{"merge", "--json"}, files...)...)
		if e := decodeEnding(t, stdout); code != exitIncomplete || *e.Complete {
			t.Errorf("%v: merge --json exit %d, %+v", mode[:2], code, e)
		}
	}
}

// TestNamed: the merge names one job that stopped early, or several.
func TestNamed(t *testing.T) {
	for _, c := range []struct {
		jobs []string
		want string
	}{{[]string{"1/3"}, "job 1/3"}, {[]string{"0/3", "2/3"}, "jobs 0/3, 2/3"}} {
		if got := named("job", c.jobs...); got != c.want {
			t.Errorf("named(job, %q) = %q, want %q", c.jobs, got, c.want)
		}
	}
}
