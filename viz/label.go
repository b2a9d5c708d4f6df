package viz

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fencecheck/fencecheck/history"
)

// The labels below are shared by both pictures: short, and built from the
// event fields only.

// resourceSuffix names the resource when the history has several.
func (s *scene) resourceSuffix(e history.Event) string {
	if s.multiRes && e.Resource != "" {
		return " @" + e.Resource
	}
	return ""
}

// invokeLabel describes an invocation: the operation and its arguments.
func (s *scene) invokeLabel(e history.Event) string {
	v := e.Value
	var b strings.Builder
	b.WriteString(e.F)
	switch e.F {
	case history.Acquire:
		b.WriteString(" ttl=" + s.at(v.TTL))
		if v.Incarnation != "" {
			b.WriteString(" inc=" + v.Incarnation)
		}
		if v.RequestID != "" {
			b.WriteString(" req=" + v.RequestID)
		}
	case history.Renew, history.Release:
		b.WriteString(" token=" + itoa(v.Token))
		if v.Incarnation != "" {
			b.WriteString(" inc=" + v.Incarnation)
		}
		if v.TTL > 0 {
			b.WriteString(" ttl=" + s.at(v.TTL))
		}
	case history.Write:
		b.WriteString(" token=" + itoa(v.Token) + " id=" + v.ResultID + " " + strconv.Quote(v.Payload))
	case history.Read:
		b.WriteString(" id=" + v.ResultID)
	}
	b.WriteString(s.resourceSuffix(e))
	return b.String()
}

// outcome is the short result of an op: "token=2", "written", "fenced", "?".
func outcome(inv history.Event, comp *history.Event) string {
	if comp == nil {
		return "… open"
	}
	v := comp.Value
	switch comp.Type {
	case history.Fail:
		return v.Error
	case history.Info:
		return "? (info)"
	}
	switch inv.F {
	case history.Acquire:
		return "token=" + itoa(v.Token)
	case history.Advance:
		return "fence=" + itoa(v.Token)
	case history.Write:
		return v.Outcome
	case history.Read:
		if !v.HasPayload {
			return "null"
		}
		return strconv.Quote(v.Payload)
	}
	return "ok"
}

// resultLabel describes a completed (or open) op on its caller's lane:
// "acquire → token=2", "write token=1 → fenced", "advance fence→2".
func (s *scene) resultLabel(inv history.Event, comp *history.Event) string {
	head := inv.F
	switch inv.F {
	case history.Renew, history.Release, history.Write:
		head += " token=" + itoa(inv.Value.Token)
	case history.Read:
		head += " id=" + inv.Value.ResultID
	case history.Advance:
		if comp != nil && comp.Type == history.OK {
			return "advance fence→" + itoa(comp.Value.Token) + s.resourceSuffix(inv)
		}
	}
	return head + " → " + outcome(inv, comp) + s.resourceSuffix(inv)
}

// serverLabel describes a completed op on the lane that served it: the
// coordinator's grant, the sink's fence or verdict on a write.
func (s *scene) serverLabel(inv history.Event, comp *history.Event) string {
	who := inv.Process
	res := s.resourceSuffix(inv)
	out := outcome(inv, comp)
	ok := comp != nil && comp.Type == history.OK
	switch inv.F {
	case history.Acquire:
		if ok {
			return "grant token=" + itoa(comp.Value.Token) + " → " + who + res
		}
		return "acquire " + who + ": " + out + res
	case history.Renew, history.Release:
		return inv.F + " " + who + " token=" + itoa(inv.Value.Token) + ": " + out + res
	case history.Advance:
		if ok {
			return "fence→" + itoa(comp.Value.Token) + res
		}
		return "advance: " + out + res
	case history.Write:
		return "token=" + itoa(inv.Value.Token) + " " + out + res
	case history.Read:
		return "read " + inv.Value.ResultID + " → " + out + res
	}
	return inv.F + ": " + out + res
}

// faultLabel describes a fault event; withTarget adds the process a
// nemesis fault names.
func (s *scene) faultLabel(e history.Event, withTarget bool) string {
	l := e.F
	switch e.F {
	case history.Drop:
		l = "drop (lost message)"
	case history.Clock:
		l = "clock " + s.at(e.Value.Offset)
		if e.Value.Offset >= 0 {
			l = "clock +" + s.at(e.Value.Offset)
		}
	case history.Apply:
		v := &e.Value
		l = fmt.Sprintf("applies %s's write token=%d: %s", v.Writer, v.Token, v.Outcome+v.Error)
		if v.HasFence {
			l += fmt.Sprintf(" (fence %d)", v.Fence)
		}
	}
	if withTarget && e.Process == history.Nemesis && e.Value.Target != "" {
		l += " " + e.Value.Target
	}
	return l
}
