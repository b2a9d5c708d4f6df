package realdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// TestReplayCounterexamples replays three of the model's counterexamples on
// the built-in coordinator and a real sink (SQLite, and PostgreSQL for
// ttl-only-lock), each twice: every answer
// the schedule states comes back the same, and the real history shows what
// the model found.
func TestReplayCounterexamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string // invariants the real history must violate
	}{
		// The shortest counterexample advances the fence for a takeover
		// whose grant nobody observes (the new holder gave up), and the
		// real check-then-write sink reports the fence of its check, 1:
		// the real history shows nothing, the replay's note shows the
		// stale write going on at the sink's decision (checked below).
		{"check-then-write", nil},
		{"grant-before-fence", []string{spec.Fencing, spec.FenceBeforeGrant}},
		{"ttl-only-lock", []string{spec.Fencing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.ReadFile(filepath.Join("..", "histories", "counterexamples", tc.name+".jsonl"))
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
				if tc.name == "check-then-write" && (len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "went on at the sink's decision: ok written")) {
					t.Errorf("the held stale write did not land: %v", res.Notes)
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
