package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of an action.
type Kind uint8

// The actions. Worker actions start an operation by sending a request; the
// network delivers, loses or duplicates messages; the nemesis pauses,
// crashes and restarts processes and skews clocks; Tick moves the
// coordinator's clock.
const (
	Tick      Kind = iota
	Acquire        // Worker asks Replica for the lease on Res
	Retry          // Worker resends its open acquire, same request id, to Replica
	Renew          // Worker renews its lease with Replica
	Release        // Worker releases its lease with Replica
	Write          // Worker commits its result to the sink with its token
	Forge          // Worker writes with a token it made up (Token)
	Read           // Worker reads the result of Res
	Timeout        // Worker gives up waiting: its operation ends as info
	Deliver        // the network delivers Msg
	Drop           // the network loses Msg
	Duplicate      // the network duplicates Msg
	Pause          // Worker stops taking steps (a GC pause)
	Resume         // Worker runs again, with whatever it had in flight
	Crash          // Worker crashes and restarts as a new incarnation
	Restart        // coordinator Replica restarts
	SetClock       // Worker's clock offset becomes Skew
	SinkCrash      // the sink crashes and restarts
	numKinds
)

var kindNames = [numKinds]string{"tick", "acquire", "retry", "renew", "release", "write", "forge",
	"read", "timeout", "deliver", "drop", "duplicate", "pause", "resume", "crash", "restart", "clock", "sink-crash"}

// String gives the kind's name in an action's text form ("tick",
// "deliver", ...).
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Action is one step the system can take. Messages are named by content, not
// position, so that an action stays meaningful when earlier actions of a
// trace are removed (shrinking).
type Action struct {
	Kind    Kind
	Worker  uint8
	Res     uint8
	Replica uint8
	Skew    int8
	Token   uint8 // Forge: the made-up token
	// Hold (Write): the worker pauses after deciding to write, before the
	// request leaves (Worker.Holding); text form "write w=N held".
	Hold bool
	Msg  Msg
}

var msgKindNames = [...]string{"", "acquire-req", "acquire-rep", "renew-req", "renew-rep",
	"release-req", "release-rep", "write-req", "write-rep", "read-req", "read-rep", "commit", "advance-req",
	"advance-rep"}

// msgFields lists a message's fields for its text form.
func msgFields(m *Msg) []struct {
	name string
	p    *uint8
} {
	return []struct {
		name string
		p    *uint8
	}{{"w", &m.Worker}, {"r", &m.Res}, {"c", &m.Replica}, {"inc", &m.Inc}, {"tok", &m.Token},
		{"req", &m.Req}, {"key", &m.Key}, {"g", &m.Grant}, {"code", &m.Code}, {"pw", &m.PW}, {"pt", &m.PT},
		{"age", &m.Age}, {"u", &m.U}}
}

// String gives the action's text form, as recorded in history headers.
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(a.Kind.String())
	switch a.Kind {
	case Acquire, Read:
		fmt.Fprintf(&b, " w=%d r=%d", a.Worker, a.Res)
	case Retry, Renew, Release:
		fmt.Fprintf(&b, " w=%d", a.Worker)
	case Write, Timeout, Pause, Resume, Crash:
		fmt.Fprintf(&b, " w=%d", a.Worker)
		if a.Hold {
			b.WriteString(" held")
		}
	case Forge:
		fmt.Fprintf(&b, " w=%d tok=%d", a.Worker, a.Token)
	case SetClock:
		fmt.Fprintf(&b, " w=%d skew=%d", a.Worker, a.Skew)
	case Deliver, Drop, Duplicate:
		m := a.Msg
		b.WriteString(" " + msgKindNames[m.Kind])
		for i, f := range msgFields(&m) {
			if *f.p != 0 || i < 2 { // worker and resource always: scripts match on them
				fmt.Fprintf(&b, " %s=%d", f.name, *f.p)
			}
		}
		if m.Skew != 0 {
			fmt.Fprintf(&b, " skew=%d", m.Skew)
		}
		if m.Live {
			b.WriteString(" live")
		}
	}
	switch a.Kind {
	case Acquire, Retry, Renew, Release, Restart:
		fmt.Fprintf(&b, " c=%d", a.Replica)
	}
	return b.String()
}

// ParseAction reads an action's text form, as String writes it: a field
// the action does not have, or one given twice, is an error (taken, it
// changed nothing, and a replay blamed a step that reads as fine).
func ParseAction(s string) (Action, error) {
	a, err := parseAction(s)
	if err != nil {
		return Action{}, err
	}
	if canon := a.String(); canon != strings.Join(strings.Fields(s), " ") {
		return Action{}, fmt.Errorf("%q: not an action's text (a field %s does not have, or one given twice or out of order): as one, it reads %q", s, a.Kind, canon)
	}
	return a, nil
}

func parseAction(s string) (Action, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return Action{}, fmt.Errorf("empty action")
	}
	var a Action
	found := false
	for k, name := range kindNames {
		if name == words[0] {
			a.Kind, found = Kind(k), true
		}
	}
	if !found {
		return Action{}, fmt.Errorf("unknown action %q", words[0])
	}
	words = words[1:]
	if a.Kind == Deliver || a.Kind == Drop || a.Kind == Duplicate {
		if len(words) == 0 {
			return Action{}, fmt.Errorf("%s: missing message kind", a.Kind)
		}
		for k, name := range msgKindNames {
			if name != "" && name == words[0] {
				a.Msg.Kind = uint8(k)
			}
		}
		if a.Msg.Kind == MsgNone {
			return Action{}, fmt.Errorf("%s: unknown message kind %q", a.Kind, words[0])
		}
		words = words[1:]
	}
	for _, w := range words {
		switch {
		case w == "live" && (a.Kind == Deliver || a.Kind == Drop || a.Kind == Duplicate):
			a.Msg.Live = true
			continue
		case w == "held" && a.Kind == Write:
			a.Hold = true
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return Action{}, fmt.Errorf("%s: %q is not key=value", a.Kind, w)
		}
		n, err := strconv.ParseInt(v, 10, 16)
		if err != nil {
			return Action{}, fmt.Errorf("%s: %s=%s: not a whole number in the field's range", a.Kind, k, v)
		}
		if err := a.set(k, n); err != nil {
			return Action{}, err
		}
	}
	return a, nil
}

func (a *Action) set(k string, n int64) error {
	msg := a.Kind == Deliver || a.Kind == Drop || a.Kind == Duplicate
	if k == "skew" {
		if n < -128 || n > 127 {
			return fmt.Errorf("%s: skew %d out of range", a.Kind, n)
		}
		if msg {
			a.Msg.Skew = int8(n)
		} else {
			a.Skew = int8(n)
		}
		return nil
	}
	if n < 0 || n > 255 {
		return fmt.Errorf("%s: %s=%d out of range", a.Kind, k, n)
	}
	if msg {
		for _, f := range msgFields(&a.Msg) {
			if f.name == k {
				*f.p = uint8(n)
				return nil
			}
		}
	} else {
		switch k {
		case "w":
			a.Worker = uint8(n)
			return nil
		case "r":
			a.Res = uint8(n)
			return nil
		case "c":
			a.Replica = uint8(n)
			return nil
		case "tok":
			a.Token = uint8(n)
			return nil
		}
	}
	return fmt.Errorf("%s: unknown field %q", a.Kind, k)
}
