package checker

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Verdict is what checking one history found.
type Verdict struct {
	// Run is the model's re-execution of the header's trace; nil when the
	// history carries no trace (an external history).
	Run *model.Run
	// Reproduced reports whether the re-execution produced the recorded
	// events exactly; Mismatch says where it did not.
	Reproduced bool
	Mismatch   string
	// Judged holds the invariants the re-execution violated, judged on the
	// model's states (grant identity), up to the first action of the trace
	// that was not enabled; Marks shows where, as violations pointing at
	// the recorded events of the step that violated each. A mark that
	// would point past the first event the re-execution did not reproduce
	// is left out: the file's events there are not the model's.
	Judged spec.Set
	Marks  []spec.Violation
	// Report is the history-level check of the recorded events.
	Report spec.Report
}

// Violated is every invariant found violated, by either check.
func (v *Verdict) Violated() spec.Set {
	s := v.Judged
	for _, x := range v.Report.Violations {
		s |= spec.SetOf(x.Invariant)
	}
	return s
}

// CheckHistory checks a history: always with the history-level invariants
// and porcupine; and when its header carries the model's config and action
// trace, also by re-executing the trace with the design the header names
// (found in cat) and judging every state. An error means the header's
// design, config or trace cannot be read.
func CheckHistory(h *history.History, opt spec.Options, cat []spec.Variant) (Verdict, error) {
	v := Verdict{Report: spec.Check(h, opt)}
	if !h.HasHeader || len(h.Header.Actions) == 0 {
		return v, nil
	}
	m, err := HeaderMachine(h.Header, cat)
	if err != nil {
		return v, err
	}
	acts := make([]model.Action, len(h.Header.Actions))
	for i, s := range h.Header.Actions {
		if acts[i], err = model.ParseAction(s); err == nil {
			err = inBounds(m.Config, acts[i])
		}
		if err != nil {
			return v, fmt.Errorf("header: actions[%d]: %v", i, err)
		}
	}
	var mk marker
	run, judged, err := replay(m, acts, false, mk.visit(acts))
	v.Run, v.Judged = run, judged
	if err != nil {
		v.Mismatch = err.Error()
	} else {
		v.Mismatch = history.Diff(h.Events, run.Events)
		v.Reproduced = v.Mismatch == ""
	}
	// A mark names events by their place in the run: keep those that lie
	// where the run and the file agree.
	agree := history.Agree(h.Events, run.Events)
	for _, x := range mk.marks {
		if slices.ContainsFunc(x.Events, func(e int) bool { return e >= agree }) {
			continue
		}
		v.Marks = append(v.Marks, x)
	}
	return v, nil
}

// inBounds says which process or resource a names that config c has not:
// such an action is no step of the machine, so the trace cannot be its.
func inBounds(c model.Config, a model.Action) error {
	for _, f := range []struct {
		what  string
		n, of int
	}{
		{"w", int(a.Worker), c.Workers}, {"r", int(a.Res), c.Resources}, {"c", int(a.Replica), c.Replicas},
		{"the message's w", int(a.Msg.Worker), c.Workers}, {"the message's r", int(a.Msg.Res), c.Resources},
		{"the message's c", int(a.Msg.Replica), c.Replicas},
	} {
		if f.n >= f.of {
			return fmt.Errorf("%s: %s=%d, but the config has %d (0 to %d)", a, f.what, f.n, f.of, f.of-1)
		}
	}
	return nil
}

// HeaderMachine is the machine a model history's header names: its variant
// looked up in cat, under its config.
func HeaderMachine(h history.Header, cat []spec.Variant) (*model.Machine, error) {
	if len(h.Config) == 0 {
		return nil, fmt.Errorf("header: config: missing: a trace needs the config it ran under")
	}
	cfg, err := model.ParseConfig(h.Config)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		name := te.Field[strings.LastIndex(te.Field, ".")+1:]
		return nil, fmt.Errorf("header: config.%s: want %v, got %s", name, te.Type, te.Value)
	}
	if err != nil {
		return nil, fmt.Errorf("header: config: %v", err)
	}
	v, err := spec.LookupVariant(cat, h.Variant)
	if err != nil {
		return nil, fmt.Errorf("header: variant: %v", err)
	}
	m, err := v.Machine(cfg)
	if err != nil {
		return nil, fmt.Errorf("header: config: %v", err)
	}
	return m, nil
}

// Replay re-executes a trace, judging every step. It stops with an error at
// the first action that is not enabled.
func Replay(m *model.Machine, acts []model.Action) (*model.Run, spec.Set, error) {
	return replay(m, acts, false, nil)
}

// judgedDo applies an enabled action to run and judges the step.
func judgedDo(run *model.Run, a model.Action) (model.Fact, spec.Set) {
	prev := run.State
	f := run.Do(a)
	return f, spec.Judge(run.M, &prev, f, &run.State)
}

// replay re-executes acts, judging every step. An action that is not
// enabled when its turn comes is skipped when lenient, and otherwise ends
// the replay with an error; one whose design's decision fails ends it with
// an error either way. visit, when set, sees every step that ran: the
// run, the step's index in acts, the index of its first event, its fact and
// its verdict.
func replay(m *model.Machine, acts []model.Action, lenient bool,
	visit func(run *model.Run, i, first int, f model.Fact, v spec.Set)) (run *model.Run, judged spec.Set, err error) {
	run = model.NewRun(m)
	at := 0
	defer func() { // a design's decision that failed ends the replay there
		if r := recover(); r != nil {
			err = fmt.Errorf("action %d (%s): %s", at, acts[at], faultOf(r, nil, model.Action{}, false).Cause)
		}
	}()
	for i, a := range acts {
		at = i
		if !m.IsEnabled(&run.State, a) {
			if lenient {
				continue
			}
			return run, judged, fmt.Errorf("action %d (%s) is not enabled", i, a)
		}
		first := len(run.Events)
		f, v := judgedDo(run, a)
		judged |= v
		if visit != nil {
			visit(run, i, first, f, v)
		}
	}
	return run, judged, nil
}

// marker collects, as a replay visits its steps, where each invariant the
// model's states violate first happened: the events of that step, or when
// the step recorded none (the sink accepting a write whose reply is still
// in flight), the last event of the worker involved.
type marker struct {
	seen  spec.Set
	marks []spec.Violation
}

// visit is the replay's visit function for the trace acts.
func (mk *marker) visit(acts []model.Action) func(run *model.Run, i, n int, f model.Fact, v spec.Set) {
	return func(run *model.Run, i, n int, f model.Fact, v spec.Set) {
		if v &^= mk.seen; v == 0 {
			return
		}
		mk.seen |= v
		var evs []int
		for j := n; j < len(run.Events); j++ {
			evs = append(evs, j)
		}
		if len(evs) == 0 {
			who := model.Process(f.Worker)
			for j := n - 1; j >= 0; j-- {
				if run.Events[j].Process == who {
					evs = append(evs, j)
					break
				}
			}
		}
		for _, id := range v.IDs() {
			mk.marks = append(mk.marks, spec.Violation{Invariant: id, Resource: model.ResourceName(f.Res),
				Message: describe(f) + fmt.Sprintf(" (judged on the model's states, step %d: %s)", i, acts[i]),
				Events:  evs})
		}
	}
}

// describe says in words what a step did.
func describe(f model.Fact) string {
	switch f.Kind {
	case model.Granted:
		return fmt.Sprintf("the coordinator issued grant #%d (token=%d) to %s", f.Grant, f.Token, model.Process(f.Worker))
	case model.Reanswered:
		return fmt.Sprintf("the coordinator answered %s's acquire from its record with token=%d, which no grant gave that acquire", model.Process(f.Worker), f.Token)
	case model.GrantSeen:
		return fmt.Sprintf("grant #%d (token=%d) reached %s", f.Grant, f.Token, model.Process(f.Worker))
	case model.Renewed:
		return fmt.Sprintf("the coordinator accepted %s's renew of grant #%d (token=%d)", model.Process(f.Worker), f.Grant, f.Token)
	case model.WriteAccepted:
		return fmt.Sprintf("the sink accepted %s's write from grant #%d (token=%d)", model.Process(f.Worker), f.Grant, f.Token)
	case model.WriteFenced:
		return fmt.Sprintf("the sink fenced %s's write with token=%d, the newest granted", model.Process(f.Worker), f.Token)
	}
	return "a step"
}

// Highlights is what a picture of h marks: the history check's violations,
// and for a model history (one whose header carries a trace) the steps
// where the model's states violated an invariant the history alone does
// not show (its design looked up in cat).
func Highlights(h *history.History, cat []spec.Variant) []spec.Violation {
	v, err := CheckHistory(h, spec.Options{}, cat)
	out := v.Report.Violations
	if err != nil {
		return out
	}
	var shown spec.Set
	for _, x := range out {
		shown |= spec.SetOf(x.Invariant)
	}
	for _, x := range v.Marks {
		if !shown.Has(x.Invariant) {
			out = append(out, x)
		}
	}
	return out
}
