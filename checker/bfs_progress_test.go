package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// TestBFSProgressWithinLevel: no progress report counts more states of a
// level expanded than the level has, also after a split (--shard) cuts the
// level and when levels shrink towards the end of the search.
func TestBFSProgressWithinLevel(t *testing.T) {
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
