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

// TestLessSpentSimulates checks ReduceBudgets' proof on sampled states of
// every built-in design: a state v that is a state u with one fault less
// spent (the keys LessSpent gives, decoded) enables every action u does,
// with the same fact and verdicts, to the successor of u with the same
// fault less spent; and LessSpent gives one key per kind of fault spent
// and leaves the key as it was.
func TestLessSpentSimulates(t *testing.T) {
	lower := 0
	for name, m := range variantMachines(t, symConfig) {
		states, _ := sampleStates(m, 3000)
		var acts []model.Action
		for i := range states {
			u := &states[i]
			key := m.Encode(u, nil)
			orig := string(key)
			var vs []model.State
			m.LessSpent(key, func(k []byte) bool {
				var v model.State
				if err := m.Decode(k, &v); err != nil {
					t.Fatalf("%s: a key with less spent does not decode: %v", name, err)
				}
				vs = append(vs, v)
				return false
			})
			if string(key) != orig {
				t.Fatalf("%s: LessSpent changed the key", name)
			}
			spent := 0
			for _, n := range []uint8{u.Drops, u.Dups, u.Crashes, u.Restarts, u.Forged, u.SinkRestarts} {
				if n > 0 {
					spent++
				}
			}
			if len(vs) != spent {
				t.Fatalf("%s: %d keys with less spent, %d kinds of fault spent", name, len(vs), spent)
			}
			acts = m.Enabled(u, acts[:0])
			for _, v := range vs {
				lower++
				for _, a := range acts {
					if !m.IsEnabled(&v, a) {
						t.Fatalf("%s: %v enabled, not with a fault less spent", name, a)
					}
					un, vn := *u, v
					f, g := m.Next(&un, &a), m.Next(&vn, &a)
					if f != g {
						t.Fatalf("%s: %v: fact %+v, with a fault less spent %+v", name, a, f, g)
					}
					if x, y := spec.Judge(m, u, f, &un), spec.Judge(m, &v, g, &vn); x != y {
						t.Fatalf("%s: %v: verdict %v, with a fault less spent %v", name, a, x.IDs(), y.IDs())
					}
					d := vn
					d.Drops, d.Dups, d.Crashes, d.Restarts, d.Forged, d.SinkRestarts = un.Drops, un.Dups, un.Crashes, un.Restarts, un.Forged, un.SinkRestarts
					if d != un || !lessSpent(&vn, &un) {
						t.Fatalf("%s: %v: the successors differ in more than a fault less spent", name, a)
					}
				}
			}
		}
	}
	if lower == 0 {
		t.Fatal("no sampled state had a fault spent: the test checks nothing")
	}
	t.Logf("%d states with a fault less spent checked", lower)
}

// lessSpent reports whether v has spent no more of any fault budget than u,
// and less of one.
func lessSpent(v, u *model.State) bool {
	a := []uint8{v.Drops, v.Dups, v.Crashes, v.Restarts, v.Forged, v.SinkRestarts}
	b := []uint8{u.Drops, u.Dups, u.Crashes, u.Restarts, u.Forged, u.SinkRestarts}
	less := false
	for i := range a {
		if a[i] > b[i] {
			return false
		}
		less = less || a[i] < b[i]
	}
	return less
}
