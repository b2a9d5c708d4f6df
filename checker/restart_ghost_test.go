package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestRestartCannotForgeGrants: which grant a coordinator's dedup record
// answers with is the ghost's, not the design's: a Restart that keeps the
// reference's records but rewrites their Grant (to a grant never issued,
// or past the ghost's table) is the reference, with the reference's
// states, transitions and verdicts. It once made a false fencing
// violation ("the sink accepted w1's write from grant #6") and, at 200, an
// index out of range in the invariants.
func TestRestartCannotForgeGrants(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2, Restarts: 1}
	opt := BFSOptions{Stop: allInvariants &^ spec.NonGuarantee, Symmetry: model.SymWorkers, Reduce: model.Reductions}
	want := BFS(context.Background(), newMachine(t, c, model.Design{}), opt)
	for _, g := range []uint8{6, 200} {
		d := model.Design{Restart: func(co model.Coordinator, ttl int) model.Coordinator {
			co = model.RefRestart(co, ttl)
			for r := range co.Dedup {
				for w := range co.Dedup[r] {
					if co.Dedup[r][w].Req != 0 {
						co.Dedup[r][w].Grant = g
					}
				}
			}
			return co
		}}
		got := BFS(context.Background(), newMachine(t, c, d), opt)
		if got.States != want.States || got.Transitions != want.Transitions || got.Violated != want.Violated || !got.Complete {
			t.Errorf("Grant %d: %d states, %d transitions, violated %v, %s; the reference: %d, %d, %v",
				g, got.States, got.Transitions, got.ViolatedIDs, got.Stopped, want.States, want.Transitions, want.ViolatedIDs)
		}
	}
}
