package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestSecondResourceAddsOnlyResourceIndependence measures what a second
// resource adds to a proof, for every built-in design: searched to the
// same depth with one resource and with two, every invariant but
// resource-independence has the same verdict and the same shortest
// counterexample length. A run with one resource is a run with two (the
// second left alone), so two find at least what one does; that they find
// no more is measured here, not proved — the resources share the workers,
// the network's capacity, the fault budgets, the restarts and the
// design's registers, and a design may couple them through any of those
// (docs/exhaustive.md, "Why no per-resource decomposition"). It is why the
// proofs of issue 10's bounds (P1 and its ladder) use one resource, and
// resource-independence needs two.
func TestSecondResourceAddsOnlyResourceIndependence(t *testing.T) {
	one := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2, Drops: 1, Restarts: 1}
	two := one
	two.Resources = 2
	opt := BFSOptions{Exhaustive: true, MaxDepth: 13, Symmetry: model.SymWorkers | model.SymResources, Reduce: model.Reductions, Goroutines: testGoroutines}
	independence := 0
	for _, v := range designs.All() {
		r1 := BFS(context.Background(), newMachine(t, one, v.Design), opt)
		r2 := BFS(context.Background(), newMachine(t, two, v.Design), opt)
		if r2.States <= r1.States {
			t.Fatalf("%s: %d states with two resources, %d with one", v.Name, r2.States, r1.States)
		}
		lengths := func(r BFSResult) map[string]int {
			l := map[string]int{}
			for _, s := range r.Shortest {
				if s.Invariant != spec.ResourceIndependence {
					l[s.Invariant] = s.Length
				}
			}
			return l
		}
		l1, l2 := lengths(r1), lengths(r2)
		if len(l1) != len(l2) {
			t.Errorf("%s: one resource violates %v, two %v", v.Name, r1.ViolatedIDs, r2.ViolatedIDs)
			continue
		}
		for id, n := range l2 {
			if l1[id] != n {
				t.Errorf("%s: %s's shortest counterexample is %d actions with two resources, %d with one", v.Name, id, n, l1[id])
			}
		}
		if r2.Violated.Has(spec.ResourceIndependence) && !r1.Violated.Has(spec.ResourceIndependence) {
			independence++
		}
	}
	if independence == 0 {
		t.Error("no design violates resource-independence with two resources only: the second resource adds nothing here")
	}
}
