package realdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// TestReplayCounterexamples replays four of the model's counterexamples on
// the built-in coordinator and a real sink (SQLite, and PostgreSQL for
// ttl-only-lock), each twice: every answer
// the schedule states comes back the same, and the real history shows what
// the model found. Three are the campaign's, as committed under
// histories/counterexamples; ttl-only-lock's is an earlier campaign's,
// kept in testdata. In the campaign's current one the coordinator restarts
// while the advance of a grant it began is in flight, and the worker's
// retry makes a second advance: the history shows two advances and one
// open acquire, and Replay drives the real acquire at the first (the stale
// one), so the real coordinator grants token 1 where the model granted 2.
func TestReplayCounterexamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // invariants the real history must violate
	}{
		// The stale write is let go at the model's apply line, after the
		// takeover's advance; the recorded apply event (written, having
		// seen fence 1, with the fence at 2) orders it after the advance.
		{"check-then-write", []string{spec.Fencing}},
		{"grant-before-fence", []string{spec.Fencing, spec.FenceBeforeGrant}},
		{"ttl-only-lock", []string{spec.Fencing}},
		// The write applied at the lease's deadline (tick 3 of ttl 3).
		{"reference", []string{spec.AbsoluteValidity}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("..", "histories", "counterexamples", tc.name+".jsonl")
			if tc.name == "ttl-only-lock" {
				path = filepath.Join("testdata", tc.name+".jsonl")
			}
			h, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var first []string
			for i := range 2 { // the second ttl-only-lock replay on PostgreSQL
				cfg := ReplayConfig{}
				if tc.name == "ttl-only-lock" && i == 1 {
					cfg.DB, cfg.DSN = Postgres, needPostgres(t)
				}
				res, err := Replay(context.Background(), h, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Reproduced() {
					t.Fatalf("not reproduced: %v", res.Mismatches)
				}
				got := map[string]bool{}
				var ids []string
				for _, v := range res.Report.Violations {
					if !got[v.Invariant] {
						ids = append(ids, v.Invariant)
					}
					got[v.Invariant] = true
				}
				for _, inv := range tc.want {
					if !got[inv] {
						t.Errorf("the real history does not violate %s: %v", inv, res.Report.Violations)
					}
				}
				if i == 0 {
					first = ids
					t.Logf("violates %v; notes %v", ids, res.Notes)
				} else if len(ids) != len(first) {
					t.Errorf("second replay violates %v, first %v: not deterministic", ids, first)
				}
			}
		})
	}
}
