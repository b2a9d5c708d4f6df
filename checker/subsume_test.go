package checker

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"unsafe"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestSimulatingStatesCoverFullSearch checks ReduceBudgets' and
// ReduceAges' leaving-out against brute force, with no regard to
// verdicts: every state a full breadth-first search reaches within a depth
// must be matched by a state the reduced search stored no deeper that is
// the same state with no more of any fault budget spent, requests no
// older and ghost deadlines no earlier (simulates, below). That is what
// makes the reduced search find every violation as soon (the proofs of
// the two reductions), and it holds of a sound search whether or not the
// bounds have a violation that a missing state would hide: marking a
// level's states as subsumed, or leaving out a successor, with no state
// that simulates it stored fails it where the comparisons of verdicts in
// TestReductionsSound may not (they found a search that marked states
// whose younger copy was not stored as sound as the full one). The
// reduced search's stored states are rebuilt from its path store; the full
// search is a map of model.State values, with no encoding of ours.
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
		r := model.ReduceBudgets | model.ReduceAges
		if m.Applies(r) != r {
			t.Fatalf("%s: budgets and ages do not both apply", k.design)
		}
		full := fullDepths(m, k.depth)

		b := newBFS(m, BFSOptions{Exhaustive: true, MaxDepth: k.depth, Reduce: r})
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
			bySkeleton[skeleton(&s.State)] = append(bySkeleton[skeleton(&s.State)], i)
		}
		exact := 0
		for u, d := range full {
			found := false
			for _, i := range bySkeleton[skeleton(&u)] {
				if s := &stored[i]; s.depth <= d && simulates(&s.State, &u) {
					found = true
					exact += boolInt(s.State == u)
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

// fullDepths returns the states of m within depth bound of the initial one,
// each with its distance from it.
func fullDepths(m *model.Machine, bound int) map[model.State]int {
	depth := map[model.State]int{m.Init(): 0}
	level := []model.State{m.Init()}
	var acts []model.Action
	for d := 1; d <= bound && len(level) > 0; d++ {
		var next []model.State
		for _, s := range level {
			acts = m.Enabled(&s, acts[:0])
			for _, a := range acts {
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

// storedStates rebuilds, from the path store of a finished search with
// no symmetry and no state rewritten (no ReduceTimers), every state it
// stored, in discovery order: each is the successor of its parent by the
// action of its index among the parent's kept actions.
func storedStates(b *bfs) []storedState {
	n := b.paths.n
	out := make([]storedState, n)
	out[0].State = b.m.Init()
	var acts []model.Action
	for i := uint32(1); i < uint32(n); i++ {
		p, a := b.paths.get(i)
		parent := &out[p]
		acts = b.m.Reduced(&parent.State, b.opt.Reduce, acts[:0])
		out[i] = storedState{State: parent.State, depth: parent.depth + 1}
		b.m.Next(&out[i].State, &acts[a])
	}
	return out
}

// skeleton is s with what simulates may lower or raise zeroed: the fault
// budgets spent, the ages of requests and the ghost deadlines a holder may
// count on, the messages sorted again.
func skeleton(s *model.State) model.State {
	k := *s
	k.Drops, k.Dups, k.Crashes, k.Restarts, k.Forged, k.SinkRestarts = 0, 0, 0, 0, 0, 0
	for i := range k.Msgs[:k.NMsgs] {
		k.Msgs[i].Age = 0
	}
	slices.SortFunc(k.Msgs[:k.NMsgs], compareMsgs)
	for c := range k.Coord {
		for r := range k.Coord[c].Wait {
			k.Coord[c].Wait[r].Age = 0
		}
	}
	for r := range k.Ghost {
		for g := range k.Ghost[r].Grant {
			k.Ghost[r].Grant[g].Early = 0
		}
	}
	return k
}

// simulates reports whether v, of u's skeleton, is u with no more of any
// fault budget spent, requests no older (its messages matched to u's with
// the same other fields; waiting acquires) and ghost deadlines no earlier.
func simulates(v, u *model.State) bool {
	if v.Drops > u.Drops || v.Dups > u.Dups || v.Crashes > u.Crashes || v.Restarts > u.Restarts ||
		v.Forged > u.Forged || v.SinkRestarts > u.SinkRestarts {
		return false
	}
	for c := range v.Coord {
		for r := range v.Coord[c].Wait {
			if v.Coord[c].Wait[r].Age > u.Coord[c].Wait[r].Age {
				return false
			}
		}
	}
	for r := range v.Ghost {
		for g := range v.Ghost[r].Grant {
			if v.Ghost[r].Grant[g].Early < u.Ghost[r].Grant[g].Early {
				return false
			}
		}
	}
	// Sorted by their other fields, then by age, equal messages pair the
	// youngest with the youngest: a matching exists exactly when this one
	// makes every age of v no larger.
	vm, um := slices.Clone(v.Msgs[:v.NMsgs]), slices.Clone(u.Msgs[:u.NMsgs])
	byContent := func(p, q model.Msg) int {
		if c := compareMsgs(withAge(p, 0), withAge(q, 0)); c != 0 {
			return c
		}
		return int(p.Age) - int(q.Age)
	}
	slices.SortFunc(vm, byContent)
	slices.SortFunc(um, byContent)
	for i := range vm {
		if vm[i].Age > um[i].Age {
			return false
		}
	}
	return true
}

func withAge(m model.Msg, age uint8) model.Msg {
	m.Age = age
	return m
}

// compareMsgs orders messages by their bytes.
func compareMsgs(p, q model.Msg) int {
	return bytes.Compare(unsafe.Slice((*byte)(unsafe.Pointer(&p)), unsafe.Sizeof(p)),
		unsafe.Slice((*byte)(unsafe.Pointer(&q)), unsafe.Sizeof(q)))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
