package realdb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Replaying a model history on the real stack (the built-in coordinator and
// a real sink): the schedule is the model history's events, in order; the
// design is the header's variant, one of playables (others are refused by
// name). Each worker of the schedule is a goroutine held at its next step
// until the schedule says go.
//
// The events stamp a worker's instants only; the coordinator's and the
// sink's decisions fall between them. When the header carries the model's
// action trace (every history the model writes does), the replay
// re-executes it on the model (instants.go) and makes each real call where
// the model decided:
//
//   - a renew, release or read at its request's delivery (a late or
//     duplicated copy too: each delivery is a call), its answer kept for the
//     completion line that reports it; a refused acquire likewise, answered
//     held without a call while the model's coordinator was granting the
//     resource to another acquire (the real one, synchronous, is never
//     busy);
//   - a grant in two steps, as the model's coordinator makes it: the fence
//     advanced at the advance line, for the acquire the model names (an
//     advance whose grant the model never made, its coordinator having
//     restarted, is made alone), and the lease granted with that fence at
//     the model's grant (grant-before-fence: granted at the request's
//     delivery, the fence raised to the token at the advance line);
//   - a write started when the model's sink takes its request (every copy
//     of it) and held at the sink's window (check-then-write: between the
//     check and the put; atomic and none: before the transaction), then let
//     go at the apply line the trace names for it, where the real decision
//     is recorded as an apply event and compared with the model's;
//   - a coordinator restart (Coordinator.Restart) loses the lease table and
//     grants nothing for one ttl (the longest the schedule asks for).
//
// A history without a trace is played by its events alone: renews,
// releases and reads at their completion lines, an acquire granted at the
// advance line (for the latest-invoked open acquire on the resource, else
// one given up on), a write started at its invocation. Every completion line
// is compared with the real answer (type, token, error, payload); faults are
// recorded as they come.
//
// Time is the schedule's: the coordinator's clock (and the history's) reads
// the model's tick × Tick, so leases expire at the model's ticks exactly.
// Operations the schedule leaves open, and writes it never applied, are let
// go at its end, in order, and their real answers noted.

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

// playable is a design the replay plays: the real sink and coordinator that
// make the design's decisions.
type playable struct {
	name string
	sink string // the sink's kind
	// grantBeforeFence: the coordinator grants, then advances the fence;
	// noGrace: a restarted coordinator grants at once.
	grantBeforeFence, noGrace bool
}

// playables are the designs the replay plays, by name.
var playables = []playable{
	{"reference", Atomic, false, false},
	{"check-then-write", CheckThenWrite, false, false},
	{"ttl-only-lock", None, false, false},
	{"grant-before-fence", Atomic, true, false},
	{"accept-higher-token", MaxToken, false, false},
	{"restart-no-grace", Atomic, false, true},
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
	// answer is the real answer to the open operation, obtained at the
	// model's instant of its decision (an acquire's grant: at the advance
	// line) and delivered at the operation's completion line.
	answer *reply
	// invAt is the index of the open operation's invoke event.
	invAt int
	// grant is the token the model granted the open acquire (its ok line's),
	// 0 when the schedule shows no grant.
	grant int64
	// lostAcq is an acquire the worker gave up on (info) whose request may
	// still reach the coordinator.
	lostAcq *history.Event
	// applied is the real answer of the open write, let go at its apply line.
	applied *writeResult
	// writes are the worker's writes under way, held at the sink's window,
	// oldest first: the open one's, and those of writes given up on (or
	// their network copies) that have not reached the sink's apply line.
	writes []*heldWrite
}

// heldWrite is a write under way on the real sink, held at the sink's
// window until the schedule's apply line lets it go.
type heldWrite struct {
	op     int // its invoke event's index
	dec    int // the decision that started it; -1 when started at the invocation
	inv    history.Event
	window chan struct{} // closed when the write reaches the window
	goOn   chan struct{}
	result chan writeResult
}

// windowKey carries a write's heldWrite to the sink's window hook.
type windowKey struct{}

// reply is an operation's real answer.
type reply struct {
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
	sched []history.Event // the schedule's events
	// traced: the schedule has an action trace; writes start when the
	// model's sink takes them, not at their invocation.
	traced bool
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
	i := slices.IndexFunc(playables, func(d playable) bool { return d.name == h.Header.Variant })
	if i < 0 {
		names := make([]string, len(playables))
		for i, d := range playables {
			names[i] = d.name
		}
		if h.Header.Variant == "" {
			return res, fmt.Errorf("realdb: the schedule's header names no design (\"variant\"): the replay plays a model history, of %s", strings.Join(names, ", "))
		}
		return res, fmt.Errorf("realdb: the replay cannot play the model's design %q on the real stack (it plays %s)",
			h.Header.Variant, strings.Join(names, ", "))
	}
	design := playables[i]
	kind, gbf := design.sink, design.grantBeforeFence
	in, err := scheduleInstants(h)
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
	r := &replay{cfg: cfg, res: &res, sched: h.Events, traced: in.traced, granting: map[string]*replayWorker{}}
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
			if hw, ok := ctx.Value(windowKey{}).(*heldWrite); ok {
				close(hw.window)
				<-hw.goOn
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
			for _, hw := range w.writes { // held still: an error stopped the replay
				close(hw.goOn)
			}
			close(w.steps)
			w.sink.Close()
		}
	}()

	grants := map[int]int64{} // an acquire's invoke index -> the token its ok line grants
	var grace int64           // a restarted coordinator's: the longest lease asked for (none for noGrace)
	for _, op := range h.Ops() {
		inv := h.Events[op.Invoke]
		if inv.F != history.Acquire {
			continue
		}
		if !design.noGrace {
			grace = max(grace, inv.Value.TTL*int64(cfg.Tick))
		}
		if h.Result(op) == history.OK {
			grants[op.Invoke] = h.Events[op.Complete].Value.Token
		}
	}
	next := 0 // the next of in.decisions
	decide := func(before int) {
		for ; next < len(in.decisions) && in.decisions[next].at <= before; next++ {
			r.decide(ctx, next, in.decisions[next], workers)
		}
	}
	for i, e := range h.Events {
		decide(i)
		r.now = e.Time * int64(cfg.Tick)
		switch {
		case e.Process == history.Sink && e.F == history.Apply:
			r.apply(ctx, i, e, workers, in.applies)
			continue
		case e.Process == history.Coordinator && e.F == history.Advance:
			if e.Type != history.OK {
				continue
			}
			if gbf { // to the token granted (the model's fence after it)
				if err := r.coord.advanceTo(ctx, e.Resource, e.Value.Token); err != nil {
					return res, err
				}
				continue
			}
			r.drive(ctx, i, e, order, in)
			continue
		case history.IsFault(e.F):
			r.rec.Fault(e.Process, e.F, e.Value)
			if e.Process == history.Coordinator && e.F == history.Restart {
				r.coord.Restart(time.Duration(grace))
				// A grant in progress lives in the model coordinator's
				// memory: it is lost (its real answer is not delivered).
				for _, res := range slices.Sorted(maps.Keys(r.granting)) { // the notes in a fixed order
					w := r.granting[res]
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
		if e.Type == history.Invoke { // read by drive and decide, in this goroutine, while w waits
			w.invAt, w.grant = i, grants[i]
		}
		st := step{e: e, done: make(chan struct{})}
		w.steps <- st
		<-st.done
	}
	decide(len(h.Events))
	// Let every operation the schedule left open go, in order, and every
	// write given up on but never applied.
	for _, w := range order {
		for _, hw := range slices.Clone(w.writes) {
			if w.open != nil && hw.op == w.invAt {
				continue // the open write's: it completes below
			}
			res := w.letGo(hw)
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's write on %s (token %d), never applied in the schedule, let go at its end: %s%s, the fence it saw %d",
				w.id, hw.inv.Resource, hw.inv.Value.Token, res.out, errText(res.err), res.fence))
		}
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
		w.handle(ctx, st.e)
		close(st.done)
	}
}

func (w *replayWorker) handle(ctx context.Context, e history.Event) {
	r := w.r
	if e.Type == history.Invoke {
		w.inv = r.scaled(e)
		v := w.inv.Value
		w.open = r.rec.Invoke(w.id, e.F, e.Resource, v)
		w.answer = nil
		w.applied = nil
		if e.F == history.Write && !r.traced {
			w.start(ctx, w.invAt, -1, w.inv) // at the sink from its invocation on
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
			if r.granting[inv.Resource] == w { // granted for real, the answer lost
				r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s, given up, was granted token %d by the real coordinator", w.id, inv.Resource, w.answer.v.Token))
				delete(r.granting, inv.Resource)
			} else if !r.traced { // with a trace, the advance line names it
				lost := inv
				w.lostAcq = &lost
			}
		}
		w.answer = nil // a renew's or release's decision stands, its answer is lost
		return
	}
	t, v := w.perform(ctx, inv, e)
	r.rec.Complete(w.open, t, v)
	w.open = nil
	if beyond {
		var note string
		switch {
		case inv.F == history.Acquire && t == history.OK: // an acquire names no token: its grant does
			note = fmt.Sprintf("%s's acquire on %s, left open by the schedule, completed ok, granted token %d",
				w.id, inv.Resource, v.Token)
		case inv.F == history.Acquire:
			note = fmt.Sprintf("%s's acquire on %s, left open by the schedule, completed %s %s",
				w.id, inv.Resource, t, v.Error)
		default:
			note = fmt.Sprintf("%s's %s on %s (token %d), left open by the schedule, completed %s %s%s",
				w.id, inv.F, inv.Resource, inv.Value.Token, t, v.Outcome, v.Error)
		}
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
	r := w.r
	if a := w.answer; a != nil { // obtained at the model's decision
		w.answer = nil
		if r.granting[inv.Resource] == w {
			delete(r.granting, inv.Resource)
		}
		return a.t, a.v
	}
	switch inv.F {
	case history.Acquire:
		if g := r.granting[inv.Resource]; g != nil && g != w && e.Type == history.Fail && e.Value.Error == ErrHeld.Error() {
			// The model coordinator is busy granting the resource to g; the
			// real one granted at once, so it answers for the grant in
			// progress: held.
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s refused while %s's grant was in progress", w.id, inv.Resource, g.id))
			return history.Fail, history.Value{Error: ErrHeld.Error()}
		}
		return r.acquire(ctx, inv)
	case history.Write:
		if a := w.applied; a != nil {
			w.applied = nil
			return writeAnswer(*a)
		}
		// Not applied in the schedule: the write goes on now.
		i := slices.IndexFunc(w.writes, func(hw *heldWrite) bool { return hw.op == w.invAt })
		if i < 0 {
			w.start(ctx, w.invAt, -1, inv)
			i = len(w.writes) - 1
		}
		return writeAnswer(w.letGo(w.writes[i]))
	}
	return w.call(ctx, inv)
}

// call makes inv's renew, release or read for real.
func (w *replayWorker) call(ctx context.Context, inv history.Event) (history.Type, history.Value) {
	r, v := w.r, inv.Value
	switch inv.F {
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

// scaled is the invocation e with its ttl in real time.
func (r *replay) scaled(e history.Event) history.Event {
	e.Value.TTL *= int64(r.cfg.Tick)
	return e
}

// decide makes the real call of decision k, which the model made between
// two of the schedule's events, on the model's clock then: a write is
// started (and held at the sink's window until its apply line); a renew,
// release or read is made; an acquire is granted (taking the fence its
// advance line raised) or refused, a refusal while the model's coordinator
// was granting the resource to another acquire answered held without
// asking the real coordinator (which is never busy). The answer is kept for
// the operation's completion line if the model's answer to this delivery
// is the one that line reports; a late copy's is noted.
func (r *replay) decide(ctx context.Context, k int, d decision, workers map[string]*replayWorker) {
	w := workers[r.sched[d.op].Process] // invoked before, so there
	if w == nil {
		return
	}
	r.now = d.tick * int64(r.cfg.Tick)
	if inv := r.sched[d.op]; inv.F == history.Write {
		// The sink takes the write now (check-then-write: checks it; the
		// put waits for the apply line).
		w.start(ctx, d.op, k, r.scaled(inv))
		return
	}
	if d.late {
		inv := r.scaled(r.sched[d.op])
		t, v := w.call(ctx, inv)
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("a late copy of %s's %s on %s (token %d) reached the coordinator at %d: %s %s",
			w.id, inv.F, inv.Resource, inv.Value.Token, d.tick, t, v.Error))
		return
	}
	if d.grant && (w.open == nil || w.invAt != d.op) { // given up on, granted all the same
		inv := r.scaled(r.sched[d.op])
		t, v := r.acquire(ctx, inv)
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s, given up, reached the coordinator at %d: %s token %d %s",
			w.id, inv.Resource, d.tick, t, v.Token, v.Error))
		return
	}
	if w.open == nil || w.invAt != d.op {
		return
	}
	var t history.Type
	var v history.Value
	switch {
	case w.inv.F != history.Acquire:
		t, v = w.call(ctx, w.inv)
	case d.grant:
		t, v = r.acquire(ctx, w.inv)
	case d.reply.code != model.RepHeld:
		return // no answer yet (the grant comes later), or a retry answered from the grant's record
	case d.busy:
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's acquire on %s refused while the coordinator was granting it to another", w.id, w.inv.Resource))
		t, v = history.Fail, history.Value{Error: ErrHeld.Error()}
	default:
		t, v = r.acquire(ctx, w.inv)
	}
	if d.answers || w.answer == nil {
		w.answer = &reply{t, v}
	}
}

// drive plays the model coordinator's advance on resource e.Resource (the
// event at index i): the sink's step of a grant. With a trace, the model
// names the acquire it is for: the fence is advanced now, and the real grant
// (taking it as its token) is made at the model's grant (decide); an advance
// the model never granted for (its coordinator restarted) is made alone.
// Without a trace, the acquire it serves is the latest-invoked open acquire
// on the resource not driven yet whose grant (if the schedule shows one) is
// this advance's token, else one its worker gave up on whose request was
// still in flight; the real coordinator's acquire (which advances, then
// grants) is made now and its answer kept for the acquire's completion line.
func (r *replay) drive(ctx context.Context, i int, e history.Event, order []*replayWorker, in instants) {
	if op, ok := in.advances[i]; ok {
		var err error
		if op >= 0 {
			err = r.coord.advanceForGrant(ctx, e.Resource)
		} else {
			_, err = r.coord.Advance(ctx, e.Resource)
		}
		if err != nil {
			r.mismatch("advance on %s: %v", e.Resource, err)
		}
		return
	}
	var pick *replayWorker
	for _, w := range order {
		if w.open != nil && w.inv.F == history.Acquire && w.inv.Resource == e.Resource && w.answer == nil &&
			(w.grant == 0 || w.grant == e.Value.Token) && (pick == nil || w.inv.Time >= pick.inv.Time) {
			pick = w
		}
	}
	if pick != nil {
		t, v := r.acquire(ctx, pick.inv)
		pick.answer = &reply{t, v}
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
func (r *replay) apply(ctx context.Context, at int, e history.Event, workers map[string]*replayWorker, applies map[int]int) {
	var w *replayWorker
	i := -1
	if w = workers[e.Value.Writer]; w != nil {
		dec, traced := applies[at] // the trace names the write
		i = slices.IndexFunc(w.writes, func(hw *heldWrite) bool {
			v := hw.inv.Value
			return hw.inv.Resource == e.Resource && v.Token == e.Value.Token && v.ResultID == e.Value.ResultID &&
				(!traced || hw.dec == dec)
		})
	}
	if i < 0 {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("the sink's apply of %s's write on %s (token %d) at %d: a copy, or a write no longer held; nothing to let go",
			e.Value.Writer, e.Resource, e.Value.Token, e.Time))
		return
	}
	hw := w.writes[i]
	res := w.letGo(hw)
	wv := hw.inv.Value
	v := history.Value{Writer: w.id, Token: wv.Token, ResultID: wv.ResultID, Payload: wv.Payload,
		HasPayload: wv.HasPayload, Task: wv.Task}
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
	if w.open == nil || hw.op != w.invAt || w.applied != nil {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("%s's write on %s (token %d), given up or a copy, applied at the schedule's apply: %s%s, the fence it saw %d",
			w.id, e.Resource, wv.Token, res.out, errText(res.err), res.fence))
		return
	}
	w.applied = &res
}

// start starts inv's write (the operation at op; dec the decision, -1 for
// none) on the real sink: it runs to the sink's window and waits there.
func (w *replayWorker) start(ctx context.Context, op, dec int, inv history.Event) {
	hw := &heldWrite{op: op, dec: dec, inv: inv, window: make(chan struct{}), goOn: make(chan struct{}), result: make(chan writeResult, 1)}
	w.writes = append(w.writes, hw)
	v := inv.Value
	wctx := context.WithValue(ctx, windowKey{}, hw)
	go func() {
		out, fence, err := w.sink.Write(wctx, inv.Resource, v.Token, v.ResultID, v.Payload, v.Task)
		hw.result <- writeResult{out, fence, err}
	}()
	select {
	case <-hw.window:
	case res := <-hw.result:
		hw.result <- res // finished without reaching the window (an error before it)
	}
}

// letGo lets a held write go on, waits for its real result and forgets it.
func (w *replayWorker) letGo(hw *heldWrite) writeResult {
	close(hw.goOn)
	res := <-hw.result
	w.writes = slices.DeleteFunc(w.writes, func(x *heldWrite) bool { return x == hw })
	return res
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}
