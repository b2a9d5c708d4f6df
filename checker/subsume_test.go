package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/internal/simulation"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestSimulatingStatesCoverFullSearch checks every reduction, together
// and with symmetry, as a search runs them, against brute force, with no
// regard to verdicts: every state a full breadth-first search without
// reads reaches within a depth, with its clocks cut as ReduceTimers stores
// it (a bisimilar state), must be matched, under some renaming of the
// workers, by a state the reduced search stored no deeper that is the same
// state with no more of any fault budget spent, requests no older, ghost
// deadlines no earlier, fewer dead messages in flight and workers running
// that are paused (simulation.Simulates). The full search leaves reads out
// because ReduceReads strikes whole reads from a run, which no relation
// between two single states expresses; the model's
// TestStrikingReadsIsASimulation checks, by brute force too, that the
// machine without reads simulates the machine with them. Together they
// are what makes the reduced search find every violation as soon (the
// proofs of the reductions), and they hold of a sound search whether or
// not the bounds have a violation that a missing state would hide:
// leaving out a step, marking a level's states as subsumed or leaving out
// a successor with no state that simulates it stored fails this test
// where the comparisons of verdicts in TestReductionsSound may not (they
// found a search that marked states whose younger copy was not stored as
// sound as the full one). The reduced search's stored states are rebuilt
// from its path store; the full search is a map of model.State values,
// with no encoding of ours. (ReduceTimers' cut is checked to be a
// bisimulation by the model's TestNormalizeIsBisimulation.)
func TestSimulatingStatesCoverFullSearch(t *testing.T) {
	for _, k := range []struct {
		design string
		c      model.Config
		depth  int
	}{
		{"reference", model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 2, Grants: 2, InFlight: 2, Drops: 1, Dups: 1}, 11},
		{"renew-at-deadline", model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 2, Grants: 2, InFlight: 2, Drops: 1}, 11},
		{"reference", model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 1, Grants: 2, InFlight: 2, Drops: 1, Crashes: 1, Restarts: 1, Forgeries: 1}, 11},
	} {
		v, err := spec.LookupVariant(designs.All(), k.design)
		if err != nil {
			t.Fatal(err)
		}
		m := newMachine(t, k.c, v.Design)
		r := model.Reductions
		if m.Applies(r) != r {
			t.Fatalf("%s: not every reduction of %s applies", k.design, r)
		}
		full := fullDepthsWithoutReads(m, k.depth)

		b := newBFS(m, BFSOptions{Exhaustive: true, MaxDepth: k.depth, Reduce: r, Symmetry: model.SymWorkers | model.SymResources})
		res := b.run(context.Background())
		if res.Stopped != StopDepth && res.Stopped != StopComplete {
			t.Fatalf("%s: the reduced search stopped: %s", k.design, res.Stopped)
		}
		stored := storedStates(b)
		if uint64(len(stored)) != res.States {
			t.Fatalf("%s: %d states rebuilt, %d stored", k.design, len(stored), res.States)
		}
		bySkeleton := map[model.State][]int{}
		for i, s := range stored {
			bySkeleton[simulation.Skeleton(m, &s.State)] = append(bySkeleton[simulation.Skeleton(m, &s.State)], i)
		}
		perms := workerPerms(k.c.Workers)
		exact := 0
		for u, d := range full {
			m.Normalize(&u, r)
			found := false
			for _, p := range perms {
				pu := m.Permute(&u, &p)
				for _, i := range bySkeleton[simulation.Skeleton(m, &pu)] {
					if s := &stored[i]; s.depth <= d && simulation.Simulates(m, &s.State, &pu) {
						found = true
						exact += boolInt(s.State == pu)
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				t.Fatalf("%s %+v: a state at depth %d of the full search has no state stored no deeper that simulates it", k.design, k.c, d)
			}
		}
		if len(stored) >= len(full) {
			t.Fatalf("%s: %d states stored, %d in the full search: nothing left out", k.design, len(stored), len(full))
		}
		t.Logf("%s %+v to depth %d: %d states, covered by %d stored (%d subsumed); %d of them matched by themselves",
			k.design, k.c, k.depth, len(full), len(stored), res.Subsumed, exact)
	}
}

// fullDepthsWithoutReads returns the states of m within depth bound of the
// initial one by steps other than reads, each with its distance from it.
func fullDepthsWithoutReads(m *model.Machine, bound int) map[model.State]int {
	depth := map[model.State]int{m.Init(): 0}
	level := []model.State{m.Init()}
	var acts []model.Action
	for d := 1; d <= bound && len(level) > 0; d++ {
		var next []model.State
		for _, s := range level {
			acts = m.Enabled(&s, acts[:0])
			for _, a := range acts {
				if a.Kind == model.Read {
					continue
				}
				u := s
				m.Next(&u, &a)
				if _, ok := depth[u]; !ok {
					depth[u] = d
					next = append(next, u)
				}
			}
		}
		level = next
	}
	return depth
}

// storedState is a state a search stored, and its depth.
type storedState struct {
	model.State
	depth int
}

// storedStates rebuilds, from the path store of a finished search, every
// state it stored, in discovery order: each is the successor of its parent
// by the action of its index among the parent's kept actions, cut
// (Normalize) and the representative of its orbit, as the search stores it.
func storedStates(b *bfs) []storedState {
	n := b.paths.n
	out := make([]storedState, n)
	canon := b.m.NewCanon(b.opt.Symmetry)
	init := b.m.Init()
	canon.Canonical(&init, &out[0].State)
	var acts []model.Action
	for i := uint32(1); i < uint32(n); i++ {
		p, a := b.paths.get(i)
		parent := &out[p]
		acts = b.m.Reduced(&parent.State, b.opt.Reduce, acts[:0])
		next := parent.State
		b.m.Next(&next, &acts[a])
		b.m.Normalize(&next, b.opt.Reduce)
		out[i].depth = parent.depth + 1
		canon.Canonical(&next, &out[i].State)
	}
	return out
}

// workerPerms returns every renaming of n workers.
func workerPerms(n int) []model.Perm {
	var out []model.Perm
	var gen func(p model.Perm, k int)
	gen = func(p model.Perm, k int) {
		if k == n {
			out = append(out, p)
			return
		}
		for i := k; i < n; i++ {
			p.W[k], p.W[i] = p.W[i], p.W[k]
			gen(p, k+1)
			p.W[k], p.W[i] = p.W[i], p.W[k]
		}
	}
	gen(model.Identity(), 0)
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
