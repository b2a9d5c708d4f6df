package model_test

import (
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestNormalizeIsBisimulation checks ReduceTimers' proof on sampled states
// of every built-in design, with an asynchronous and a partially
// synchronous network: a state s and its cut n enable the same actions (up
// to the ages the cut changes in the messages they name), and each action
// leads from both to states with the same cut, the same fact and the same
// verdicts. Cutting twice changes nothing more.
func TestNormalizeIsBisimulation(t *testing.T) {
	timed := symConfig
	timed.Delay, timed.Pause = 3, 1
	cutAny := 0
	for _, c := range []model.Config{symConfig, timed} {
		for name, m := range variantMachines(t, c) {
			timers := m.Applies(model.ReduceTimers) != 0
			limit := uint8(max(c.TTL, c.Delay))
			cutAct := func(a model.Action) model.Action {
				if timers {
					a.Msg.Age = min(a.Msg.Age, limit)
				}
				return a
			}
			states, _ := sampleStates(m, 3000)
			var acts, nacts []model.Action
			for i := range states {
				s := &states[i]
				n := *s
				m.Normalize(&n, model.Reductions)
				if !timers && n != *s {
					t.Fatalf("%s: Normalize changed a state though timers do not apply", name)
				}
				if n != *s {
					cutAny++
				}
				again := n
				if m.Normalize(&again, model.Reductions); again != n {
					t.Fatalf("%s: Normalize is not idempotent", name)
				}
				acts = m.Enabled(s, acts[:0])
				nacts = m.Enabled(&n, nacts[:0])
				want := map[model.Action]bool{}
				for _, a := range nacts {
					want[a] = true
				}
				got := map[model.Action]bool{}
				for _, a := range acts {
					b := cutAct(a)
					if !want[b] {
						t.Fatalf("%s %+v: %v enabled, %v not enabled in its cut", name, c, a, b)
					}
					got[b] = true
					u, v := *s, n
					f, g := m.Next(&u, &a), m.Next(&v, &b)
					if f != g {
						t.Fatalf("%s %+v: %v: fact %+v, from the cut %+v", name, c, a, f, g)
					}
					if x, y := spec.Judge(m, s, f, &u), spec.Judge(m, &n, g, &v); x != y {
						t.Fatalf("%s %+v: %v: verdict %v, from the cut %v", name, c, a, x.IDs(), y.IDs())
					}
					m.Normalize(&u, model.Reductions)
					m.Normalize(&v, model.Reductions)
					if u != v {
						t.Fatalf("%s %+v: %v leads to states with different cuts", name, c, a)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%s %+v: the cut enables %d actions, the state %d", name, c, len(want), len(got))
				}
			}
		}
	}
	if cutAny == 0 {
		t.Fatal("no sampled state had a timer to cut: the test checks nothing")
	}
	t.Logf("%d sampled states had timers cut", cutAny)
}
