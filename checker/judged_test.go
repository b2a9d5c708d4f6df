package checker

import (
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestOnTransitionsIsWhatJudgeDecides: spec.OnTransitions, the list a BFS
// proof reports as judged on every transition, is exactly what spec.Judge
// decides: random walks of every built-in variant (the default config,
// every fault) get from Judge every invariant of the list and none outside
// it. A state form added to Judge, or a rule removed, without the list
// following fails here.
func TestOnTransitionsIsWhatJudgeDecides(t *testing.T) {
	var decided spec.Set
	for _, v := range designs.All() {
		m, err := v.Machine(model.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 400; i++ {
			_, judged := RandomRun(m, RunSeed(7, i), 150, 0)
			if extra := judged &^ spec.OnTransitions(); extra != 0 {
				t.Fatalf("%s: Judge decided %v, which OnTransitions leaves out", v.Name, extra.IDs())
			}
			decided |= judged
		}
	}
	if decided != spec.OnTransitions() {
		t.Fatalf("Judge decided %v on the walks, OnTransitions lists %v", decided.IDs(), spec.OnTransitions().IDs())
	}
	if spec.OnTransitions().Has(spec.LinearizableSink) {
		t.Fatal("linearizable-sink listed as judged on transitions")
	}
}
