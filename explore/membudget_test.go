package explore

import (
	"context"
	"encoding/json"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
)

// TestSearchMemoryBudget: a BFS of the default configuration that needs
// more than --max-memory stops cleanly at the budget: incomplete (exit 3),
// saying so and how far it got; --json says "memory" and the budget.
// (--unexpected: at 32MiB, hash compaction, denser tables and the frontier
// on disk carried the search to depth 9, where the reference's expected
// violation of absolute-validity ended it.)
func TestSearchMemoryBudget(t *testing.T) {
	args := []string{"search", "--variant", "reference", "--mode", "bfs", "--unexpected", "--max-memory", "24MiB", "--quiet", "--out", t.TempDir()}
	code, stdout, _ := explore(t, args...)
	if code != exitIncomplete || !strings.Contains(stdout, "incomplete") || !strings.Contains(stdout, "memory budget 24MiB") ||
		!strings.Contains(stdout, "frontier") || strings.Contains(stdout, "state limit") {
		t.Fatalf("exit %d, want 3, incomplete at the memory budget\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(args, "--json")...)
	var e struct {
		Complete  bool   `json:"complete"`
		Stopped   string `json:"stopped"`
		MaxMemory uint64 `json:"maxMemory"`
		BFS       struct {
			Stopped string `json:"stopped"`
			States  uint64 `json:"states"`
		} `json:"bfs"`
	}
	if err := json.Unmarshal([]byte(stdout), &e); err != nil || code != exitIncomplete || e.Complete ||
		e.BFS.Stopped != "memory" || e.Stopped != "memory budget" || e.MaxMemory != 24<<20 || e.BFS.States == 0 {
		t.Fatalf("--json: exit %d, %v, %+v\n%s", code, err, e, stdout)
	}
}

// TestSearchMaxMemoryFlag: a size that is none is a usage error naming the
// flag; 0 (no limit) and sizes in any unit are taken; --help shows the
// default budget.
func TestSearchMaxMemoryFlag(t *testing.T) {
	for _, bad := range []string{"bogus", "12 parsecs", "-1"} {
		code, stdout, stderr := explore(t, "search", "--variant", "reference", "--max-memory", bad)
		if code != 2 || !strings.Contains(stderr, "-max-memory") || stdout != "" {
			t.Errorf("--max-memory %q: exit %d, stderr %q", bad, code, stderr)
		}
	}
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--quiet", "--out", t.TempDir()}, tinyBFS...)
	for _, ok := range []string{"0", "2G", "512MiB", "1000000000"} {
		if code, stdout, stderr := explore(t, append(base, "--max-memory", ok)...); code != exitOK {
			t.Errorf("--max-memory %s: exit %d\n%s%s", ok, code, stdout, stderr)
		}
	}
	_, stdout, _ := explore(t, "search", "--help")
	if !strings.Contains(stdout, "-max-memory") || !strings.Contains(stdout, "iB)") {
		t.Errorf("--help does not show --max-memory and its default\n%s", stdout)
	}
}

// TestRunBFSHoldsMemoryLimit: while a search with a memory budget runs, the
// Go runtime's memory limit is the budget and a sixteenth, or a lower limit
// already in force; after it, the limit is what it was; a search with no
// budget leaves the limit alone.
func TestRunBFSHoldsMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	m, err := designs.Reference.Machine(model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		before int64
		budget uint64
		during int64
	}{
		{math.MaxInt64, 256 << 20, 272 << 20},
		{128 << 20, 256 << 20, 128 << 20},              // GOMEMLIMIT lower than the budget
		{1 << 40, 0, 1 << 40},                          // no budget
		{math.MaxInt64, math.MaxUint64, math.MaxInt64}, // a budget beyond any limit
	} {
		debug.SetMemoryLimit(c.before)
		var seen []int64
		res := runBFS(context.Background(), m, checker.BFSOptions{Exhaustive: true, MaxMemory: c.budget, Symmetry: model.SymWorkers,
			Progress: func(checker.BFSProgress) { seen = append(seen, debug.SetMemoryLimit(-1)) }})
		if res.Stopped != checker.StopComplete || len(seen) == 0 {
			t.Fatalf("%+v: stopped %q, %d progress reports", c, res.Stopped, len(seen))
		}
		for _, l := range seen {
			if l != c.during {
				t.Fatalf("%+v: memory limit %d during the search, want %d", c, l, c.during)
			}
		}
		if l := debug.SetMemoryLimit(-1); l != c.before {
			t.Errorf("%+v: memory limit %d after the search, want %d as before", c, l, c.before)
		}
	}
}

// TestPrintBFSAtBudget: the output says when a search switched to hash
// compaction, when it filled its tables to 7/8 and when it began layers
// at the memory budget, after how many states, and says none of it of a
// search that did not.
func TestPrintBFSAtBudget(t *testing.T) {
	v := designs.All()[0]
	for _, r := range []checker.BFSResult{{}, {CompactedAt: 119904, DenseAt: 1541424, LayeredAt: 1796947, HashCompact: true, Stopped: checker.StopMemory}} {
		var out strings.Builder
		printBFS(&out, r, v)
		compacted := strings.Contains(out.String(), "switched to hash compaction at the memory budget, after 119904 states\n")
		dense := strings.Contains(out.String(), "filled the visited set's tables to 7/8 at the memory budget, after 1541424 states")
		layered := strings.Contains(out.String(), "kept the visited set's full tables at the memory budget and stored the states that followed in smaller ones, after 1796947 states\n")
		if compacted != (r.CompactedAt > 0) || dense != (r.DenseAt > 0) || layered != (r.LayeredAt > 0) ||
			r.DenseAt == 0 && (strings.Contains(out.String(), "7/8") || strings.Contains(out.String(), "smaller ones")) {
			t.Errorf("compacted at %d, dense at %d, layered at %d:\n%s", r.CompactedAt, r.DenseAt, r.LayeredAt, out.String())
		}
	}
}
