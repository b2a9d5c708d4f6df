package viz

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Trace writes a model run as text for a person, like a model checker's
// error trace: numbered steps (runs of clock ticks folded into one line),
// each action in words with the history's names (w1, job-1, coordinator),
// the events it recorded, and each violation named at the step where it
// happens. violations are those of the run's history (spec.Check, and the
// model's marks, as checker.Highlights returns them): one is placed at the
// later of the step that recorded its last event and the step whose
// transition the model first judged violating it.
func Trace(w io.Writer, run *model.Run, violations []spec.Violation) error {
	h := run.History("", 0, nil, "")
	// A violation is shown at its step: the step in a message is not needed.
	placed := make([]spec.Violation, len(violations))
	for i, v := range violations {
		v.Message = atStep.ReplaceAllString(v.Message, ")")
		placed[i] = v
	}
	violations = placed
	s := newScene(h, violations)
	m := run.M

	// Re-execute: which events each step recorded, and where the model
	// first judged each invariant violated.
	re := model.NewRun(m)
	ends := make([]int, len(run.Actions)) // events [ends[i-1], ends[i]) are step i's
	judgedAt := map[string]int{}
	for i, a := range run.Actions {
		prev := re.State
		f := re.Do(a)
		ends[i] = len(re.Events)
		for _, id := range spec.Judge(m, &prev, f, &re.State).IDs() {
			if _, ok := judgedAt[id]; !ok {
				judgedAt[id] = i
			}
		}
	}
	stepOf := func(ev int) int {
		for i, e := range ends {
			if ev < e {
				return i
			}
		}
		return len(ends) - 1
	}
	at := map[int][]int{} // step -> violations
	var unplaced []int
	for vi, v := range violations {
		step := -1
		for _, ev := range v.Events {
			if ev >= 0 && ev < len(h.Events) {
				step = max(step, stepOf(ev))
			}
		}
		if j, ok := judgedAt[v.Invariant]; ok {
			step = max(step, j)
		}
		if step < 0 {
			unplaced = append(unplaced, vi)
			continue
		}
		at[step] = append(at[step], vi)
	}

	var b strings.Builder
	now := int64(0)
	for i := 0; i < len(run.Actions); i++ {
		a := run.Actions[i]
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		if a.Kind == model.Tick {
			j := i // fold a run of ticks that record nothing and violate nothing
			for j+1 < len(run.Actions) && run.Actions[j+1].Kind == model.Tick && ends[j+1] == ends[i] && len(at[j]) == 0 {
				j++
			}
			if n := j - i + 1; n > 1 {
				fmt.Fprintf(&b, "%7s time passes: %d ticks (t=%d → t=%d)\n", fmt.Sprintf("%d-%d.", i+1, j+1), n, now, now+int64(n))
			} else {
				fmt.Fprintf(&b, "%7s time passes (t=%d → t=%d)\n", fmt.Sprintf("%d.", i+1), now, now+1)
			}
			now += int64(j - i + 1)
			s.writeEvents(&b, from, ends[j])
			s.writeViolations(&b, at[j])
			i = j
			continue
		}
		fmt.Fprintf(&b, "%7s %s\n", fmt.Sprintf("%d.", i+1), ActionText(a))
		s.writeEvents(&b, from, ends[i])
		s.writeViolations(&b, at[i])
	}
	if len(unplaced) > 0 {
		b.WriteString("   at no step of the trace:\n")
		s.writeViolations(&b, unplaced)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEvents lists events [from, to) under their step.
func (s *scene) writeEvents(b *strings.Builder, from, to int) {
	for i := from; i < to; i++ {
		fmt.Fprintf(b, "          #%d t=%s %s\n", i, s.at(s.h.Events[i].Time), s.eventText(i))
	}
}

func (s *scene) writeViolations(b *strings.Builder, vis []int) {
	for _, vi := range vis {
		v := s.violations[vi]
		on := ""
		if v.Resource != "" {
			on = " on " + v.Resource
		}
		fmt.Fprintf(b, "        VIOLATED %s%s: %s\n", v.Invariant, on, v.Message)
	}
}

// eventText is one event in words, with the labels of the pictures.
func (s *scene) eventText(i int) string {
	e := s.h.Events[i]
	if k := s.opOf[i]; k >= 0 {
		o := s.ops[k]
		inv := s.h.Events[o.inv]
		if i == o.inv {
			return e.Process + " invokes " + s.invokeLabel(inv)
		}
		return e.Process + " gets " + s.resultLabel(inv, &e)
	}
	return e.Process + ": " + s.faultLabel(e, true)
}

// ActionText is a model action in words, with the history's names (w1,
// job-1, coordinator): "w1 asks coordinator for the lease on job-1". The
// action's text form (Action.String, "acquire w=0 r=0 c=0") is for replay.
func ActionText(a model.Action) string {
	w, r, c := model.Process(a.Worker), model.ResourceName(a.Res), model.CoordinatorName(a.Replica)
	if a.Kind == model.Deliver || a.Kind == model.Drop || a.Kind == model.Duplicate {
		w = model.Process(a.Msg.Worker)
	}
	switch a.Kind {
	case model.Tick:
		return "time passes"
	case model.Acquire:
		return w + " asks " + c + " for the lease on " + r
	case model.Retry:
		return w + " resends its open acquire to " + c
	case model.Renew:
		return w + " asks " + c + " to renew its lease"
	case model.Release:
		return w + " releases its lease with " + c
	case model.Write:
		if a.Hold {
			return w + " decides to send its result and pauses before it leaves (a GC pause between its check and the send)"
		}
		return w + " sends its result to the sink, with its token"
	case model.Forge:
		return w + " writes with a token it made up (" + strconv.Itoa(int(a.Token)) + ")"
	case model.Read:
		return w + " reads the result of " + r
	case model.Timeout:
		return w + " gives up waiting for its operation"
	case model.Deliver:
		switch a.Msg.Kind {
		case model.Commit:
			return "the sink does the second step of " + w + "'s write (token=" + strconv.Itoa(int(a.Msg.Token)) +
				", " + model.ResourceName(a.Msg.Res) + "): it writes the result"
		case model.AdvanceReq:
			return "the sink receives " + msgText(a.Msg)
		case model.AdvanceRep:
			return model.CoordinatorName(a.Msg.Replica) + " receives " + msgText(a.Msg)
		}
		return "the network delivers " + msgText(a.Msg)
	case model.Drop:
		return "the network loses " + msgText(a.Msg)
	case model.Duplicate:
		return "the network duplicates " + msgText(a.Msg)
	case model.Pause:
		return w + " pauses (a GC pause)"
	case model.Resume:
		return w + " resumes, with whatever it had in flight"
	case model.Crash:
		return w + " crashes and restarts as a new incarnation"
	case model.Restart:
		return c + " restarts"
	case model.SinkCrash:
		return "the sink crashes and restarts"
	case model.SetClock:
		return fmt.Sprintf("%s's clock is set %+d ticks off", w, a.Skew)
	}
	return a.String()
}

var replyCodes = map[uint8]string{model.RepOK: "ok", model.RepReplayed: "ok (replayed)", model.RepHeld: "held by another",
	model.RepExpired: "expired", model.RepNotHolder: "not the holder", model.RepFenced: "fenced", model.RepConflict: "conflict"}

// msgText is a message in flight in words.
func msgText(m model.Msg) string {
	w, r, c := model.Process(m.Worker), model.ResourceName(m.Res), model.CoordinatorName(m.Replica)
	tok := "token=" + strconv.Itoa(int(m.Token))
	code := replyCodes[m.Code]
	if code == "" {
		code = "code " + strconv.Itoa(int(m.Code))
	}
	var t string
	switch m.Kind {
	case model.AcquireReq:
		t = w + "'s acquire of " + r + " to " + c
	case model.AcquireRep:
		t = c + "'s reply to " + w + "'s acquire of " + r + ": " + code
		if m.Code == model.RepOK || m.Code == model.RepReplayed {
			t += ", " + tok
		}
	case model.RenewReq:
		t = w + "'s renew (" + tok + ", " + r + ") to " + c
	case model.RenewRep:
		t = c + "'s reply to " + w + "'s renew (" + r + "): " + code
	case model.ReleaseReq:
		t = w + "'s release (" + tok + ", " + r + ") to " + c
	case model.ReleaseRep:
		t = c + "'s reply to " + w + "'s release (" + r + "): " + code
	case model.WriteReq:
		t = w + "'s write (" + tok + ", " + r + ") to the sink"
	case model.WriteRep:
		t = "the sink's reply to " + w + "'s write (" + r + "): " + code
	case model.ReadReq:
		t = w + "'s read of " + r + " to the sink"
	case model.ReadRep:
		t = "the sink's reply to " + w + "'s read of " + r
	case model.Commit:
		t = "the sink's second step of " + w + "'s write (" + tok + ", " + r + "): the result is written"
	case model.AdvanceReq:
		to := "the next fence"
		if m.Token != 0 {
			to = "fence " + strconv.Itoa(int(m.Token))
		}
		t = c + "'s request to advance " + r + "'s fence to " + to
		if m.Req != 0 {
			t += " (advance #" + strconv.Itoa(int(m.Req)) + ")"
		}
	case model.AdvanceRep:
		t = "the sink's answer to " + c + "'s advance #" + strconv.Itoa(int(m.Req)) + " of " + r + ": fence " +
			strconv.Itoa(int(m.Token))
	default:
		return "a message"
	}
	if !m.Live && m.Kind != model.Commit && m.Kind != model.AdvanceReq && m.Kind != model.AdvanceRep {
		t += ", which " + w + " gave up waiting for"
	}
	return t
}

// modelStep finds the model's action text in violation messages and
// errors: "step 12: deliver commit w=0 r=0 ..." and "action 3 (tick) is not
// enabled".
var (
	modelStep   = regexp.MustCompile(`step (\d+): ([a-z]+(?: [a-z0-9=+-]+)*)\)`)
	modelAction = regexp.MustCompile(`action (\d+) \(([a-z]+(?: [a-z0-9=+-]+)*)\)`)
	atStep      = regexp.MustCompile(`, step \d+: [a-z]+(?: [a-z0-9=+-]+)*\)`)
)

// Readable rewrites the model's action text (w=0 r=0, 0-based steps) in a
// message into words with the history's names and the 1-based steps of
// Trace: "step 13: the network delivers the sink's second step of w1's
// write (token=1, job-1)". Text it cannot parse is left as it is.
func Readable(msg string) string {
	rewrite := func(re *regexp.Regexp, format string) {
		msg = re.ReplaceAllStringFunc(msg, func(m string) string {
			sub := re.FindStringSubmatch(m)
			n, err1 := strconv.Atoi(sub[1])
			a, err2 := model.ParseAction(sub[2])
			if err1 != nil || err2 != nil {
				return m
			}
			return fmt.Sprintf(format, n+1, ActionText(a))
		})
	}
	rewrite(modelStep, "step %d: %s)")
	rewrite(modelAction, "step %d (%s)")
	return msg
}

// ReadableViolations is vs with Readable messages (a copy; vs is not
// changed).
func ReadableViolations(vs []spec.Violation) []spec.Violation {
	out := make([]spec.Violation, len(vs))
	for i, v := range vs {
		v.Message = Readable(v.Message)
		out[i] = v
	}
	return out
}
