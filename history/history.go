// Package history holds fencecheck's one interchange format: the events of a
// run, as the model records them and as a real system exports them (history
// format version 1, documented in docs/history-format.md).
//
// A history is a header and a list of events in real-time order. Events follow
// Jepsen's vocabulary: a process invokes an operation f and it completes with
// ok (took effect), fail (certainly did not) or info (unknown). Faults are
// single info events with no invocation, and so are the sink's apply events
// (an extension: the instant the sink applied or rejected one write).
package history

import (
	"encoding/json"
	"fmt"
)

// Format and Version identify a fencecheck history header.
const (
	Format  = "fencecheck-history"
	Version = 1
)

// Type is the kind of an event: invoke, ok, fail or info.
type Type string

// The four event types.
const (
	Invoke Type = "invoke"
	OK     Type = "ok"
	Fail   Type = "fail"
	Info   Type = "info"
)

// Operation names (the event field f).
const (
	Acquire = "acquire"
	Renew   = "renew"
	Release = "release"
	Advance = "advance"
	Write   = "write"
	Read    = "read"
)

// Fault names: single info events with no invocation.
const (
	Pause     = "pause"
	Resume    = "resume"
	Crash     = "crash"
	Restart   = "restart"
	Partition = "partition"
	Heal      = "heal"
	Drop      = "drop"
	Duplicate = "duplicate"
	// Clock is an extension of the format: a worker's clock was set to run
	// value.offset time units ahead of (or, negative, behind) the
	// coordinator's.
	Clock = "clock"
)

// Apply is an extension of the format: the sink-side event. A single info
// line of process Sink, with no invocation, stating the instant the sink
// applied (value.outcome) or rejected (value.error) one write: the write's
// effect point. Its value names the write it decided (value.writer, the
// writer's process; value.token; value.resultId; value.payload and
// value.task when known) and, optionally, value.fence: the sink's fence the
// token was compared against.
const Apply = "apply"

// IsSinkEvent reports whether f names a sink-side event (apply): a single
// info line that is neither a fault nor part of an operation.
func IsSinkEvent(f string) bool { return f == Apply }

// IsFault reports whether f names a fault rather than an operation.
func IsFault(f string) bool {
	switch f {
	case Pause, Resume, Crash, Restart, Partition, Heal, Drop, Duplicate, Clock:
		return true
	}
	return false
}

// IsOperation reports whether f names an operation of the format.
func IsOperation(f string) bool {
	switch f {
	case Acquire, Renew, Release, Advance, Write, Read:
		return true
	}
	return false
}

// Outcomes of a write (value.outcome on ok) and errors (value.error on fail).
const (
	Written   = "written"
	Replayed  = "replayed"
	Held      = "held"
	Expired   = "expired"
	NotHolder = "not_holder"
	Fenced    = "fenced"
	Conflict  = "conflict"
)

// Coordinator, Nemesis and Sink are the reserved process names. Sink is the
// process of the sink-side apply events (an extension of the format).
const (
	Coordinator = "coordinator"
	Nemesis     = "nemesis"
	Sink        = "sink"
)

// Header is the optional first line of a history file.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Variant names the protocol variant that produced a model history.
	Variant string `json:"variant,omitempty"`
	// Seed is the random seed of the run that produced the history.
	Seed uint64 `json:"seed,omitempty"`
	// Config holds the model's bounds, as the model encodes them.
	Config json.RawMessage `json:"config,omitempty"`
	// Expect lists the invariant ids the history is expected to violate.
	// Nil means the header does not say; an empty list means none.
	Expect []string `json:"expect"`
	// Actions is the model's action trace (an extension of the format): enough
	// for explore replay to re-execute the run without the seed's generator.
	Actions []string `json:"actions,omitempty"`
	// TimeUnit names the unit of time and ttl: "tick", "ms", "ns".
	TimeUnit string `json:"timeUnit,omitempty"`
	// Partial says nothing is assumed about fences and results before the
	// first event.
	Partial bool   `json:"partial,omitempty"`
	Note    string `json:"note,omitempty"`
	// Line is the 1-based line of the file the header was read from; 0
	// when it was not read from a file.
	Line int `json:"-"`
}

// Event is one line of a history.
type Event struct {
	Time     int64
	Process  string
	Type     Type
	F        string
	Resource string
	Value    Value
	// Index is the event's position: its "index" field, or its order among
	// the events (0-based, header excluded).
	Index int64
	// Line is the 1-based line of the file the event was read from; 0 when
	// the event was not read from a file.
	Line int
}

// Value holds the arguments (invoke) or results (ok, fail, info) of an event.
// A field that is absent is the zero value; tokens and ttls are positive, so
// zero means absent for them too.
type Value struct {
	Owner       string
	Incarnation string
	RequestID   string
	TTL         int64
	Token       int64
	ResultID    string
	Payload     string
	// HasPayload tells a present payload from an absent one or null.
	HasPayload bool
	// HasFence tells a present Fence (which may be 0) from an absent one.
	// (It is declared here, beside HasPayload, so that the two share one
	// word of the struct.)
	HasFence bool
	Task     string
	Outcome  string
	Error    string
	Target   string
	// Offset is a clock fault's offset (an extension of the format).
	Offset int64
	// Writer is the process whose write an apply event decided (an
	// extension of the format).
	Writer string
	// Fence is the sink's fence that a write's token was compared against:
	// on an apply event, and on the ok or fail completion of a write (an
	// extension of the format). A fence may be 0, so HasFence tells a
	// present fence from an absent one.
	Fence int64
}

// History is a header and its events.
type History struct {
	Header Header
	// HasHeader reports whether the file carried a header line.
	HasHeader bool
	Events    []Event
}

// Op pairs an invocation with its completion.
type Op struct {
	// Invoke is the position in Events of the invoke event.
	Invoke int
	// Complete is the position of the completing event, or -1 when the
	// operation is still open at the end of the history (it counts as info).
	Complete int
}

// Result returns the type of the op's completion: ok, fail or info (open
// operations are info).
func (h *History) Result(op Op) Type {
	if op.Complete < 0 {
		return Info
	}
	return h.Events[op.Complete].Type
}

// Diff describes the first difference between recorded events (read from
// a file, with their lines) and replayed ones, or returns "" when there is
// none.
func Diff(recorded, replayed []Event) string {
	if i := Agree(recorded, replayed); i < len(recorded) && i < len(replayed) {
		at := ""
		if l := recorded[i].Line; l > 0 {
			at = fmt.Sprintf(" (line %d)", l)
		}
		a, b := recorded[i], replayed[i]
		a.Line, b.Line = 0, 0
		return fmt.Sprintf("event %d%s differs: recorded %s, replayed %s", i+1, at, brief(a), brief(b))
	}
	if len(recorded) != len(replayed) {
		return fmt.Sprintf("recorded %d events, replayed %d", len(recorded), len(replayed))
	}
	return ""
}

// Agree returns how many leading events recorded and replayed have alike,
// their lines in a file aside.
func Agree(recorded, replayed []Event) int {
	i := 0
	for ; i < len(recorded) && i < len(replayed); i++ {
		a, b := recorded[i], replayed[i]
		a.Line, b.Line = 0, 0
		if a != b {
			break
		}
	}
	return i
}

// brief is an event's JSON line without its newline.
func brief(e Event) string {
	b := AppendEvent(nil, e)
	return string(b[:len(b)-1])
}

// Ops pairs every invocation with its completion, in invocation order. The
// history must be well formed (as Read guarantees).
func (h *History) Ops() []Op {
	var ops []Op
	open := map[string]int{} // process -> index into ops
	for i, e := range h.Events {
		switch {
		case e.Type == Invoke:
			open[e.Process] = len(ops)
			ops = append(ops, Op{Invoke: i, Complete: -1})
		case IsOperation(e.F):
			if k, ok := open[e.Process]; ok {
				ops[k].Complete = i
				delete(open, e.Process)
			}
		}
	}
	return ops
}
