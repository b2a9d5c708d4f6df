package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestRandomSearchReportsHowFarItGot: a search that ctx ends early is not
// complete and counts the runs it did, not its budget.
func TestRandomSearchReportsHowFarItGot(t *testing.T) {
	m := newMachine(t, model.DefaultConfig(), model.Design{})
	opt := SearchOptions{Seed: 1, Runs: 30, Steps: 20, Stop: spec.SetOf(spec.Fencing)}
	if r := RandomSearch(context.Background(), m, opt); !r.Complete || r.Runs != 30 || r.Budget != 30 || r.Found != nil {
		t.Fatalf("whole budget: %+v", r)
	}
	opt.Shard = Shard{I: 1, N: 4}
	if r := RandomSearch(context.Background(), m, opt); !r.Complete || r.Runs != 8 || r.Budget != 8 {
		t.Fatalf("shard 1/4 of 30 runs: %+v, want 8 runs (1, 5, ..., 29)", r)
	}
	opt.Shard = Shard{}
	ctx, cancel := context.WithCancel(context.Background())
	opt.Progress = func(done int) {
		if done == 5 {
			cancel()
		}
	}
	if r := RandomSearch(ctx, m, opt); r.Complete || r.Runs != 5 || r.Budget != 30 {
		t.Fatalf("cancelled after 5 runs: %+v", r)
	}
}
