package checker

import (
	"context"
	"flag"
	"github.com/fencecheck/fencecheck/designs"
	"slices"
	"testing"
	"time"
)

var figures = flag.Int("figures", 0, "measure time to the first counterexample over this many seeds (TestFigures)")

// TestFigures measures, per variant, the search time to the first
// counterexample of its headline invariant and the shrunk length, as the
// median over -figures=N seeds. It only runs when asked.
func TestFigures(t *testing.T) {
	if *figures == 0 {
		t.Skip("run with -figures=N")
	}
	type fig struct {
		after []time.Duration
		runs  []int
		ops   []int
	}
	figs := map[string]*fig{}
	for seed := uint64(1); seed <= uint64(*figures); seed++ {
		opt := DefaultCampaign()
		opt.Seed = seed
		opt.Parallel = 1 // one variant at a time: times are not shared out
		results, err := Campaign(context.Background(), designs.All(), opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			inv := r.Variant.Headline()
			if inv == "" {
				continue
			}
			f := r.Finding(inv)
			if f == nil {
				t.Errorf("seed %d: %s: %s not found", seed, r.Variant.Name, inv)
				continue
			}
			g := figs[r.Variant.Name]
			if g == nil {
				g = &fig{}
				figs[r.Variant.Name] = g
			}
			g.after = append(g.after, f.After)
			g.runs = append(g.runs, f.FirstRun+1)
			g.ops = append(g.ops, len(f.Run.History("", 0, nil, "").Ops()))
		}
	}
	for _, v := range designs.All() {
		g := figs[v.Name]
		if g == nil {
			continue
		}
		slices.Sort(g.after)
		slices.Sort(g.runs)
		slices.Sort(g.ops)
		m := len(g.after) / 2
		t.Logf("%-22s %-22s median %8v (%4d runs) to the first; shrunk to %d ops (min %d, max %d)",
			v.Name, v.Headline(), g.after[m].Round(time.Millisecond), g.runs[m], g.ops[m], g.ops[0], g.ops[len(g.ops)-1])
	}
}
