package model

import "testing"

// TestReductionNames: String and ParseReduction are inverse, and an
// unknown name is an error that lists the known ones.
func TestReductionNames(t *testing.T) {
	for r := Reduction(1); r <= Reductions; r++ {
		got, err := ParseReduction(r.String())
		if err != nil || got != r {
			t.Fatalf("%d %q: parsed %d, %v", r, r.String(), got, err)
		}
	}
	if _, err := ParseReduction("pauses,sleep"); err == nil {
		t.Fatal("unknown reduction accepted")
	}
}

// TestAppliesNeedsAsynchrony: pauses are reduced only with an asynchronous
// network and unbounded pauses, reads only when the design ignores them.
func TestAppliesNeedsAsynchrony(t *testing.T) {
	c := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1}
	m, err := New(c, Design{})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Applies(Reductions); got != Reductions {
		t.Fatalf("reference, asynchronous: %v", got)
	}
	c.Delay = 1
	if m, _ = New(c, Design{}); m.Applies(Reductions)&ReducePauses != 0 {
		t.Fatal("pauses reduced under a bounded delay")
	}
	c.Delay = 0
	m, _ = New(c, Design{OnReply: RefOnReply})
	if m.Applies(Reductions)&ReduceReads != 0 {
		t.Fatal("reads reduced for a design with its own OnReply")
	}
}
