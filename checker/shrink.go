package checker

import (
	"slices"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Lenient re-executes a trace, skipping every action that is not enabled
// when its turn comes (the message it delivers was never sent, say). It is
// what shrinking replays: removing an operation's request removes its
// deliveries and reply with it. A step whose design's decision fails (a
// state the run shrunk never reached) ends it there.
func Lenient(m *model.Machine, acts []model.Action) (*model.Run, spec.Set) {
	run, judged, _ := replay(m, acts, true, nil)
	return run, judged
}

// Shows reports whether acts, replayed leniently, violate inv: in their
// history when inHistory, else on their states. Shrinking keeps the
// evidence the original run had, preferring the history's: a counterexample
// whose history shows its violation is one a reader (and explore check) can
// see, not only the model.
func Shows(m *model.Machine, acts []model.Action, inv string, inHistory bool) (*model.Run, bool) {
	run, judged := Lenient(m, acts)
	if inHistory {
		return run, HistoryViolations(run).Has(inv)
	}
	return run, judged.Has(inv)
}

// Shrink minimises a trace that violates inv: it removes chunks of actions
// (delta debugging) and then single actions until removing any one action
// no longer shows the violation (1-minimal). Removing the action that
// starts an operation removes its completion too (see Lenient), so the
// result is 1-minimal in operations as well. The evidence kept is the
// history's when the original run's history shows inv, else the states'
// (see Shows); a violation only the states show is tried once more after
// its shrunk run's messages are delivered (delivered): when the history
// then shows it (the accepted renew's ok has arrived, say), that run is
// shrunk again keeping the history's evidence. It returns the shrunk run.
func Shrink(m *model.Machine, acts []model.Action, inv string) *model.Run {
	run, judged := Lenient(m, acts)
	inHistory := HistoryViolations(run).Has(inv)
	if !inHistory && !judged.Has(inv) {
		return run // not reproducible: nothing to shrink
	}
	run = minimise(m, run, inv, inHistory)
	if !inHistory {
		if ext := delivered(run); ext != nil && HistoryViolations(ext).Has(inv) {
			run = minimise(m, ext, inv, true)
		}
	}
	return run
}

// minimise is Shrink's delta debugging of run, which shows inv (in its
// history when inHistory, else on its states).
func minimise(m *model.Machine, run *model.Run, inv string, inHistory bool) *model.Run {
	acts := run.Actions
	for chunk := len(acts) / 2; chunk >= 1; chunk /= 2 {
		for start := 0; start+chunk <= len(acts); {
			cand := append(append([]model.Action(nil), acts[:start]...), acts[start+chunk:]...)
			if r, ok := Shows(m, cand, inv, inHistory); ok {
				run, acts = r, r.Actions
				continue
			}
			start += chunk
		}
	}
	for changed := true; changed; {
		changed = false
		for i := len(acts) - 1; i >= 0; i-- {
			cand := append(append([]model.Action(nil), acts[:i]...), acts[i+1:]...)
			if r, ok := Shows(m, cand, inv, inHistory); ok {
				run, acts, changed = r, r.Actions, true
				if i > len(acts) {
					i = len(acts)
				}
			}
		}
	}
	return run
}

// delivered is run continued by delivering the messages in flight, the
// first one Enabled offers each time, until none is left: no fault, no
// tick, no new operation. A delivery sends at most the next message of its
// request's short chain (request, the sink's advance and its answer, the
// reply), so this ends; the bound of 64 deliveries is only a guard.
//
// It returns nil if a delivery meets a design's decision that fails.
func delivered(run *model.Run) (ext *model.Run) {
	defer func() {
		if r := recover(); r != nil {
			ext = nil
		}
	}()
	m := run.M
	acts := append([]model.Action(nil), run.Actions...)
	s := run.State
	var buf []model.Action
	for range 64 {
		buf = m.Enabled(&s, buf[:0])
		i := slices.IndexFunc(buf, func(a model.Action) bool { return a.Kind == model.Deliver })
		if i < 0 {
			break
		}
		m.Next(&s, &buf[i])
		acts = append(acts, buf[i])
	}
	ext, _ = Lenient(m, acts)
	return ext
}

// Counterexample turns a shrunk run into a history file whose expect lists
// everything the run violates, so that replaying it is a regression test.
func Counterexample(variant string, seed uint64, run *model.Run, note string) *history.History {
	_, judged := Lenient(run.M, run.Actions)
	violated := Violations(run, judged)
	expect := violated.IDs()
	if expect == nil {
		expect = []string{}
	}
	return run.History(variant, seed, expect, note)
}
