package model_test

import (
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// impure is, per decision the purity check covers, a design whose decision
// of that name keeps a count of its calls and answers by it: the
// reference's answer on one call, another on the next. Each call of impure
// makes fresh counters.
func impure() map[string]model.Design {
	var n [16]int
	flip := func(i int) bool { n[i]++; return n[i]%2 == 0 }
	return map[string]model.Design{
		"Answers": {Answers: func(d model.Dedup, req model.Msg) uint8 {
			if flip(0) {
				return model.RepHeld
			}
			return model.RefAnswers(d, req)
		}},
		"Valid": {Valid: func(l model.Lease, req model.Msg) bool { return model.RefValid(l, req) != flip(1) }},
		"Deadline": {Deadline: func(l model.Lease, req model.Msg, ttl int) int8 {
			if flip(2) {
				return model.Clamp(ttl + 1)
			}
			return model.RefDeadline(l, req, ttl)
		}},
		"Check": {Check: func(v model.SinkView, w model.Msg) uint8 {
			if flip(3) {
				return model.RepFenced
			}
			return model.RefCheck(v, w)
		}},
		"Accepted": {Accepted: func(v model.SinkView, w model.Msg) (uint8, model.Regs) {
			f, u := model.RefAccepted(v, w)
			if flip(4) {
				u.A++
			}
			return f, u
		}},
		"OnLease": {OnLease: func(e model.LeaseEvent, ru model.Regs, l model.Lease, ttl int) model.Regs {
			ru = model.RefOnLease(e, ru, l, ttl)
			if flip(5) {
				ru.A++
			}
			return ru
		}},
		"Restart": {Restart: func(co model.Coordinator, ttl int) model.Coordinator {
			co = model.RefRestart(co, ttl)
			if flip(6) {
				co.U.A++
			}
			return co
		}},
		"SinkRestart": {SinkRestart: func(s model.Sink) model.Sink {
			if flip(7) {
				s.U[0].A++
			}
			return s
		}},
	}
}

// TestPurityCheck: a design whose own decision keeps something between
// calls makes a step panic with a DesignFault naming the decision and
// saying it is no function of its inputs, whether or not the design
// declares Asymmetric and ReportsTime (which turn the renaming and age
// checks off); a design whose decisions keep nothing (alike, a twin of the
// test above's, and the same decisions declared) runs with no fault.
func TestPurityCheck(t *testing.T) {
	for _, declared := range []bool{false, true} {
		for decision, d := range impure() {
			d.Asymmetric, d.ReportsTime = declared, declared
			m, err := model.New(asymConfig, d)
			if err != nil { // New probes the decisions that may read ages
				if msg := err.Error(); declared || !strings.Contains(msg, decision+" is not a function of its inputs") {
					t.Errorf("%s (declared %v): New: %v", decision, declared, err)
				}
				continue
			}
			f := walk(m, 20000)
			if f == nil || f.Decision != decision {
				t.Fatalf("%s (declared %v): fault %v, want one of %s", decision, declared, f, decision)
			}
			if want := "is not a function of its inputs"; !strings.Contains(f.Detail, want) {
				t.Errorf("%s (declared %v): %q says no %q", decision, declared, f.Detail, want)
			}
		}
	}
	// An impurity New's probes miss (they ask records of request 1 only)
	// is named as one at a step, not taken for a read of the age, which
	// the same step checks after it.
	var n int
	late := model.Design{Answers: func(d model.Dedup, req model.Msg) uint8 {
		if n++; d.Req >= 2 && n%2 == 0 {
			return model.RepHeld
		}
		return model.RefAnswers(d, req)
	}}
	m, err := model.New(asymConfig, late)
	if err != nil {
		t.Fatal(err)
	}
	if f := walk(m, 200000); f == nil || f.Decision != "Answers" || !strings.Contains(f.Detail, "is not a function of its inputs") {
		t.Errorf("an impurity past New's probes: fault %v", f)
	}
	pure := alike
	pure.Asymmetric, pure.ReportsTime = true, true
	m, err = model.New(asymConfig, pure)
	if err != nil {
		t.Fatal(err)
	}
	if f := walk(m, 20000); f != nil {
		t.Fatalf("a design that keeps nothing: %v", f)
	}
}

// walk explores m depth first from its initial state, up to max states,
// and returns the first DesignFault a step raises, or nil.
func walk(m *model.Machine, max int) *model.DesignFault {
	init := m.Init()
	stack := []model.State{init}
	seen := map[model.State]bool{init: true}
	for len(stack) > 0 && len(seen) < max {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		succ, f := successors(m, &s)
		if f != nil {
			return f
		}
		for _, n := range succ {
			if !seen[n] {
				seen[n] = true
				stack = append(stack, n)
			}
		}
	}
	return nil
}
