package checker

import (
	"context"
	"math"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// TestGroupedLookupsCountAsOneByOne: the expansion and the marking of
// subsumed states look the successors and the simulating states up a
// group at a time (keepNew, simulatedStored), and count the lookups that
// one lookup after another, stopping at the first found, would have made.
// The figures were those of the search that looked them up one by one
// (b576815, which had no dead-delivered, with the exact Live flags patched
// into its model): the same states kept, the same states subsumed, the same
// lookups counted, so the same omission bound. Since the network stopped
// losing the advance a coordinator waits on (a model change; the lookups
// are unchanged) they are this tree's own, not checked against b576815
// again: 1,285,357 states, 3,896,957 transitions, 158,016 subsumed and
// 7,947,190 lookups before it.
func TestGroupedLookupsCountAsOneByOne(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2,
		Drops: 1, Dups: 1, Crashes: 1, Restarts: 1}
	m := newMachine(t, c, model.Design{})
	r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, MaxDepth: 18, Symmetry: model.SymWorkers,
		Reduce: model.Reductions &^ model.ReduceDeadDelivered, HashCompact: true, Goroutines: 2})
	const states, trans, subsumed, probes, omission = 1100889, 3363699, 131476, 6559783, 6.375732809944456e-09
	// The bound to 1e-12: an architecture that fuses a multiply and an add
	// may round its sums differently.
	if r.States != states || r.Transitions != trans || r.Subsumed != subsumed || r.Probes != probes ||
		math.Abs(r.OmissionBound-omission) > 1e-12*omission {
		t.Fatalf("%d states, %d transitions, %d subsumed, %d lookups, omission bound %g; one by one: %d, %d, %d, %d, %g",
			r.States, r.Transitions, r.Subsumed, r.Probes, r.OmissionBound, states, trans, subsumed, probes, omission)
	}
}
