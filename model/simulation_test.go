package model_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/internal/simulation"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// networks are symConfig with an asynchronous network and with a
// partially synchronous one and bounded pauses.
func networks() []model.Config {
	timed := symConfig
	timed.Delay, timed.Pause = 3, 1
	return []model.Config{symConfig, timed}
}

// TestNormalizeIsBisimulation checks ReduceTimers' proof on sampled states
// of every built-in design, with an asynchronous and a partially
// synchronous network: a state s and its cut n enable the same actions (up
// to the ages the cut changes in the messages they name), and each action
// leads from both to states with the same cut, the same fact and the same
// verdicts. Cutting twice changes nothing more.
func TestNormalizeIsBisimulation(t *testing.T) {
	cutAny := 0
	for _, c := range networks() {
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
				m.Normalize(&n, model.ReduceTimers)
				if !timers && n != *s {
					t.Fatalf("%s: Normalize changed a state though timers do not apply", name)
				}
				if n != *s {
					cutAny++
				}
				again := n
				if m.Normalize(&again, model.ReduceTimers); again != n {
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
					m.Normalize(&u, model.ReduceTimers)
					m.Normalize(&v, model.ReduceTimers)
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
			for _, n := range spentOf(u) {
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
					if un, vn := stepAlike(t, m, name, "with a fault less spent", u, &v, a); !lessSpent(&vn, &un) {
						t.Fatalf("%s: %v: the successor with a fault less spent has not spent less", name, a)
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

// TestBudgetsGateOnlyFaults: the fault budgets a state has spent enable
// the budgeted faults and nothing else, which the progress check relies on
// to judge states that differ only in them as one (its continuations take
// no fault). On sampled states of every built-in design, the state with
// nothing spent enables the same other actions, each with the same fact
// and verdict and a successor that differs only in what the state had
// spent, which no such step changes.
func TestBudgetsGateOnlyFaults(t *testing.T) {
	budgeted := map[model.Kind]bool{model.Drop: true, model.Duplicate: true, model.Crash: true, model.Restart: true,
		model.SinkCrash: true, model.Forge: true}
	others := func(m *model.Machine, s *model.State) []model.Action {
		var out []model.Action
		for _, a := range m.Enabled(s, nil) {
			if !budgeted[a.Kind] {
				out = append(out, a)
			}
		}
		return out
	}
	spent := 0
	for name, m := range variantMachines(t, symConfig) {
		states, _ := sampleStates(m, 2000)
		for i := range states {
			u := &states[i]
			z := *u
			z.Drops, z.Dups, z.Crashes, z.Restarts, z.Forged, z.SinkRestarts = 0, 0, 0, 0, 0, 0
			if z == *u {
				continue
			}
			spent++
			acts := others(m, u)
			if !slices.Equal(acts, others(m, &z)) {
				t.Fatalf("%s: with nothing spent the actions other than faults differ", name)
			}
			for _, a := range acts {
				if un, zn := stepAlike(t, m, name, "with nothing spent", u, &z, a); spentOf(&un) != spentOf(u) || spentOf(&zn) != spentOf(&z) {
					t.Fatalf("%s: %v: a step other than a fault changed what was spent", name, a)
				}
			}
		}
	}
	if spent == 0 {
		t.Fatal("no sampled state had a fault spent: the test checks nothing")
	}
	t.Logf("%d states with a fault spent checked", spent)
}

// stepAlike steps a from u and from v, states that differ at most in the
// fault budgets spent (v is u what: "with a fault less spent"), fails the
// test unless the two steps have the same fact and verdict and successors
// that differ at most in those budgets, and returns the successors.
func stepAlike(t *testing.T, m *model.Machine, name, what string, u, v *model.State, a model.Action) (un, vn model.State) {
	t.Helper()
	un, vn = *u, *v
	f, g := m.Next(&un, &a), m.Next(&vn, &a)
	if f != g {
		t.Fatalf("%s: %v: fact %+v, %s %+v", name, a, f, what, g)
	}
	if x, y := spec.Judge(m, u, f, &un), spec.Judge(m, v, g, &vn); x != y {
		t.Fatalf("%s: %v: verdict %v, %s %v", name, a, x.IDs(), what, y.IDs())
	}
	d := vn
	d.Drops, d.Dups, d.Crashes, d.Restarts, d.Forged, d.SinkRestarts = un.Drops, un.Dups, un.Crashes, un.Restarts, un.Forged, un.SinkRestarts
	if d != un {
		t.Fatalf("%s: %v: the successors differ in more than the faults spent, %s", name, a, what)
	}
	return un, vn
}

// spentOf is what s has spent of each fault budget.
func spentOf(s *model.State) [6]uint8 {
	return [6]uint8{s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged, s.SinkRestarts}
}

// lessSpent reports whether v has spent no more of any fault budget than u,
// and less of one.
func lessSpent(v, u *model.State) bool {
	a, b := spentOf(v), spentOf(u)
	less := false
	for i := range a {
		if a[i] > b[i] {
			return false
		}
		less = less || a[i] < b[i]
	}
	return less
}

// TestYoungerSimulates checks ReduceAges' proof on sampled states of every
// built-in design, with an asynchronous and a partially synchronous
// network: each state v that Younger gives for a state u is u with
// requests a tick younger (one, or all together), and v matches every action u takes with an
// action that names the same message or a younger copy of it, with the
// same fact, every verdict u's step has, and a successor that is again u's
// with requests no older and ghost deadlines no earlier (younger, below).
func TestYoungerSimulates(t *testing.T) {
	checked := 0
	for _, c := range networks() {
		for name, m := range variantMachines(t, c) {
			if m.Applies(model.ReduceAges) == 0 {
				continue
			}
			states, _ := sampleStates(m, 1500)
			var uacts, vacts []model.Action
			var scratch model.State
			for i := range states {
				u := &states[i]
				singles, aged := 0, 0
				for j := 0; j < int(u.NMsgs); j++ {
					if u.Msgs[j].Age > 0 {
						aged++
						if j == 0 || u.Msgs[j] != u.Msgs[j-1] {
							singles++
						}
					}
				}
				for _, co := range u.Coord {
					for _, wt := range co.Wait {
						if wt.Worker != 0 && wt.Age > 0 {
							singles++
							aged++
						}
					}
				}
				if aged >= 2 {
					singles++ // and every request a tick younger together
				}
				var vs []model.State
				m.Younger(u, &scratch, func(v *model.State) bool {
					vs = append(vs, *v)
					return false
				})
				if len(vs) != singles {
					t.Fatalf("%s: %d younger states, want %d (%d requests with an age)", name, len(vs), singles, aged)
				}
				uacts = m.Enabled(u, uacts[:0])
				for _, v := range vs {
					if v == *u || !younger(m, &v, u) {
						t.Fatalf("%s: a state Younger gave is not the state with a younger request", name)
					}
					checked++
					vacts = m.Enabled(&v, vacts[:0])
					for _, a := range uacts {
						if !matched(m, u, &v, a, vacts) {
							t.Fatalf("%s %+v: %v: no action of the younger state matches it", name, c, a)
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no sampled state had a request with an age: the test checks nothing")
	}
	t.Logf("%d younger states checked", checked)
}

// matched reports whether an action of v (one of acts: a itself, or a
// naming a younger copy of a's message) leads, with a's fact and every
// verdict a has from u, to a state that is again younger than u's
// successor, both stored as a search stores them (Normalize).
func matched(m *model.Machine, u, v *model.State, a model.Action, acts []model.Action) bool {
	un := *u
	f := m.Next(&un, &a)
	verdict := spec.Judge(m, u, f, &un)
	m.Normalize(&un, model.Reductions)
	for _, b := range acts {
		same := b
		if same.Msg.Age = a.Msg.Age; same != a || b.Msg.Age > a.Msg.Age {
			continue
		}
		vn := *v
		g := m.Next(&vn, &b)
		if g != f || spec.Judge(m, v, g, &vn)&verdict != verdict {
			continue
		}
		if m.Normalize(&vn, model.Reductions); younger(m, &vn, &un) {
			return true
		}
	}
	return false
}

// younger reports whether v is u with requests no older (messages in flight
// matched by their other fields, waiting acquires) and ghost deadlines a
// holder may count on no earlier, and nothing else different: a state that
// simulates u with the same budgets spent, workers paused and messages in
// flight.
func younger(m *model.Machine, v, u *model.State) bool {
	return simulation.Simulates(m, v, u) && v.NMsgs == u.NMsgs &&
		v.Drops == u.Drops && v.Dups == u.Dups && v.Crashes == u.Crashes && v.Restarts == u.Restarts &&
		v.Forged == u.Forged && v.SinkRestarts == u.SinkRestarts && pauses(v) == pauses(u)
}

// pauses is which workers are paused.
func pauses(s *model.State) (p [model.MaxWorkers]bool) {
	for w := range s.Workers {
		p[w] = s.Workers[w].Paused
	}
	return p
}

// TestDeadDeliveredReachesASimulatingState checks ReduceDeadDelivered's
// proof on sampled states of every built-in design, with an asynchronous
// and a partially synchronous network: the normal form n of a state s
// leaves no dead message it could deliver (simulation's Dead, written
// apart from the model's), is the state that delivering them from s
// reaches, one by one, each with no fact and no event, and simulates s one
// step on: every action of s is an erased message's delivery, loss or
// duplication, whose successor n simulates, or an action of n with the
// same fact and verdicts to a successor whose normal form simulates that
// of s's successor. TestDeadStaysDead checks that a dead message is
// dead for good.
func TestDeadDeliveredReachesASimulatingState(t *testing.T) {
	erased := 0
	for _, c := range networks() {
		for name, m := range variantMachines(t, c) {
			norm := func(s model.State) model.State {
				m.Normalize(&s, model.ReduceDeadDelivered)
				return s
			}
			states, _ := sampleStates(m, 3000)
			var acts []model.Action
			for i := range states {
				s := &states[i]
				n := norm(*s)
				if again := norm(n); again != n {
					t.Fatalf("%s: Normalize is not idempotent", name)
				}
				if n != *s {
					erased++
				}
				// Deliver the dead replies one by one: the walk ends at n.
				u := *s
				for {
					acts = m.Enabled(&u, acts[:0])
					i := slices.IndexFunc(acts, func(a model.Action) bool { return a.Kind == model.Deliver && simulation.Dead(m, &u, a.Msg) })
					if i < 0 {
						break
					}
					events, f := m.Step(&u, acts[i], nil)
					if f.Kind != model.NoFact || len(events) > 0 {
						t.Fatalf("%s %+v: %v has fact %+v and %d events", name, c, acts[i], f, len(events))
					}
				}
				if u != n {
					t.Fatalf("%s %+v: delivering the dead replies does not reach the normal form", name, c)
				}
				if !simulation.Simulates(m, &n, s) {
					t.Fatalf("%s %+v: the normal form does not simulate the state", name, c)
				}
				acts = m.Enabled(s, acts[:0])
				nacts := m.Enabled(&n, nil)
				for _, a := range acts {
					v := *s
					f := m.Next(&v, &a)
					vn := norm(v)
					if slices.Contains(nacts, a) {
						w := n
						g := m.Next(&w, &a)
						if g != f || spec.Judge(m, &n, g, &w) != spec.Judge(m, s, f, &v) {
							t.Fatalf("%s %+v: %v: fact or verdict differs from the normal form", name, c, a)
						}
						if wn := norm(w); !simulation.Simulates(m, &wn, &vn) {
							t.Fatalf("%s %+v: %v: the successors' normal forms are not related", name, c, a)
						}
						continue
					}
					if !simulation.Dead(m, s, a.Msg) || a.Kind != model.Deliver && a.Kind != model.Drop && a.Kind != model.Duplicate {
						t.Fatalf("%s %+v: %v is enabled, not in the normal form", name, c, a)
					}
					if f.Kind != model.NoFact || !simulation.Simulates(m, &n, &vn) {
						t.Fatalf("%s %+v: %v of an erased reply is not matched by no step", name, c, a)
					}
				}
			}
		}
	}
	if erased == 0 {
		t.Fatal("no sampled state had a dead reply to deliver: the test checks nothing")
	}
	t.Logf("%d sampled states had dead replies delivered", erased)
}

// TestDeadStaysDead checks, on sampled states of every built-in design
// with an asynchronous and a partially synchronous network, that a dead
// message (simulation's Dead) is dead for good (deadStaysDead). It also
// checks that the check can fail: claiming dead an answer the coordinator
// waits for, or a request the sink has applied whose answer it waits for,
// fails it; and that it holds for a design whose restarts try to forget
// the numbers of advances, which the framework keeps (TestRestartKeepsAdvanceNumbers).
func TestDeadStaysDead(t *testing.T) {
	checked := map[uint8]int{}
	for _, c := range networks() {
		for name, m := range variantMachines(t, c) {
			if err := deadStaysDead(m, deadIn(m), 3000, checked); err != nil {
				t.Fatalf("%s %+v: %v", name, c, err)
			}
		}
	}
	for _, kind := range []uint8{model.AcquireRep, model.AdvanceReq, model.AdvanceRep} {
		if checked[kind] == 0 {
			t.Fatalf("no sampled state had a dead message of kind %d: the test checks too little", kind)
		}
	}
	t.Logf("dead messages checked, by kind: %v", checked)

	m, err := model.New(symConfig, forgetful)
	if err != nil {
		t.Fatal(err)
	}
	if err := deadStaysDead(m, deadIn(m), 30000, map[uint8]int{}); err != nil {
		t.Fatalf("restarts that try to forget the numbers of advances: %v", err)
	}
	ref, err := model.New(symConfig, model.Design{})
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []struct {
		name string
		dead func(s *model.State, msg model.Msg) bool
	}{
		{"an answer whether or not it is waited for", func(s *model.State, msg model.Msg) bool {
			return simulation.Dead(ref, s, msg) || msg.Kind == model.AdvanceRep && msg.Req <= s.Coord[msg.Replica].AdvSeq[msg.Res]
		}},
		{"a request the sink applied last whether or not its answer is waited for", func(s *model.State, msg model.Msg) bool {
			return simulation.Dead(ref, s, msg) || msg.Kind == model.AdvanceReq && msg.Req > 0 && msg.Req <= s.Sink.AdvSeq[msg.Replica][msg.Res]
		}},
	} {
		if err := deadStaysDead(ref, claim.dead, 30000, map[uint8]int{}); err == nil {
			t.Errorf("claiming dead %s: no message found alive", claim.name)
		} else {
			t.Logf("claiming dead %s: %v", claim.name, err)
		}
	}
}

// forgetful is the reference with restarts that forget the numbers of
// advances, and the coordinator's counters, the sink its fences.
var forgetful = model.Design{
	Restart: func(co model.Coordinator, ttl int) model.Coordinator {
		co = model.RefRestart(co, ttl)
		co.AdvSeq, co.Counter = [model.MaxResources]uint8{}, [model.MaxResources]uint8{}
		return co
	},
	SinkRestart: func(s model.Sink) model.Sink {
		s.AdvSeq, s.AdvFence = [model.MaxReplicas][model.MaxResources]uint8{}, [model.MaxReplicas][model.MaxResources]uint8{}
		s.Fence = [model.MaxResources]uint8{}
		return s
	},
}

// TestRestartKeepsAdvanceNumbers checks that the numbers of advances, the
// coordinator's and the sink's record of them, survive a restart whatever
// the design's Restart and SinkRestart return, while the rest of what they
// decide applies: on every sampled state of forgetful where a restart is
// enabled with an advance numbered.
func TestRestartKeepsAdvanceNumbers(t *testing.T) {
	m, err := model.New(symConfig, forgetful)
	if err != nil {
		t.Fatal(err)
	}
	states, _ := sampleStates(m, 30000)
	var acts []model.Action
	seen := map[model.Kind]int{}
	for i := range states {
		s := &states[i]
		acts = m.Enabled(s, acts[:0])
		for _, a := range acts {
			if a.Kind != model.Restart && a.Kind != model.SinkCrash {
				continue
			}
			v := *s
			m.Step(&v, a, nil)
			if a.Kind == model.Restart {
				before, after := &s.Coord[a.Replica], &v.Coord[a.Replica]
				if after.AdvSeq != before.AdvSeq || after.Counter != ([model.MaxResources]uint8{}) {
					t.Fatalf("restart of replica %d: AdvSeq %v -> %v, counters %v -> %v; want the numbers kept, the counters lost",
						a.Replica, before.AdvSeq, after.AdvSeq, before.Counter, after.Counter)
				}
				if before.AdvSeq != ([model.MaxResources]uint8{}) {
					seen[a.Kind]++
				}
			} else {
				if v.Sink.AdvSeq != s.Sink.AdvSeq || v.Sink.AdvFence != s.Sink.AdvFence || v.Sink.Fence != ([model.MaxResources]uint8{}) {
					t.Fatalf("sink restart: AdvSeq %v -> %v, AdvFence %v -> %v, fences %v -> %v; want the record kept, the fences lost",
						s.Sink.AdvSeq, v.Sink.AdvSeq, s.Sink.AdvFence, v.Sink.AdvFence, s.Sink.Fence, v.Sink.Fence)
				}
				if s.Sink.AdvSeq != ([model.MaxReplicas][model.MaxResources]uint8{}) {
					seen[a.Kind]++
				}
			}
		}
	}
	if seen[model.Restart] == 0 || seen[model.SinkCrash] == 0 {
		t.Fatalf("restarts checked with an advance numbered: %v; the test checks too little", seen)
	}
	t.Logf("restarts checked with an advance numbered, by kind: %v", seen)
}

// deadIn is simulation.Dead for m's states.
func deadIn(m *model.Machine) func(*model.State, model.Msg) bool {
	return func(s *model.State, msg model.Msg) bool { return simulation.Dead(m, s, msg) }
}

// deadStaysDead checks that every message dead (by dead) in n states
// sampled from m's runs is dead for good, by induction over the steps:
// delivering it changes nothing but the network (no fact, no event, the
// state with that message taken out and dead messages added: takenOut),
// and after every step each message of the same content (but its age) is
// still dead. It counts the dead messages checked by kind.
func deadStaysDead(m *model.Machine, dead func(*model.State, model.Msg) bool, n int, checked map[uint8]int) error {
	sameContent := func(p, q model.Msg) bool {
		p.Age, q.Age = 0, 0
		return p == q
	}
	states, _ := sampleStates(m, n)
	var acts []model.Action
	for i := range states {
		s := &states[i]
		acts = m.Enabled(s, acts[:0])
		for j, msg := range s.Msgs[:s.NMsgs] {
			if !dead(s, msg) {
				continue
			}
			checked[msg.Kind]++
			if k := slices.IndexFunc(acts, func(a model.Action) bool { return a.Kind == model.Deliver && a.Msg == msg }); k >= 0 {
				v := *s
				events, f := m.Step(&v, acts[k], nil)
				if f.Kind != model.NoFact || len(events) > 0 || !takenOut(dead, s, j, &v) {
					return fmt.Errorf("delivering dead %+v does more than take it out (and send dead messages)", msg)
				}
			}
			for _, a := range acts {
				v := *s
				m.Next(&v, &a)
				for _, after := range v.Msgs[:v.NMsgs] {
					if sameContent(after, msg) && !dead(&v, after) {
						return fmt.Errorf("dead %+v is not dead after %v", msg, a)
					}
				}
			}
		}
	}
	return nil
}

// takenOut reports whether v is s with its message i taken out and
// messages dead in v added, and nothing else different.
func takenOut(dead func(*model.State, model.Msg) bool, s *model.State, i int, v *model.State) bool {
	left := slices.Delete(slices.Clone(s.Msgs[:s.NMsgs]), i, i+1)
	for _, msg := range v.Msgs[:v.NMsgs] {
		if k := slices.Index(left, msg); k >= 0 {
			left = slices.Delete(left, k, k+1)
		} else if !dead(v, msg) {
			return false
		}
	}
	a, b := *s, *v
	a.Msgs, a.NMsgs, b.Msgs, b.NMsgs = [model.MaxMsgs]model.Msg{}, 0, [model.MaxMsgs]model.Msg{}, 0
	return len(left) == 0 && a == b
}
