package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// TestGhostReadsAsZero: a design that reads the ghost's grant (which
// grant a write truly came from: no real sink knows it) is judged as the
// same design reading zero there. Read, the ghost would let this sink tell
// a forged token from a real one, a defence no implementation can build,
// and the search would judge it as it judges the reference; blind, the
// sink rejects every write, and resource-independence catches that.
func TestGhostReadsAsZero(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2, Forgeries: 1}
	rejectForged := func(grant func(w model.Msg) uint8) model.Design {
		return model.Design{Check: func(v model.SinkView, w model.Msg) uint8 {
			if grant(w) == 0 {
				return model.RepFenced // no grant's token: a forgery
			}
			return model.RefCheck(v, w)
		}}
	}
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, Reduce: model.Reductions}
	ghost := BFS(context.Background(), newMachine(t, c, rejectForged(func(w model.Msg) uint8 { return w.Grant })), opt)
	zero := BFS(context.Background(), newMachine(t, c, rejectForged(func(model.Msg) uint8 { return 0 })), opt)
	if !ghost.Complete || !zero.Complete {
		t.Fatalf("searches stopped: %s, %s", ghost.Stopped, zero.Stopped)
	}
	if ghost.States != zero.States || ghost.Transitions != zero.Transitions || ghost.Violated != zero.Violated {
		t.Errorf("reading the ghost's grant: %d states, %d transitions, violated %v; reading 0: %d, %d, %v",
			ghost.States, ghost.Transitions, ghost.ViolatedIDs, zero.States, zero.Transitions, zero.ViolatedIDs)
	}
	t.Logf("%d states, violated %v", zero.States, zero.ViolatedIDs)
}
