package checker

import (
	"context"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/model"
)

// TestBFSProgressWithinLevel: no progress report counts more states of a
// level expanded than the level has, also after a split (--shard) cuts the
// level and when levels shrink towards the end of the search; a level's
// states are all marked (checked for subsumption) before one is expanded,
// and the marking is reported as it goes.
func TestBFSProgressWithinLevel(t *testing.T) {
	c := faultsCase(t)
	opt := c.opt
	opt.MaxDepth = 0 // to the levels that shrink
	var marking, expanding int
	opt.ProgressEvery = time.Nanosecond
	opt.Progress = func(p BFSProgress) {
		switch {
		case p.Marked > p.Frontier || p.Expanded > 0 && p.Marked < p.Frontier:
			t.Errorf("depth %d: %d of a level of %d marked, %d expanded", p.Depth, p.Marked, p.Frontier, p.Expanded)
		case p.Marked < p.Frontier:
			marking++
		default:
			expanding++
		}
	}
	if r := BFS(context.Background(), c.m, opt); r.Subsumed == 0 || marking == 0 || expanding == 0 {
		t.Errorf("%d subsumed; %d reports while marking, %d after", r.Subsumed, marking, expanding)
	}
	// Cancelled while it marks a level, the search stops marking within a
	// chunk per goroutine, incomplete, and expands none of the level.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	depth, at := -1, uint64(0)
	opt.Progress = func(p BFSProgress) {
		switch {
		case depth < 0 && p.Depth > 10 && p.Marked > 0 && p.Marked < p.Frontier:
			depth, at = p.Depth, p.Marked
			cancel()
		case depth >= 0 && (p.Expanded > 0 || p.Marked > at+2*chunkStates):
			t.Errorf("depth %d: %d states marked, %d expanded after the search was cancelled with %d of depth %d marked",
				p.Depth, p.Marked, p.Expanded, at, depth)
		}
	}
	if r := BFS(ctx, c.m, opt); depth < 0 || r.Stopped != StopCancelled || r.MaxDepth != depth {
		t.Errorf("cancelled while marking depth %d: %s at depth %d", depth, r.Stopped, r.MaxDepth)
	}
	m := newMachine(t, model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1}, model.Design{})
	for _, sh := range []Shard{{}, {I: 1, N: 3, Depth: 3}} {
		var calls int
		r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Shard: sh, Progress: func(p BFSProgress) {
			calls++
			if p.Expanded > p.Frontier {
				t.Errorf("shard %+v: depth %d: %d of a level of %d expanded", sh, p.Depth, p.Expanded, p.Frontier)
			}
		}})
		if !r.Complete || calls < 3 {
			t.Fatalf("shard %+v: %s after %d progress calls", sh, r.Stopped, calls)
		}
	}
}
