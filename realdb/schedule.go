package realdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// Replaying a model counterexample on the real stack (the built-in
// coordinator and a real sink): the schedule is the model history's events,
// in order. Each worker of the schedule is a goroutine held at its next step
// until the schedule says go:
//
//   - an invoke line records the invocation; a write also starts for real
//     and stops at the sink's window (check-then-write: between the check
//     and the put; atomic and none: before the transaction), held there;
//   - an ok or fail line makes the call for real (acquire, renew, release,
//     read) or lets the held write go on, records the real answer, and
//     compares it with the model's; an info line is a request lost: nothing
//     is sent;
//   - the model's sink advances the fence for a grant before the grant's
//     reply (its coordinator waits for the sink's answer): at an advance
//     line the real coordinator makes the acquire it is for (advance and
//     grant in one call), and the acquire's completion line records the
//     answer; grant-before-fence's coordinator grants at the acquire's line
//     and advances at the schedule's advance line;
//   - an apply line (the model's sink deciding a write) lets the held write
//     go and records the real decision as an apply (the schedule holds every
//     other process meanwhile, so its instant is known); a write its writer
//     gave up on stays held until its apply line;
//   - faults are recorded as they come.
//
// The design is the header's variant: reference, check-then-write,
// ttl-only-lock or grant-before-fence.
//
// Time is the schedule's: the coordinator's clock (and the history's) reads
// the current event's time × Tick, so leases expire at the model's ticks
// exactly. Operations the schedule leaves open are let go at its end, in
// order, and their real answers recorded.

// ReplayConfig says how to replay a schedule.
type ReplayConfig struct {
	// DB is SQLite (default) or Postgres, DSN as for Config.
	DB, DSN string
	// Tick is the real length of one model tick (default 10ms); it scales
	// the schedule's times and ttls.
	Tick time.Duration
}

// ReplayResult is a replay: the real history, its check, and where the real
// answers differed from the schedule's.
type ReplayResult struct {
	History    *history.History
	Report     spec.Report
	Mismatches []string
	// Notes are what the replay saw beyond the schedule: the answers of the
	// operations it left open, and the fence after them.
	Notes []string
}

// Reproduced reports whether every answer the schedule states came back the
// same from the real system.
func (r ReplayResult) Reproduced() bool { return len(r.Mismatches) == 0 }

// protocolOf reads the model protocol's decision points from the header.
// scheduleSink maps the schedule's design (its header's variant) onto
// realdb's sinks and coordinator; an error for a design it cannot play.
func scheduleSink(h *history.History) (sink string, grantBeforeFence bool, err error) {
	switch h.Header.Variant {
	case "reference":
		return Atomic, false, nil
	case "check-then-write":
		return CheckThenWrite, false, nil
	case "ttl-only-lock":
		return None, false, nil
	case "grant-before-fence":
		return Atomic, true, nil
	}
	return "", false, fmt.Errorf("realdb: the replay cannot play the design %q on the real stack "+
		"(it plays reference, check-then-write, ttl-only-lock and grant-before-fence)", h.Header.Variant)
}

// step is a command to a scheduled worker: an event of the schedule, or
// (early) the call of its open operation, ahead of its completion line.
type step struct {
	e     history.Event
	early bool
	done  chan struct{}
}

// applyAfter reports whether the schedule's sink decides writer's write of
// token later (an apply line).
func applyAfter(evs []history.Event, writer string, token int64) bool {
	for _, e := range evs {
		if e.F == history.Apply && e.Value.Writer == writer && e.Value.Token == token {
			return true
		}
	}
	return false
}

// acquireAfter names the worker whose acquire of resource the schedule's
// next grant of token answers ("" if none does).
func acquireAfter(evs []history.Event, resource string, token int64) string {
	for _, e := range evs {
		if e.F == history.Acquire && e.Type == history.OK && e.Resource == resource && e.Value.Token == token {
			return e.Process
		}
	}
	return ""
}

// replayWorker is one worker of the schedule.
type replayWorker struct {
	id    string
	r     *replay
	sink  Sink
	steps chan step
	open  *history.Pending
	inv   history.Event
	// a write under way: held at the window until go is closed.
	atWindow chan struct{}
	goOn     chan struct{}
	result   chan writeResult
	// heldLate: a write the worker gave up on, held at the window until the
	// schedule's apply line for it.
	heldLate bool
	// early: the open operation was called ahead of its completion line,
	// with this answer.
	early  bool
	earlyT history.Type
	earlyV history.Value
}

type writeResult struct {
	out   Outcome
	fence int64
	err   error
}

type replay struct {
	cfg   ReplayConfig
	rec   *history.Recorder
	coord *Coordinator
	now   int64 // ns: the current event's time × Tick
	res   *ReplayResult
	gbf   bool
	rest  []history.Event // the schedule after the current event
}

func (r *replay) mismatch(format string, args ...any) {
	r.res.Mismatches = append(r.res.Mismatches, fmt.Sprintf(format, args...))
}

// Replay plays h (a model history: workers w1.., the coordinator, faults)
// against the built-in coordinator and a real sink, deterministically.
func Replay(ctx context.Context, h *history.History, cfg ReplayConfig) (res ReplayResult, err error) {
	if cfg.DB == "" {
		cfg.DB = SQLite
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 10 * time.Millisecond
	}
	kind, gbf, err := scheduleSink(h)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "fencecheck-replay-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	sc := SinkConfig{DB: cfg.DB, Kind: kind, DSN: filepath.Join(dir, "replay.db")}
	if cfg.DB == Postgres {
		sc.DSN, sc.Schema = cfg.DSN, fmt.Sprintf("fencecheck_replay_%d", os.Getpid())
	}
	coordSink, err := Create(ctx, sc)
	if err != nil {
		return res, err
	}
	defer func() {
		coordSink.Close()
		if derr := Drop(context.WithoutCancel(ctx), sc); derr != nil && err == nil {
			err = derr
		}
	}()
	r := &replay{cfg: cfg, res: &res, gbf: gbf}
	clock := func() int64 { return r.now }
	r.rec = history.NewRecorder(history.Header{TimeUnit: "ns", Expect: h.Header.Expect,
		Note: fmt.Sprintf("explore real --schedule: %s replayed on the built-in coordinator and a %s sink on %s, tick %v",
			h.Header.Variant, kind, cfg.DB, cfg.Tick)}, clock, nil)
	r.coord = NewCoordinator(coordSink, clock, r.rec)
	r.coord.grantBeforeFence, r.coord.issued = gbf, map[string]int64{}

	workers := map[string]*replayWorker{}
	var order []*replayWorker
	worker := func(id string) (*replayWorker, error) {
		if w, ok := workers[id]; ok {
			return w, nil
		}
		w := &replayWorker{id: id, r: r, steps: make(chan step)}
		c := sc
		c.Window = func(ctx context.Context) {
			if w.atWindow != nil {
				close(w.atWindow)
				<-w.goOn
			}
		}
		s, err := Open(ctx, c)
		if err != nil {
			return nil, err
		}
		w.sink = s
		workers[id] = w
		order = append(order, w)
		go w.loop(ctx)
		return w, nil
	}
	defer func() {
		for _, w := range order {
			close(w.steps)
			w.sink.Close()
		}
	}()

	// early hands a worker's open operation to the real system now, ahead
	// of its completion line, which then records the answer.
	early := func(id string, f string) {
		w, ok := workers[id]
		if !ok || w.inv.F != f || w.early || w.open == nil && !w.heldLate {
			return
		}
		st := step{e: w.inv, early: true, done: make(chan struct{})}
		w.steps <- st
		<-st.done
	}
	for i, e := range h.Events {
		r.now = e.Time * int64(cfg.Tick)
		r.rest = h.Events[i+1:]
		switch {
		case e.Process == history.Coordinator || e.Process == history.Nemesis:
			switch {
			case e.F == history.Advance && e.Type == history.OK && gbf:
				if _, err := r.coord.Advance(ctx, e.Resource); err != nil {
					return res, err
				}
			case e.F == history.Advance && e.Type == history.OK:
				// The model's sink advanced for a grant it will answer
				// later (its coordinator waits for the sink's reply); the
				// real coordinator advances and grants in one call: make it
				// now, for the acquire this advance is for.
				id := acquireAfter(h.Events[i+1:], e.Resource, e.Value.Token)
				for _, w := range order { // a grant whose reply the schedule never shows
					if id == "" && w.open != nil && w.inv.F == history.Acquire && w.inv.Resource == e.Resource {
						id = w.id
					}
				}
				if id != "" {
					early(id, history.Acquire)
				}
			case history.IsFault(e.F):
				r.rec.Fault(e.Process, e.F, e.Value)
			}
			continue
		case history.IsSinkEvent(e.F):
			// The instant the model's sink decided a write: let the held
			// write go now; its writer's completion line records the answer.
			early(e.Value.Writer, history.Write)
			continue
		case history.IsFault(e.F):
			r.rec.Fault(e.Process, e.F, e.Value)
			continue
		}
		w, err := worker(e.Process)
		if err != nil {
			return res, err
		}
		st := step{e: e, done: make(chan struct{})}
		w.steps <- st
		<-st.done
	}
	// Let every operation the schedule left open go, in order.
	for _, w := range order {
		if w.open == nil {
			continue
		}
		st := step{e: history.Event{Process: w.id, Type: "", F: w.inv.F, Resource: w.inv.Resource}, done: make(chan struct{})}
		w.steps <- st
		<-st.done
	}
	if err := r.rec.Err(); err != nil {
		return res, err
	}
	res.History = r.rec.History()
	res.Report = spec.Check(res.History, spec.Options{Timeout: 30 * time.Second})
	return res, nil
}

func (w *replayWorker) loop(ctx context.Context) {
	for st := range w.steps {
		switch {
		case st.early && w.heldLate:
			t, v := w.perform(ctx, w.inv)
			w.heldLate = false
			w.applied(t, v)
			w.r.res.Notes = append(w.r.res.Notes, fmt.Sprintf("%s's write on %s (token %d), which %s gave up on, "+
				"went on at the sink's decision: %s %s%s (fence seen %d)", w.id, w.inv.Resource, w.inv.Value.Token, w.id,
				t, v.Outcome, v.Error, v.Fence))
		case st.early:
			w.earlyT, w.earlyV = w.perform(ctx, w.inv)
			w.early = true
			if w.inv.F == history.Write {
				w.applied(w.earlyT, w.earlyV)
			}
		default:
			w.handle(ctx, st.e)
		}
		close(st.done)
	}
}

func (w *replayWorker) handle(ctx context.Context, e history.Event) {
	r := w.r
	if e.Type == history.Invoke {
		v := e.Value
		if v.TTL > 0 {
			v.TTL *= int64(r.cfg.Tick)
		}
		w.inv, w.inv.Value = e, v
		w.open = r.rec.Invoke(w.id, e.F, e.Resource, v)
		if e.F == history.Write {
			// Start the write: it runs to the window and waits there.
			w.atWindow, w.goOn, w.result = make(chan struct{}), make(chan struct{}), make(chan writeResult, 1)
			at := w.atWindow
			go func() {
				out, fence, err := w.sink.Write(ctx, e.Resource, v.Token, v.ResultID, v.Payload, v.Task)
				w.result <- writeResult{out, fence, err}
			}()
			select {
			case <-at:
			case res := <-w.result:
				w.result <- res // finished without reaching the window (it cannot: every kind has one)
			}
		}
		return
	}
	if w.open == nil {
		r.mismatch("%s completes %s on %s with nothing open", w.id, e.F, e.Resource)
		return
	}
	inv := w.inv
	beyond := e.Type == "" // let go at the schedule's end
	if e.Type == history.Info && inv.F != history.Write && !w.early {
		// A request lost: nothing was sent.
		r.rec.Complete(w.open, history.Info, history.Value{})
		w.open = nil
		return
	}
	if e.Type == history.Info && inv.F == history.Write && !w.early && applyAfter(r.rest, w.id, inv.Value.Token) {
		// The writer gives up before the sink decides its write: the write
		// stays held until the schedule's apply line lets it go.
		r.rec.Complete(w.open, history.Info, history.Value{})
		w.open, w.heldLate = nil, true
		return
	}
	var t history.Type
	var v history.Value
	if w.early {
		t, v, w.early = w.earlyT, w.earlyV, false
	} else {
		t, v = w.perform(ctx, inv)
	}
	r.rec.Complete(w.open, t, v)
	w.open = nil
	if beyond {
		note := fmt.Sprintf("%s's %s on %s (token %d), left open by the schedule, completed %s %s%s",
			w.id, inv.F, inv.Resource, inv.Value.Token, t, v.Outcome, v.Error)
		if inv.F == history.Write {
			if f, _, err := w.sink.Raise(ctx, inv.Resource, 0); err == nil {
				note += fmt.Sprintf(", the fence it saw %d, the fence now %d", v.Fence, f)
			}
		}
		r.res.Notes = append(r.res.Notes, note)
		return
	}
	if e.Type == history.Info {
		return // a write whose outcome the model left unknown: any answer fits
	}
	want := e.Value
	switch {
	case t != e.Type:
		r.mismatch("%s %s on %s: the model says %s %s, the real system %s %s", w.id, inv.F, inv.Resource, e.Type, want.Error, t, v.Error)
	case inv.F == history.Acquire && t == history.OK && want.Token != v.Token:
		r.mismatch("%s acquire on %s: the model granted token %d, the real coordinator %d", w.id, inv.Resource, want.Token, v.Token)
	case t == history.Fail && want.Error != v.Error:
		r.mismatch("%s %s on %s: the model fails %s, the real system %s", w.id, inv.F, inv.Resource, want.Error, v.Error)
	case inv.F == history.Read && (want.HasPayload != v.HasPayload || want.Payload != v.Payload):
		r.mismatch("%s read on %s: the model read %q (%v), the real sink %q (%v)", w.id, inv.Resource, want.Payload, want.HasPayload, v.Payload, v.HasPayload)
	}
}

// applied records the sink's side of the write just let go (history
// format: apply). In a replay the instant is known: the schedule holds every
// other process while the write's transaction runs.
func (w *replayWorker) applied(t history.Type, v history.Value) {
	if t == history.Info {
		return // the database did not answer: no decision to record
	}
	in := w.inv.Value
	w.r.rec.Apply(w.inv.Resource, history.Value{Writer: w.id, Token: in.Token, ResultID: in.ResultID,
		Payload: in.Payload, HasPayload: in.HasPayload, Task: in.Task, Outcome: v.Outcome, Error: v.Error,
		Fence: v.Fence, HasFence: v.HasFence})
}

// perform makes inv's call for real (or lets the held write go on) and
// returns its completion.
func (w *replayWorker) perform(ctx context.Context, inv history.Event) (history.Type, history.Value) {
	r, v := w.r, inv.Value
	protocol := func(err error) (history.Type, history.Value) {
		switch {
		case err == nil:
			return history.OK, history.Value{}
		case errors.Is(err, ErrHeld), errors.Is(err, ErrExpired), errors.Is(err, ErrNotHolder):
			return history.Fail, history.Value{Error: err.Error()}
		}
		return history.Info, history.Value{Error: err.Error()}
	}
	switch inv.F {
	case history.Acquire:
		g, err := r.coord.Acquire(ctx, AcquireRequest{Resource: inv.Resource, Owner: v.Owner, Incarnation: v.Incarnation,
			RequestID: v.RequestID, TTL: time.Duration(v.TTL)})
		t, out := protocol(err)
		if err == nil {
			out = history.Value{Token: g.Token, TTL: int64(g.TTL)}
		}
		return t, out
	case history.Renew:
		return protocol(r.coord.Renew(ctx, LeaseRequest{Resource: inv.Resource, Owner: v.Owner, Incarnation: v.Incarnation,
			Token: v.Token, TTL: time.Duration(max(v.TTL, 1))}))
	case history.Release:
		return protocol(r.coord.Release(ctx, LeaseRequest{Resource: inv.Resource, Owner: v.Owner, Incarnation: v.Incarnation, Token: v.Token}))
	case history.Read:
		payload, ok, err := w.sink.Read(ctx, inv.Resource, v.ResultID)
		if err != nil {
			return history.Info, history.Value{Error: err.Error()}
		}
		return history.OK, history.Value{Payload: payload, HasPayload: ok}
	case history.Write:
		close(w.goOn)
		res := <-w.result
		w.atWindow, w.goOn = nil, nil
		switch {
		case res.err != nil:
			return history.Info, history.Value{Error: res.err.Error()}
		case res.out.Accepted():
			return history.OK, history.Value{Outcome: string(res.out), Fence: res.fence, HasFence: true}
		}
		return history.Fail, history.Value{Error: string(res.out), Fence: res.fence, HasFence: true}
	}
	return history.Info, history.Value{Error: "the replay cannot play " + inv.F}
}
