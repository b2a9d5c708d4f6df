package realdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// TestReplayCounterexamples replays the model's counterexamples on the
// built-in coordinator and a real sink (SQLite, and PostgreSQL for
// ttl-only-lock), each twice: every answer the schedule states comes back
// the same, and the real history shows what the model found. Four are the
// campaign's, as committed under histories/counterexamples; two are kept in
// testdata so that they stay when the campaign's change. ttl-only-lock.jsonl
// is an earlier campaign's (a worker crashes). In restart-mid-grant.jsonl
// the coordinator restarts while the advance of a grant it began is in
// flight, and the worker's retry makes a second advance: the history shows
// two advances and one open acquire, whose ok grants the second's token, so
// the first is played as an advance alone and the real acquire is driven at
// the second.
func TestReplayCounterexamples(t *testing.T) {
	committed := filepath.Join("..", "histories", "counterexamples")
	for _, tc := range []struct {
		name, path string
		want       []string // invariants the real history must violate
	}{
		// The stale write is let go at the model's apply line, after the
		// takeover's advance; the recorded apply event (written, having
		// seen fence 1, with the fence at 2) orders it after the advance.
		{"check-then-write", filepath.Join(committed, "check-then-write.jsonl"), []string{spec.Fencing}},
		{"grant-before-fence", filepath.Join(committed, "grant-before-fence.jsonl"), []string{spec.Fencing, spec.FenceBeforeGrant}},
		{"ttl-only-lock", filepath.Join(committed, "ttl-only-lock.jsonl"), []string{spec.Fencing}},
		// The write applied at the lease's deadline (tick 3 of ttl 3).
		{"reference", filepath.Join(committed, "reference.jsonl"), []string{spec.AbsoluteValidity}},
		{"ttl-only-lock-earlier", filepath.Join("testdata", "ttl-only-lock.jsonl"), []string{spec.Fencing}},
		{"restart-mid-grant", filepath.Join("testdata", "restart-mid-grant.jsonl"), []string{spec.Fencing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.ReadFile(tc.path)
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
