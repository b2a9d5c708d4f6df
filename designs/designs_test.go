package designs_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestCatalogue: names are unique, each design says why and lives in a
// file named after it, and the catalogue holds the contract's variants
// under their names.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range designs.All() {
		if seen[v.Name] {
			t.Errorf("%s: listed twice", v.Name)
		}
		seen[v.Name] = true
		if v.Summary == "" || v.Why == "" {
			t.Errorf("%s: no summary or no explanation", v.Name)
		}
		if _, err := os.Stat(strings.ReplaceAll(v.Name, "-", "_") + ".go"); err != nil {
			t.Errorf("%s: %v", v.Name, err)
		}
		if _, err := v.Machine(model.DefaultConfig()); err != nil {
			t.Errorf("%s: the default config does not run: %v", v.Name, err)
		}
	}
	for _, name := range []string{"reference", "grant-before-fence", "check-then-write", "volatile-counter",
		"worker-clock", "renew-token-only", "renew-at-deadline", "accept-higher-token", "global-fence",
		"request-id-key", "no-acquire-dedup", "sink-deadline"} {
		if !seen[name] {
			t.Errorf("the contract's variant %s is missing", name)
		}
	}
	if len(seen) < 27 {
		t.Errorf("%d designs, want at least 27", len(seen))
	}
}

// proofConfig is the bound on which the designs expected to be safe are
// proved: every state reachable with two workers and a takeover (the
// checker's own tests prove the reference with faults on top).
var proofConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}

// TestSafeDesignsAreProved: every design expected to hold everything but
// plain fencing's non-guarantee is searched exhaustively on proofConfig:
// nothing else is violated, and the search reached the scenes its verdict
// depends on (a design that is safe because it never lets a stale write
// reach the sink proves nothing).
func TestSafeDesignsAreProved(t *testing.T) {
	for _, v := range designs.All() {
		if v.Expect.Violates&^spec.NonGuarantee != 0 || v.Expect.AnyOf != 0 {
			continue // expected to violate more
		}
		c := proofConfig
		m, err := v.Machine(c)
		if err != nil {
			t.Fatal(err)
		}
		r := checker.BFS(context.Background(), m, checker.BFSOptions{Stop: ^v.Expect.Allowed(),
			Symmetry: model.SymWorkers})
		if r.Counterexample != nil || !r.Complete {
			t.Fatalf("%s: %s, violated %v, trace %v", v.Name, r.Stopped, r.ViolationIDs, r.Trace)
		}
		if !v.Expect.Matches(r.Violated) {
			t.Errorf("%s: %s", v.Name, v.Expect.Unexpected(r.Violated))
		}
		if miss := r.Reached.Missing(v.Scenes()); miss != 0 {
			t.Errorf("%s: vacuous: no transition reached %v", v.Name, miss)
		}
		t.Logf("%-24s proved on %+v: %d states, depth %d, reached %v", v.Name, c, r.States, r.MaxDepth, r.Reached)
	}
}

// TestHolderMarginNeedsAFence: on a target that checks no token, no margin
// of the holder's own clock is safe against any skew, because the network
// delivers a write sent inside the margin as late as it likes (random
// search finds the stale write at every point of the grid); the same holder
// over a fenced sink (holder-clock) is proved safe above.
func TestHolderMarginNeedsAFence(t *testing.T) {
	for margin := 0; margin <= 2; margin++ {
		for skew := 0; skew <= 1; skew++ {
			c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: margin + 2, Ops: 3, Grants: 2,
				InFlight: 2, Skew: skew}
			m, err := designs.HolderMargin(margin).Machine(c)
			if err != nil {
				t.Fatal(err)
			}
			f := checker.Search(context.Background(), m, checker.SearchOptions{Seed: 1, Runs: 20000, Steps: 100,
				Stop: spec.SetOf(spec.Fencing)})
			if f == nil {
				t.Errorf("margin %d, skew %d: no stale write found in 20000 runs", margin, skew)
				continue
			}
			t.Logf("margin %d, skew %d: fencing violated at run %d, shrunk to %d actions", margin, skew, f.Index, len(f.Run.Actions))
		}
	}
}
