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
// in order; the design is the header's variant (reference, check-then-write,
// ttl-only-lock, grant-before-fence; others are refused by name). Each worker
// of the schedule is a goroutine held at its next step until the schedule
// says go:
//
//   - an invoke line records the invocation; a write also starts for real
//     and stops at the sink's window (check-then-write: between the check
//     and the put; atomic and none: before the transaction), held there;
//   - the sink's apply line lets the held write go (its effect happens at
//     the model's instant), records the real decision as an apply event and
//     compares it with the model's; a write given up on (info) stays held
//     until its apply; an apply with no held write (a duplicate's copy) is
//     noted;
//   - the coordinator's advance ok line is the sink's step of a grant: the
//     real coordinator (synchronous: advance, then grant) is asked then, for
//     the latest-invoked open acquire on the resource (else one given up on
//     whose request was in flight), and its answer kept for the acquire's
//     completion line; grant-before-fence's coordinator instead grants at
//     the completion and advances at the advance line;
//   - an ok or fail line makes the call for real (renew, release, read) or
//     delivers the answer obtained (acquire, write), records it and compares
//     it with the model's; a model fail held while another worker's grant is
//     in progress is the coordinator being busy, answered held without a
//     call; an info line records the worker giving up;
//   - faults (the sink's and the coordinator's too) are recorded as they
//     come; a coordinator restart drops a grant in progress.
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

// scheduleSink maps the schedule's design, named by the header's variant,
// onto realdb's sinks and coordinator; an error for a design it cannot play.
func scheduleSink(h *history.History) (sink string, grantBeforeFence bool, err error) {
	switch v := h.Header.Variant; v {
	case "reference":
		return Atomic, false, nil
	case "check-then-write":
		return CheckThenWrite, false, nil
	case "ttl-only-lock":
		return None, false, nil
	case "grant-before-fence":
		return Atomic, true, nil
	default:
		return "", false, fmt.Errorf("realdb: the replay cannot play the model's design %q on the real stack (it plays reference, check-then-write, ttl-only-lock and grant-before-fence)", v)
	}
}

// step is a command to a scheduled worker.
type step struct {
	e    history.Event
	done chan struct{}
}

// replayWorker is one worker of the schedule.
type replayWorker struct {
	id    string
	r     *replay
	sink  Sink
	steps chan step
	open  *history.Pending
	inv   history.Event
	// answer is the real coordinator's answer to the open acquire, driven
	// at the model's advance line and delivered at the acquire's completion.
	answer *acqAnswer
	// lostAcq is an acquire the worker gave up on (info) whose request may
	// still reach the coordinator.
	lostAcq *history.Event
	// applied is the real answer of the open write, let go at its apply line.
	applied *writeResult
	// abandoned: the held write was given up on (info) before its apply.
	abandoned bool
	wv        history.Value // the held write's value
	// a write under way: held at the window until go is closed.
	atWindow chan struct{}
	goOn     chan struct{}
	result   chan writeResult
}

type acqAnswer struct {
	t history.Type
	v history.Value
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
	// granting: per resource, the worker whose grant is in progress (the
	// real acquire driven at the model's advance, its answer not yet given).
	granting map[string]*replayWorker
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
	r := &replay{cfg: cfg, res: &res, gbf: gbf, granting: map[string]*replayWorker{}}
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

	for _, e := range h.Events {
		r.now = e.Time * int64(cfg.Tick)
		switch {
		case e.Process == history.Sink && e.F == history.Apply:
			r.apply(ctx, e, workers)
			continue
		case e.Process == history.Coordinator && e.F == history.Advance:
			if e.Type != history.OK {
				continue
			}
			if gbf {
				if _, err := r.coord.Advance(ctx, e.Resource); err != nil {
					return res, err
				}
				continue
			}
			r.drive(ctx, e, order)
			continue
		case history.IsFault(e.F):
			r.rec.Fault(e.Process, e.F, e.Value)
			if e.Process == history.Coordinator && e.F == history.Restart {
				// A grant in progress lives in the model coordinator's
				// memory: it is lost (its real answer is not delivered).
				for res, w := range r.granting {
					if w.answer != nil {
						r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's grant in progress on %s lost with the coordinator's restart", w.id, res))
						w.answer = nil
					}
					delete(r.granting, res)
				}
			}
			continue
		case e.Process == history.Coordinator || e.Process == history.Nemesis || e.Process == history.Sink:
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
	// Let every operation the schedule left open go, in order, and every
	// write given up on but never applied.
	for _, w := range order {
		if w.open == nil && !w.abandoned {
			continue
		}
		if w.open == nil {
			res := w.letGo()
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's write on %s (token %d), given up and never applied in the schedule, let go at its end: %s%s, the fence it saw %d",
				w.id, w.inv.Resource, w.inv.Value.Token, res.out, errText(res.err), res.fence))
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
		w.handle(ctx, st.e)
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
		w.answer = nil
		if e.F == history.Write {
			if w.abandoned { // an older write given up on and never applied
				w.letGo()
			}
			w.wv, w.applied, w.abandoned = v, nil, false
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
	if e.Type == history.Info && !beyond {
		// The worker gives up: an acquire's request may still reach the
		// coordinator (at a later advance line), a write's the sink (at its
		// apply line, until which it stays held).
		r.rec.Complete(w.open, history.Info, history.Value{})
		w.open = nil
		switch inv.F {
		case history.Acquire:
			if w.answer != nil { // granted for real, the answer lost
				r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s, given up, was granted token %d by the real coordinator", w.id, inv.Resource, w.answer.v.Token))
				w.answer = nil
				delete(r.granting, inv.Resource)
			} else {
				lost := inv
				w.lostAcq = &lost
			}
		case history.Write:
			if w.applied == nil {
				w.abandoned = true
			}
		}
		return
	}
	t, v := w.perform(ctx, inv, e)
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

// perform makes inv's call for real (or lets the held write go on) and
// returns its completion.
func (w *replayWorker) perform(ctx context.Context, inv, e history.Event) (history.Type, history.Value) {
	r, v := w.r, inv.Value
	switch inv.F {
	case history.Acquire:
		if a := w.answer; a != nil { // driven at the advance line
			w.answer = nil
			delete(r.granting, inv.Resource)
			return a.t, a.v
		}
		if g := r.granting[inv.Resource]; g != nil && g != w && e.Type == history.Fail && e.Value.Error == ErrHeld.Error() {
			// The model coordinator is busy granting the resource to g; the
			// real one granted at once, so it answers for the grant in
			// progress: held.
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s refused while %s's grant was in progress", w.id, inv.Resource, g.id))
			return history.Fail, history.Value{Error: ErrHeld.Error()}
		}
		return r.acquire(ctx, inv)
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
		var res writeResult
		if w.applied != nil {
			res, w.applied = *w.applied, nil
		} else {
			res = w.letGo()
		}
		return writeAnswer(res)
	}
	return history.Info, history.Value{Error: "the replay cannot play " + inv.F}
}

// writeAnswer is a write's completion for its real result.
func writeAnswer(res writeResult) (history.Type, history.Value) {
	switch {
	case res.err != nil:
		return history.Info, history.Value{Error: res.err.Error()}
	case res.out.Accepted():
		return history.OK, history.Value{Outcome: string(res.out), Fence: res.fence, HasFence: true}
	}
	return history.Fail, history.Value{Error: string(res.out), Fence: res.fence, HasFence: true}
}

// protocol is a coordinator call's completion for its error.
func protocol(err error) (history.Type, history.Value) {
	switch {
	case err == nil:
		return history.OK, history.Value{}
	case errors.Is(err, ErrHeld), errors.Is(err, ErrExpired), errors.Is(err, ErrNotHolder):
		return history.Fail, history.Value{Error: err.Error()}
	}
	return history.Info, history.Value{Error: err.Error()}
}

// acquire makes the acquire inv for real on the coordinator.
func (r *replay) acquire(ctx context.Context, inv history.Event) (history.Type, history.Value) {
	v := inv.Value
	g, err := r.coord.Acquire(ctx, AcquireRequest{Resource: inv.Resource, Owner: v.Owner, Incarnation: v.Incarnation,
		RequestID: v.RequestID, TTL: time.Duration(v.TTL)})
	t, out := protocol(err)
	if err == nil {
		out = history.Value{Token: g.Token, TTL: int64(g.TTL)}
	}
	return t, out
}

// drive plays the model coordinator's advance on resource e.Resource: the
// sink's step of a grant. The acquire it serves is the latest-invoked open
// acquire on the resource not driven yet, else one its worker gave up on
// whose request was still in flight; the real coordinator's acquire (which
// advances, then grants) is made now and its answer kept for the acquire's
// completion line. An advance that serves no acquire the replay can name is
// made alone.
func (r *replay) drive(ctx context.Context, e history.Event, order []*replayWorker) {
	var pick *replayWorker
	for _, w := range order {
		if w.open != nil && w.inv.F == history.Acquire && w.inv.Resource == e.Resource && w.answer == nil &&
			(pick == nil || w.inv.Time >= pick.inv.Time) {
			pick = w
		}
	}
	if pick != nil {
		t, v := r.acquire(ctx, pick.inv)
		pick.answer = &acqAnswer{t, v}
		r.granting[e.Resource] = pick
		return
	}
	for _, w := range order {
		if l := w.lostAcq; l != nil && l.Resource == e.Resource {
			w.lostAcq = nil
			t, v := r.acquire(ctx, *l)
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s, given up, reached the coordinator at the advance: %s token %d %s",
				w.id, e.Resource, t, v.Token, v.Error))
			return
		}
	}
	if _, err := r.coord.Advance(ctx, e.Resource); err != nil {
		r.mismatch("advance on %s: %v", e.Resource, err)
	}
}

// apply plays the sink's apply line: the writer's held write is let go now,
// and the sink's real decision recorded as an apply event; the writer's
// completion line (if still to come) gets the real answer.
func (r *replay) apply(ctx context.Context, e history.Event, workers map[string]*replayWorker) {
	w := workers[e.Value.Writer]
	held := w != nil && w.goOn != nil && w.inv.F == history.Write && w.inv.Resource == e.Resource &&
		w.wv.Token == e.Value.Token && w.wv.ResultID == e.Value.ResultID && (w.open != nil || w.abandoned)
	if !held {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("the sink's apply of %s's write on %s (token %d) at %d: a copy, or a write no longer held; nothing to let go",
			e.Value.Writer, e.Resource, e.Value.Token, e.Time))
		return
	}
	res := w.letGo()
	v := history.Value{Writer: w.id, Token: w.wv.Token, ResultID: w.wv.ResultID, Payload: w.wv.Payload,
		HasPayload: w.wv.HasPayload, Task: w.wv.Task}
	switch {
	case res.err != nil:
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's write on %s let go at the apply: %v", w.id, e.Resource, res.err))
	case res.out.Accepted():
		v.Outcome, v.Fence, v.HasFence = string(res.out), res.fence, true
	default:
		v.Error, v.Fence, v.HasFence = string(res.out), res.fence, true
	}
	if res.err == nil {
		r.rec.Apply(e.Resource, v)
		want := e.Value.Outcome + e.Value.Error
		if got := v.Outcome + v.Error; got != want {
			r.mismatch("the sink's apply of %s's write on %s: the model %s, the real sink %s", w.id, e.Resource, want, got)
		}
	}
	if w.abandoned {
		w.abandoned = false
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's write on %s (token %d), given up, applied at the schedule's apply: %s%s, the fence it saw %d",
			w.id, e.Resource, w.wv.Token, res.out, errText(res.err), res.fence))
		return
	}
	w.applied = &res
}

// letGo lets the held write go on and waits for its real result.
func (w *replayWorker) letGo() writeResult {
	close(w.goOn)
	res := <-w.result
	w.atWindow, w.goOn = nil, nil
	return res
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}
