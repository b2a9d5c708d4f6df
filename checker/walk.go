// Package checker drives the model: randomized search (with rapid in tests,
// with a seeded generator in the CLI), replay of recorded traces and
// shrinking of counterexamples. Every run's history is checked with the
// invariants of package spec and with porcupine.
package checker

import (
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Chooser returns a number in [0, n), the random source of a walk, or a
// negative number to end the walk there.
type Chooser func(n int) int

// weight biases a walk towards protocol progress: faults are enabled in
// many ways at once, and picked uniformly they would drown the steps that
// make leases change hands.
var weight = [...]int{
	model.Tick: 4, model.Acquire: 3, model.Retry: 1, model.Renew: 2, model.Release: 1, model.Write: 4,
	model.Forge: 1, model.Read: 1, model.Timeout: 1, model.Deliver: 8, model.Drop: 1, model.Duplicate: 1,
	model.Pause: 1, model.Resume: 3, model.Crash: 1, model.Restart: 1, model.SetClock: 1, model.SinkCrash: 1,
}

// weightOf is an action's weight. A two-step write's second step is
// delivered rarely, so that walks often put other steps (a takeover)
// between the two, where the bugs of splitting a write are.
func weightOf(a *model.Action) int {
	if a.Kind == model.Deliver && a.Msg.Kind == model.Commit {
		return 1
	}
	return weight[a.Kind]
}

// pick chooses one of the enabled actions by weight; false when the
// chooser ends the walk.
func pick(acts []model.Action, choose Chooser) (model.Action, bool) {
	total := 0
	for i := range acts {
		total += weightOf(&acts[i])
	}
	n := choose(total)
	if n < 0 {
		return model.Action{}, false
	}
	for i := range acts {
		if n -= weightOf(&acts[i]); n < 0 {
			return acts[i], true
		}
	}
	panic("checker: chooser out of range")
}

// Walk runs m for at most steps actions picked by choose, judging every step
// with spec.Judge. It stops early at the first step that violates an
// invariant in stop. It returns the run and every invariant violated. A
// step whose decision fails panics with a *Fault, the run to it.
func Walk(m *model.Machine, steps int, choose Chooser, stop spec.Set) (*model.Run, spec.Set) {
	run := model.NewRun(m)
	// A run records about one event a step: room for them at once, not
	// by doubling (up to 128: a long walk grows as it goes).
	run.Events = make([]history.Event, 0, min(steps, 128))
	var violated spec.Set
	var buf []model.Action
	var a model.Action
	taking := false // a is being taken (else the next one is being chosen)
	defer func() {  // a design's decision that failed: a *Fault, with the run to it
		if r := recover(); r != nil {
			panic(faultOf(r, trace(run), a, taking))
		}
	}()
	for i := 0; i < steps; i++ {
		buf = m.Enabled(&run.State, buf[:0])
		var ok bool
		if a, ok = pick(buf, choose); !ok {
			break
		}
		taking = true
		_, v := judgedDo(run, a)
		taking = false
		violated |= v
		if v&stop != 0 {
			break
		}
	}
	return run, violated
}
