package checker

import (
	"context"
	"reflect"
	"testing"
)

// TestStoppedSearchProvesItsLevels: a search stopped early — by
// MaxStates at a level's start, cancelled in the middle of a level, in
// exact mode on one goroutine and hash-compact on two, with every
// reduction and the subsumed states marked — reports in Within what a
// search with MaxDepth at the level it stopped in ends with: the same
// states, transitions, states stood for, subsumed states, violations,
// scenes and omission bound. That is what lets explore say what a stopped
// search proves.
func TestStoppedSearchProvesItsLevels(t *testing.T) {
	c := faultsCase(t)
	c.opt.MaxDepth = 0
	whole := BFS(context.Background(), c.m, c.opt)
	depth := widestLevel(t, whole)
	for _, mode := range []struct {
		hc  bool
		gor int
	}{{false, 1}, {true, 2}} {
		opt := c.opt
		opt.HashCompact, opt.Goroutines = mode.hc, mode.gor
		// Cancelled in the middle of the widest level, and stopped by
		// MaxStates as the level after it begins.
		ctx, cancel := context.WithCancel(context.Background())
		cut := opt
		cut.ProgressEvery = 1
		cut.Progress = func(p BFSProgress) {
			if p.Depth == depth && p.Expanded > p.Frontier/2 {
				cancel()
			}
		}
		cancelled := BFS(ctx, c.m, cut)
		cancel()
		capped := opt
		for _, n := range whole.Levels[:depth+2] {
			capped.MaxStates += n
		}
		for _, r := range []struct {
			name  string
			res   BFSResult
			stop  string
			depth int
		}{{"cancelled", cancelled, StopCancelled, depth}, {"max-states", BFS(context.Background(), c.m, capped), StopMaxStates, depth + 1}} {
			what := r.name
			if mode.hc {
				what += ", hash-compact"
			}
			if r.res.Stopped != r.stop || r.res.Within == nil || r.res.Within.Depth != r.depth {
				t.Fatalf("%s: stopped %s, within %+v; want %s within depth %d", what, r.res.Stopped, r.res.Within, r.stop, r.depth)
			}
			if r.stop == StopCancelled && r.res.States <= r.res.Within.States {
				t.Fatalf("%s: stopped with %d states, %d when the level began: not in the middle of it", what, r.res.States, r.res.Within.States)
			}
			bounded := opt
			bounded.MaxDepth = r.depth
			want := BFS(context.Background(), c.m, bounded)
			w := r.res.Within
			if want.Stopped != StopDepth || w.States != want.States || w.Transitions != want.Transitions || w.Unreduced != want.Unreduced ||
				w.Subsumed != want.Subsumed || w.Violated != want.Violated || !reflect.DeepEqual(w.Reached, want.Reached) ||
				w.OmissionBound != want.OmissionBound || (mode.hc && w.OmissionBound == 0) {
				t.Fatalf("%s: within %+v;\nMaxDepth %d: %s %d states, %d transitions, %d unreduced, %d subsumed, %v, %+v, omission %g",
					what, *w, r.depth, want.Stopped, want.States, want.Transitions, want.Unreduced, want.Subsumed,
					want.ViolatedIDs, want.Reached, want.OmissionBound)
			}
		}
	}
	if whole.Within != nil {
		t.Fatalf("a complete search reports within %+v", *whole.Within)
	}
	bounded := c.opt
	bounded.MaxDepth = 3
	if r := BFS(context.Background(), c.m, bounded); r.Within != nil {
		t.Fatalf("a search that met its depth bound reports within %+v", *r.Within)
	}
}
