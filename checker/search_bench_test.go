package checker

import (
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// BenchmarkRandomRunChecked is one run of the randomized search at the
// default config: a 100-action seeded walk judged on every state, and its
// history checked with every invariant and porcupine. runs/s = 1e9 / ns/op.
func BenchmarkRandomRunChecked(b *testing.B) {
	m, err := model.New(model.DefaultConfig(), model.Design{})
	if err != nil {
		b.Fatal(err)
	}
	events := 0
	for i := 0; b.Loop(); i++ {
		run, judged := RandomRun(m, RunSeed(1, i), 100, 0)
		events += len(run.Events)
		if Violations(run, judged)&^spec.SetOf(spec.AbsoluteValidity) != 0 {
			b.Fatal("the reference protocol violated an invariant")
		}
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}

// BenchmarkRandomRunUnchecked is the same walk without the history check:
// the cost of the model and the state invariants alone.
func BenchmarkRandomRunUnchecked(b *testing.B) {
	m, err := model.New(model.DefaultConfig(), model.Design{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		RandomRun(m, RunSeed(1, i), 100, 0)
	}
}
