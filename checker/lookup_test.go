package checker

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// plain is what searchPlainly finds.
type plain struct {
	states, trans, subsumed, probes, unreduced uint64
	levels                                     []uint64
	violated                                   spec.Set
	shortest                                   map[string]int    // the shortest counterexample's length per invariant violated
	violations                                 map[string]uint64 // the transitions violating each
}

// searchPlainly is a breadth-first search written for the tests alone,
// the plainest way: a Go map of keys for the visited set, and every lookup
// made when it is needed, one after another, stopping at the first found.
// It follows BFS's order, because what the budgets and ages reductions
// leave out depends on what is stored when a state is expanded: the marks
// of a level's subsumed states against what is stored as it begins; then
// its states in chunks of chunkStates, each chunk's successors decided
// against what is stored and what the chunk kept, the batchChunks chunks
// of a batch against what was stored before the batch, and merged in
// order after it. It counts the lookups of simulating states as it makes
// them: those, and not the lookups of a successor itself, are what BFS
// counts in Probes. Without the budgets and ages reductions its states
// are a plain breadth-first search's, in any order.
func searchPlainly(m *model.Machine, sym model.Symmetry, red model.Reduction, maxDepth int) plain {
	r := plain{shortest: map[string]int{}, violations: map[string]uint64{}}
	canon := m.NewCanon(sym)
	budgets := m.Applies(red)&model.ReduceBudgets != 0
	ages := m.Applies(red)&model.ReduceAges != 0
	seen := map[string]bool{}
	init := m.Init()
	key, orbit := canon.Key(&init, nil)
	seen[string(key)] = true
	level := []string{string(key)}
	r.unreduced, r.levels = uint64(orbit), []uint64{1}
	var kept map[string]bool // the current chunk's successors kept
	// simulated reports whether a state that simulates s (whose key is
	// key), other than s, is kept by the chunk or stored.
	simulated := func(s *model.State, key []byte) bool {
		found := func(k []byte) bool {
			if kept[string(k)] {
				return true
			}
			r.probes++
			return seen[string(k)]
		}
		var y model.State
		return budgets && m.LessSpent(bytes.Clone(key), found) ||
			ages && m.Younger(s, &y, func(y *model.State) bool {
				k, _ := canon.Key(y, nil)
				return found(k)
			})
	}
	var s, t model.State
	for depth := 0; len(level) > 0 && (maxDepth == 0 || depth < maxDepth); depth++ {
		marked := make([]bool, len(level))
		if depth > 0 && (budgets || ages) {
			kept = nil
			for i, k := range level {
				if err := m.Decode([]byte(k), &s); err != nil {
					panic(err)
				}
				if marked[i] = simulated(&s, []byte(k)); marked[i] {
					r.subsumed++
				}
			}
		}
		var next []string
		for batch := 0; batch < len(level); batch += batchChunks * chunkStates {
			type cand struct {
				key   string
				orbit int
			}
			var cands []cand
			for chunk := batch; chunk < min(batch+batchChunks*chunkStates, len(level)); chunk += chunkStates {
				kept = map[string]bool{}
				for i := chunk; i < min(chunk+chunkStates, len(level)); i++ {
					if marked[i] {
						continue
					}
					if err := m.Decode([]byte(level[i]), &s); err != nil {
						panic(err)
					}
					acts := m.Reduced(&s, red, nil)
					for a := range acts {
						t = s
						f := m.Next(&t, &acts[a])
						r.trans++
						if f.Kind != model.NoFact {
							v := spec.Judge(m, &s, f, &t)
							for _, id := range v.IDs() {
								r.violations[id]++
							}
							if v&^r.violated != 0 {
								for _, id := range (v &^ r.violated).IDs() {
									r.shortest[id] = depth + 1
								}
								r.violated |= v
							}
						}
						m.Normalize(&t, red)
						key, orbit := canon.Key(&t, nil)
						if kept[string(key)] || seen[string(key)] || simulated(&t, key) {
							continue
						}
						kept[string(key)] = true
						cands = append(cands, cand{string(key), orbit})
					}
				}
			}
			for _, c := range cands {
				if !seen[c.key] {
					seen[c.key] = true
					next = append(next, c.key)
					r.unreduced += uint64(c.orbit)
				}
			}
		}
		level = next
		r.levels = append(r.levels, uint64(len(next)))
	}
	if len(level) == 0 {
		r.levels = r.levels[:len(r.levels)-1] // BFS lists no empty last level
	}
	r.states = uint64(len(seen))
	return r
}

// TestBFSMatchesPlainSearch compares BFS — its visited set a hash table
// looked up a group at a time (keepNew, simulatedStored), its levels
// expanded by goroutines, exact or hash-compact — with searchPlainly, on
// every built-in design at its own bound with a loss, and on larger bounds
// with every fault kind (levels of many batches), two resources, and each
// simulation reduction alone: the same states, levels, transitions,
// states unexpanded and orbits; the same lookups of simulating states
// counted, so that the omission bound sums the match mass over the
// lookups one after another would make; and, without dead-delivered
// (whose verdicts a second search makes), the same invariants violated at
// the same shortest lengths, each by the same number of transitions.
func TestBFSMatchesPlainSearch(t *testing.T) {
	type tc struct {
		name  string
		c     model.Config
		d     model.Design
		sym   model.Symmetry
		red   model.Reduction
		depth int
	}
	faults := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2,
		Drops: 1, Dups: 1, Crashes: 1, Restarts: 1}
	twoRes := model.Config{Workers: 2, Resources: 2, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2, Drops: 1}
	cases := []tc{
		{"every fault", faults, model.Design{}, model.SymWorkers, model.Reductions, 14},
		{"every fault, no dead-delivered", faults, model.Design{}, model.SymWorkers, model.Reductions &^ model.ReduceDeadDelivered, 14},
		{"every fault, budgets alone", faults, model.Design{}, model.SymWorkers, model.ReduceBudgets, 10},
		{"every fault, ages alone", faults, model.Design{}, model.SymWorkers, model.ReduceAges, 10},
		{"two resources", twoRes, model.Design{}, model.SymWorkers | model.SymResources, model.Reductions, 12},
	}
	if testing.Short() {
		cases = cases[1:2]
		cases[0].depth = 11
	}
	for _, v := range designs.All() {
		c, depth := variantCase(v)
		c.Drops = 1
		cases = append(cases, tc{v.Name, c, v.Design, model.SymWorkers | model.SymResources, model.Reductions &^ model.ReduceDeadDelivered, depth - 3})
	}
	for _, k := range cases {
		m := newMachine(t, k.c, k.d)
		want := searchPlainly(m, k.sym, k.red, k.depth)
		if k.name == "every fault" && slices.Max(want.levels) <= batchChunks*chunkStates {
			t.Fatalf("%s: the widest level is %d states: no level of several batches", k.name, slices.Max(want.levels))
		}
		for _, hc := range []bool{false, true} {
			for _, gor := range []int{1, 2} {
				r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, MaxDepth: k.depth, Symmetry: k.sym,
					Reduce: k.red, HashCompact: hc, Goroutines: gor})
				got := plain{states: r.States, trans: r.Transitions, subsumed: r.Subsumed, probes: r.Probes,
					unreduced: r.Unreduced, levels: r.Levels}
				if k.red&model.ReduceDeadDelivered == 0 {
					got.violated, got.shortest, got.violations = r.Violated, map[string]int{}, r.Violations
					if got.violations == nil {
						got.violations = map[string]uint64{}
					}
					for _, s := range r.Shortest {
						got.shortest[s.Invariant] = s.Length
					}
				} else {
					got.violated, got.shortest, got.violations = want.violated, want.shortest, want.violations
				}
				if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
					t.Fatalf("%s, hash-compact %v, %d goroutines:\n BFS   %s\n plain %s", k.name, hc, gor, g, w)
				}
			}
		}
	}
}
