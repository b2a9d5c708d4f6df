package history

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Recorder records the history of a running system, safely from many
// goroutines: wrap every call to a lease client or a write target in Invoke
// and Complete, and report faults with Fault.
//
// Each event is stamped by the recorder's clock under the recorder's lock, so
// the order of the events is their real-time order and their times never go
// backwards. Call Invoke before the request is sent and Complete after its
// reply has arrived: the recorded interval then contains the instant the
// operation took effect.
//
// Misuse (a second invocation while a process has one open, a completion of an
// operation that is not open, an unknown type or f) is not recorded and is
// reported by Err: the recording stays well formed and goes on, in memory
// and on the writer alike. Only a failed write stops the writing (the writer
// then holds the header and the events before the one that failed); the
// events are still kept for History.
type Recorder struct {
	mu    sync.Mutex
	clock func() int64
	w     io.Writer
	h     History
	open  map[string]*Pending
	buf   []byte
	// misuse is the first misuse; werr the error of the write that failed,
	// after which nothing more is written; werrFirst says werr came first.
	misuse, werr error
	werrFirst    bool
}

// Pending is an operation invoked and not yet completed: the handle that
// Invoke returns and Complete takes.
type Pending struct {
	process, f, resource string
	done                 bool
}

// NewRecorder starts a recording with the given header; the recorder fills
// in Format and Version. clock stamps the events: it must be monotonic and run
// at the coordinator's rate, in the unit header.TimeUnit names (see
// MonotonicClock). If w is not nil the header and every event are written to
// it as JSON lines as soon as they are recorded, until a write fails (see
// Err); the events are also kept for History.
func NewRecorder(header Header, clock func() int64, w io.Writer) *Recorder {
	header.Format, header.Version = Format, Version
	r := &Recorder{clock: clock, w: w, open: map[string]*Pending{}}
	r.h.Header, r.h.HasHeader = header, true
	if w != nil {
		r.write(AppendHeader(nil, header))
	}
	return r
}

// MonotonicClock returns a clock that reads the time elapsed since the call,
// from the process's monotonic clock, in whole units of unit (time.Nanosecond
// for "ns", time.Millisecond for "ms").
func MonotonicClock(unit time.Duration) func() int64 {
	if unit <= 0 {
		unit = time.Nanosecond
	}
	start := time.Now()
	return func() int64 { return int64(time.Since(start) / unit) }
}

// Invoke records the invocation of operation f by process on resource, with
// its arguments v, and returns the handle to complete it with.
func (r *Recorder) Invoke(process, f, resource string, v Value) *Pending {
	p := &Pending{process: process, f: f, resource: resource}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !IsOperation(f):
		r.fail(fmt.Errorf("recorder: invoke of unknown operation %q by %q", f, process))
		p.done = true
	case r.open[process] != nil:
		o := r.open[process]
		r.fail(fmt.Errorf("recorder: %q invokes %s while its %s on %q is still open", process, f, o.f, o.resource))
		p.done = true
	default:
		r.open[process] = p
		r.add(Event{Process: process, Type: Invoke, F: f, Resource: resource, Value: v})
	}
	return p
}

// Complete records the completion of p: ok (it took effect, v holds its
// results), fail (it certainly did not, v.Error says why) or info (unknown,
// for example a lost reply).
func (r *Recorder) Complete(p *Pending, t Type, v Value) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case p == nil:
		r.fail(errors.New("recorder: complete of a nil operation"))
	case t != OK && t != Fail && t != Info:
		r.fail(fmt.Errorf("recorder: %q completes %s with type %q (want ok, fail or info)", p.process, p.f, t))
	case p.done || r.open[p.process] != p:
		r.fail(fmt.Errorf("recorder: %q completes %s on %q, which is not open", p.process, p.f, p.resource))
	default:
		p.done = true
		delete(r.open, p.process)
		r.add(Event{Process: p.process, Type: t, F: p.f, Resource: p.resource, Value: v})
	}
}

// Fault records a fault f (pause, resume, crash, ...) that hit process; use
// process Nemesis and v.Target when the fault has no single process.
func (r *Recorder) Fault(process, f string, v Value) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !IsFault(f) {
		r.fail(fmt.Errorf("recorder: unknown fault %q for %q", f, process))
		return
	}
	r.add(Event{Process: process, Type: Info, F: f, Value: v})
}

// Apply records a sink-side event (an extension of the format): the instant
// the sink applied (v.Outcome: written or replayed) or rejected (v.Error:
// fenced, conflict or expired) one write on resource. Call it from the sink,
// at the write's effect point. v names the write: v.Writer (the writing
// process), v.Token, v.ResultID, and v.Payload and v.Task when known; set
// v.Fence and v.HasFence to the fence the token was compared against, if the
// sink checks one. The event's process is Sink.
func (r *Recorder) Apply(resource string, v Value) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var bad string
	switch {
	case resource == "":
		bad = "no resource"
	case v.Writer == "":
		bad = "no writer"
	case v.Token < 1:
		bad = fmt.Sprintf("token %d (want a positive token)", v.Token)
	case v.ResultID == "":
		bad = "no resultId"
	case (v.Outcome == "") == (v.Error == ""):
		bad = "want exactly one of outcome and error"
	case v.Outcome != "" && v.Outcome != Written && v.Outcome != Replayed:
		bad = fmt.Sprintf("unknown outcome %q", v.Outcome)
	case v.Error != "" && v.Error != Fenced && v.Error != Conflict && v.Error != Expired:
		bad = fmt.Sprintf("unknown error %q", v.Error)
	case v.HasFence && v.Fence < 0:
		bad = fmt.Sprintf("negative fence %d", v.Fence)
	}
	if bad != "" {
		r.fail(fmt.Errorf("recorder: apply on %q of %q's write: %s", resource, v.Writer, bad))
		return
	}
	r.add(Event{Process: Sink, Type: Info, F: Apply, Resource: resource, Value: v})
}

// add stamps e and appends it; r.mu is held.
func (r *Recorder) add(e Event) {
	e.Time = r.clock()
	if n := len(r.h.Events); n > 0 && e.Time < r.h.Events[n-1].Time {
		e.Time = r.h.Events[n-1].Time // a clock that is not monotonic: keep the file valid
	}
	e.Index = int64(len(r.h.Events))
	r.h.Events = append(r.h.Events, e)
	if r.w != nil {
		r.buf = AppendEvent(r.buf[:0], e)
		r.write(r.buf)
	}
}

// write writes b to r.w unless a write has failed already; r.mu is held.
func (r *Recorder) write(b []byte) {
	if r.werr != nil {
		return
	}
	if _, err := r.w.Write(b); err != nil {
		r.werr = fmt.Errorf("recorder: writing the history: %w", err)
		r.werrFirst = r.misuse == nil
	}
}

// fail reports a misuse, which is not recorded; r.mu is held.
func (r *Recorder) fail(err error) {
	if r.misuse == nil {
		r.misuse = err
	}
}

// History returns a copy of what has been recorded so far. Operations still
// open count as info, as the format says.
func (r *Recorder) History() *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	h.Events = append([]Event(nil), r.h.Events...)
	return &h
}

// Err returns nil if the recording has had no misuse and every write
// succeeded. Otherwise it returns the first misuse of the recorder, the error
// of the write that failed (after which the writer holds only the events
// before it), or both, joined (errors.Join) in the order they happened, so
// that a failed write is never hidden by an earlier misuse: errors.Is and
// errors.As see the writer's error through it.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.werr == nil:
		return r.misuse
	case r.misuse == nil:
		return r.werr
	case r.werrFirst:
		return errors.Join(r.werr, r.misuse)
	}
	return errors.Join(r.misuse, r.werr)
}
