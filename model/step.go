package model

import (
	"fmt"

	"github.com/fencecheck/fencecheck/history"
)

// Step applies action a to s in place, appends the events it produced to evs
// (their Time is left zero: the caller's clock stamps them) and returns them
// with the fact the invariants judge. a must be enabled in s.
func (m *Machine) Step(s *State, a Action, evs []history.Event) ([]history.Event, Fact) {
	rec := &recorder{evs: evs}
	st := stepper{m: m, d: &m.Design, s: s, rec: rec}
	st.do(&a)
	s.normal()
	return rec.evs, st.fact
}

// Next is Step without events: the explorer's inner loop, which allocates
// nothing. It takes the action by pointer (and only reads it) so that the
// caller passes an action of its list as it is, not a copy: copying one
// into the call's arguments stalls on the stores just made.
func (m *Machine) Next(s *State, a *Action) Fact {
	st := stepper{m: m, d: &m.Design, s: s}
	st.do(a)
	s.normal()
	return st.fact
}

// stepper applies one action. The steps are the world's — network, clocks,
// faults, the ghost truth — and ask the design (d) at each decision.
type stepper struct {
	m    *Machine
	d    *Design
	s    *State
	rec  *recorder // nil: no events (Next)
	fact Fact
}

// recorder collects a step's events. It is apart from the stepper so that
// the events, which go to the heap, do not drag the state with them: Next,
// which records nothing, must not allocate.
type recorder struct {
	evs []history.Event
}

// proc names the process of an event without building its name: names are
// built only when a step records events, so that Next allocates nothing.
type proc struct {
	id   uint8
	kind uint8 // procWorker, procCoord, procNemesis
}

const (
	procWorker uint8 = iota
	procCoord
	procNemesis
	procSink
)

func worker(w uint8) proc { return proc{id: w} }
func coord(c uint8) proc  { return proc{id: c, kind: procCoord} }

var (
	nemesis = proc{kind: procNemesis}
	sink    = proc{kind: procSink}
)

func (p proc) name() string {
	switch p.kind {
	case procNemesis:
		return history.Nemesis
	case procCoord:
		return CoordinatorName(p.id)
	case procSink:
		return SinkName
	}
	return Process(p.id)
}

// SinkName is the sink's process name in histories (its faults and the
// apply events of writes).
const SinkName = history.Sink

// emit records an event (an operation's, or a fault's: an info with no
// resource); the value is built only when recording.
func (r *recorder) emit(p proc, typ history.Type, f string, res uint8, v func() history.Value) {
	if r == nil {
		return
	}
	e := history.Event{Process: p.name(), Type: typ, F: f}
	if v != nil {
		e.Value = v()
	}
	if !history.IsFault(f) {
		e.Resource = ResourceName(res)
	}
	r.evs = append(r.evs, e)
}

func (st *stepper) send(msg Msg) {
	s := st.s
	s.Msgs[s.NMsgs] = msg
	s.NMsgs++
}

func (st *stepper) do(a *Action) {
	s, m := st.s, st.m
	w := a.Worker
	wk := &s.Workers[w]
	switch a.Kind {
	case Acquire, Renew, Release, Write, Forge, Read:
		st.forget(w) // a new operation: replies to earlier ones no longer count
	}
	switch a.Kind {
	case Tick:
		st.tick()
	case Acquire:
		wk.Ops++
		wk.Req++
		wk.Pending, wk.Res = OpAcquire, a.Res
		st.send(st.request(AcquireReq, w, a.Replica))
		st.rec.emit(worker(w), history.Invoke, history.Acquire, a.Res, func() history.Value {
			return history.Value{Owner: Process(w), Incarnation: fmt.Sprint(wk.Inc),
				RequestID: requestID(w, wk.Inc, wk.Req), TTL: int64(m.Config.TTL)}
		})
	case Retry:
		st.send(st.request(AcquireReq, w, a.Replica))
	case Renew, Release:
		wk.Ops++
		kind, op, f := RenewReq, OpRenew, history.Renew
		if a.Kind == Release {
			kind, op, f = ReleaseReq, OpRelease, history.Release
		}
		wk.Pending = op
		st.send(st.request(kind, w, a.Replica))
		st.rec.emit(worker(w), history.Invoke, f, wk.Res, func() history.Value {
			v := history.Value{Owner: Process(w), Incarnation: fmt.Sprint(wk.Inc), Token: int64(wk.Token)}
			if a.Kind == Renew {
				v.TTL = int64(m.Config.TTL)
			}
			return v
		})
	case Write, Forge:
		wk.Ops++
		wk.Pending = OpWrite
		msg := st.request(WriteReq, w, 0)
		if a.Kind == Forge {
			s.Forged++
			msg.Token = a.Token
			st.fact.Scenes |= SceneForgery
		}
		msg.PW, msg.PT = w+1, msg.Token
		key := st.d.Key(msg, wk.Ops) // asked again (nameFree) on msg as it was asked
		nameFree(st.m, decKey, key, func(p Perm) uint8 { return st.d.Key(p.msg(msg), wk.Ops) })
		msg.Key = key
		st.send(msg)
		st.rec.emit(worker(w), history.Invoke, history.Write, wk.Res, func() history.Value {
			return history.Value{Token: int64(msg.Token), ResultID: resultID(msg.Res, w, msg.Key),
				Payload: payload(msg.PW, msg.PT), HasPayload: true, Task: ResourceName(msg.Res)}
		})
		if a.Hold { // paused before the request leaves: it leaves when the worker resumes
			wk.Paused, wk.Holding = true, true
			st.rec.emit(worker(w), history.Info, history.Pause, 0, nil)
		}
	case Read:
		wk.Ops++
		wk.Pending, wk.Res = OpRead, a.Res
		st.send(st.request(ReadReq, w, 0))
		st.rec.emit(worker(w), history.Invoke, history.Read, a.Res, func() history.Value {
			return history.Value{ResultID: resultID(a.Res, 0, 0)}
		})
	case Timeout:
		st.giveUp(w)
	case Deliver:
		st.deliver(a.Msg)
	case Drop:
		st.remove(a.Msg)
		s.Drops++
		if a.Msg.Kind == AcquireRep && a.Msg.Code == RepOK {
			st.fact.Scenes |= SceneLostGrant
		}
		st.rec.emit(nemesis, history.Info, history.Drop, 0, func() history.Value { return history.Value{Target: endpoint(&a.Msg)} })
	case Duplicate:
		s.Dups++
		st.send(a.Msg)
		st.rec.emit(nemesis, history.Info, history.Duplicate, 0, func() history.Value { return history.Value{Target: endpoint(&a.Msg)} })
	case Pause:
		wk.Paused = true
		st.rec.emit(worker(w), history.Info, history.Pause, 0, nil)
	case Resume:
		wk.Paused, wk.Holding = false, false // PausedFor runs on until a tick passes with the worker running; a held write leaves
		st.rec.emit(worker(w), history.Info, history.Resume, 0, nil)
	case Crash:
		s.Crashes++
		st.fact.Scenes |= SceneCrash
		st.giveUp(w)
		st.rec.emit(worker(w), history.Info, history.Crash, 0, nil)
		wk.Inc++
		wk.Paused, wk.Holding, wk.PausedFor = false, false, 0 // a held write left just before the crash
		wk.U = st.d.OnCrash(wk.U)
		st.rec.emit(worker(w), history.Info, history.Restart, 0, nil)
	case Restart:
		s.Restarts++
		st.fact.Scenes |= SceneRestart
		st.restart(a.Replica)
		st.rec.emit(coord(a.Replica), history.Info, history.Crash, 0, nil)
		st.rec.emit(coord(a.Replica), history.Info, history.Restart, 0, nil)
	case SinkCrash:
		s.SinkRestarts++
		st.fact.Scenes |= SceneSinkRestart
		st.sinkRestart()
		st.rec.emit(sink, history.Info, history.Crash, 0, nil)
		st.rec.emit(sink, history.Info, history.Restart, 0, nil)
	case SetClock:
		if wk.U.T > 0 { // the worker's timer runs on its clock, which jumped
			wk.U.T = Clamp(int(wk.U.T) - int(a.Skew-wk.Skew))
		}
		wk.Skew = a.Skew
		st.rec.emit(worker(w), history.Info, history.Clock, 0, func() history.Value { return history.Value{Offset: int64(a.Skew)} })
	}
}

// restart applies the design's Restart to a coordinator replica, keeping
// of its answer what restartKept keeps.
func (st *stepper) restart(replica uint8) {
	co := &st.s.Coord[replica]
	in := *co
	out := st.d.Restart(in, st.m.Config.TTL)
	st.restartNameFree(&in, &out) // first: it asks again on the same inputs
	st.restartAgeFree(&in, &out)
	*co = restartKept(&in, out)
}

// restartKept is what the framework keeps of out, the design's Restart of
// coordinator in: the ghost identity of every lease it kept stays with it,
// a lease it made up is no lease; the grant in progress (Wait) is lost and
// the numbers of advances (AdvSeq) are kept, whatever Restart returns: all
// of these are the framework's.
func restartKept(in *Coordinator, out Coordinator) Coordinator {
	out.Wait = [MaxResources]Waiting{} // a grant in progress lives in memory
	out.AdvSeq = in.AdvSeq             // advances are numbered durably: an old one's answer is never taken for a new one's
	for r := range out.Lease {
		l, b := &out.Lease[r], &in.Lease[r]
		if l.Holder != 0 && l.Holder == b.Holder && l.Inc == b.Inc && l.Token == b.Token {
			l.Grant = b.Grant
		} else {
			*l = Lease{} // a lease the design made up is no lease
		}
		// Which grant a record answers with is the ghost's: a record kept
		// keeps it; one the design changed or made up has none, and an
		// answer from it takes the worker's grant of its token, if there
		// is one (Ghost.grantOf), else none (as a forged token).
		for w := range out.Dedup[r] {
			d, b := &out.Dedup[r][w], &in.Dedup[r][w]
			if d.Inc == b.Inc && d.Req == b.Req && d.Token == b.Token {
				d.Grant = b.Grant
			} else {
				d.Grant = 0
			}
		}
	}
	return out
}

// sinkRestart applies the design's SinkRestart, keeping of its answer what
// sinkKept keeps; a two-step write the sink had checked but not committed
// is lost with its memory.
func (st *stepper) sinkRestart() {
	s := st.s
	in := s.Sink
	out := st.d.SinkRestart(in)
	if int(out.NResults) > len(out.Results) {
		panic(&DesignFault{Decision: "SinkRestart", Detail: fmt.Sprintf("returned a sink of %d results, more than its table of %d", out.NResults, len(out.Results))})
	}
	st.sinkRestartNameFree(&in, &out)
	s.Sink = sinkKept(&in, out)
	if st.m.losesResults {
		st.loseResults(&in)
	}
	for i := 0; i < int(s.NMsgs); i++ {
		if s.Msgs[i].Kind == Commit {
			st.remove(s.Msgs[i])
			i--
		}
	}
}

// loseResults records in the ghost, for each resource, the payload of a
// result the sink held before its restart (in) and holds no more, one the
// restart dropped or changed: of those lost so far, the one with the
// highest token (the first of them on a tie). Two different payloads lost
// for one task are two the sink accepted, idempotent-result already, so
// the one kept stands for every payload lost.
func (st *stepper) loseResults(in *Sink) {
	s := st.s
	for i := range int(in.NResults) {
		x := &in.Results[i]
		g := &s.Ghost[x.Res]
		if g.LostWriter != 0 && x.Token <= g.LostToken || s.Sink.holds(x.Res, x.Writer, x.Token) {
			continue
		}
		g.LostWriter, g.LostToken = x.Writer, x.Token
	}
}

// holds reports whether the sink holds a result of resource r with the
// payload writer and token.
func (k *Sink) holds(r, writer, token uint8) bool {
	for i := range int(k.NResults) {
		if x := &k.Results[i]; x.Res == r && x.Writer == writer && x.Token == token {
			return true
		}
	}
	return false
}

// sinkKept is what the framework keeps of out, the design's SinkRestart of
// sink in: its record of the advances it applied (AdvSeq, AdvFence) is the
// framework's, kept whatever SinkRestart returns (a retry is answered as
// before, a late copy ignored); which grant a result came from is the
// ghost's: a result kept as it was keeps it, one the design changed or
// made up came from no grant (as a forged token's); and the results are
// kept in order, the entries past them zero.
func sinkKept(in *Sink, out Sink) Sink {
	out.AdvSeq, out.AdvFence = in.AdvSeq, in.AdvFence
	for i := range out.Results {
		x := &out.Results[i]
		if i >= int(out.NResults) {
			*x = Result{}
			continue
		}
		x.Grant = 0
		for j := range int(in.NResults) {
			if b := &in.Results[j]; b.Res == x.Res && b.Key == x.Key && b.Writer == x.Writer && b.Token == x.Token {
				x.Grant = b.Grant
				break
			}
		}
	}
	out.sortResults()
	return out
}

// request builds a request from worker w about its current resource.
func (st *stepper) request(kind uint8, w, replica uint8) Msg {
	wk := &st.s.Workers[w]
	msg := Msg{Kind: kind, Worker: w, Res: wk.Res, Replica: replica, Inc: wk.Inc, Token: wk.Token,
		Grant: wk.Grant, Live: true, U: st.d.Stamp(wk.U, kind)}
	wk.U = st.d.OnSend(wk.U, kind, st.m.Config.TTL)
	switch kind {
	case AcquireReq:
		msg.Token, msg.Grant, msg.Req = 0, 0, wk.Req
	case ReadReq:
		msg.Token, msg.Grant = 0, 0
	}
	if st.d.ReportsTime && (kind == AcquireReq || kind == RenewReq) {
		msg.Skew = wk.Skew
	}
	return msg
}

// giveUp ends worker w's open operation as info: the worker stops waiting
// and ignores any later reply to it.
func (st *stepper) giveUp(w uint8) {
	s := st.s
	wk := &s.Workers[w]
	if wk.Pending == OpAcquire {
		st.stopWaiting(w)
	}
	if wk.Pending != OpNone {
		st.rec.emit(worker(w), history.Info, opName[wk.Pending], wk.Res, nil)
		wk.Pending = OpNone
	}
	st.forget(w)
}

// forget marks worker w's messages in flight as no longer live: their
// requests still reach their servers, but the worker ignores the replies.
func (st *stepper) forget(w uint8) {
	s := st.s
	for i := 0; i < int(s.NMsgs); i++ {
		if s.Msgs[i].Worker == w && !s.Msgs[i].coordinators() {
			s.Msgs[i].Live = false
		}
	}
}

// stopWaiting is the ghost of worker w's acquire ending (its reply taken,
// or given up): its grants of the acquire's resource whose replies it was
// waiting for count for nothing (Void), but the one it took, which receive
// makes Held. No grant is Pending while its worker does anything else.
func (st *stepper) stopWaiting(w uint8) {
	g := &st.s.Ghost[st.s.Workers[w].Res]
	for i := 1; i <= int(g.Grants); i++ {
		if t := &g.Grant[i]; t.Worker == w+1 && t.Phase == Pending {
			t.Phase = Void
		}
	}
}

var opName = [...]string{OpAcquire: history.Acquire, OpRenew: history.Renew, OpRelease: history.Release,
	OpWrite: history.Write, OpRead: history.Read}

func endpoint(msg *Msg) string {
	if msg.coordinators() {
		return CoordinatorName(msg.Replica)
	}
	return Process(msg.Worker)
}

func (st *stepper) remove(msg Msg) {
	s := st.s
	for i := 0; i < int(s.NMsgs); i++ {
		if s.Msgs[i] == msg {
			s.NMsgs--
			s.Msgs[i] = s.Msgs[s.NMsgs]
			s.Msgs[s.NMsgs] = Msg{}
			return
		}
	}
	panic("model: the message of a deliver, drop or duplicate is not in flight (the action is not enabled)")
}

// countDown moves a timer one tick on.
func countDown(t *int8) { *t = Clamp(int(*t) - 1) }

func (st *stepper) tick() {
	s, m := st.s, st.m
	// Only the slots in use tick: an unused one stays zero, as Encode
	// (which skips it) and Decode assume.
	nw, nr := m.Config.Workers, m.Config.Resources
	for c := range m.Config.Replicas {
		co := &s.Coord[c]
		countDown(&co.U.T)
		for r := range nr {
			if l := &co.Lease[r]; l.Holder != 0 {
				countDown(&l.Left)
			}
			countDown(&co.RU[r].T)
			if wt := &co.Wait[r]; wt.Worker != 0 && wt.Age < m.ageCap() {
				wt.Age++
			}
		}
	}
	for r := range nr {
		countDown(&s.Sink.U[r].T)
	}
	for w := range nw {
		wk := &s.Workers[w]
		countDown(&wk.U.T)
		switch {
		case !wk.Paused:
			wk.PausedFor = 0
		case m.Config.Pause > 0 && int(wk.PausedFor) < m.Config.Pause:
			wk.PausedFor++
		}
	}
	for r := range s.Ghost {
		g := &s.Ghost[r]
		for i := 1; i <= int(g.Grants); i++ {
			t := &g.Grant[i]
			countDown(&t.Early)
			countDown(&t.Late)
			if t.Early <= 0 && t.Phase.Counts() {
				t.Phase = Void
			}
		}
	}
	limit := m.ageCap()
	for i := 0; i < int(s.NMsgs); i++ {
		msg := &s.Msgs[i]
		if (msg.Kind == AcquireReq || msg.Kind == RenewReq || m.Config.Delay > 0) && msg.Age < limit && !held(s, msg) {
			msg.Age++
		}
	}
}

func (st *stepper) reply(req *Msg, kind, code uint8) *Msg {
	rep := Msg{Kind: kind, Worker: req.Worker, Res: req.Res, Replica: req.Replica, Inc: req.Inc,
		Req: req.Req, Code: code, Live: req.Live}
	st.send(rep)
	return &st.s.Msgs[st.s.NMsgs-1]
}

func (st *stepper) deliver(msg Msg) {
	st.remove(msg)
	switch msg.Kind {
	case AcquireReq:
		st.acquire(&msg)
	case RenewReq:
		st.renew(&msg)
	case ReleaseReq:
		st.release(&msg)
	case WriteReq:
		st.write(&msg)
	case Commit:
		st.commit(&msg)
	case ReadReq:
		st.read(&msg)
	case AdvanceReq:
		st.sinkAdvance(&msg)
	case AdvanceRep:
		st.advanced(&msg)
	default:
		st.receive(&msg)
	}
}

// coordinators reports whether m travels between a coordinator and the
// sink (its Worker is unused).
func (m *Msg) coordinators() bool { return m.Kind == AdvanceReq || m.Kind == AdvanceRep }

// advance applies the design's Advance to resource r's fence (to: the
// coordinator's token, 0 for the sink to pick) and returns the new fence,
// recording the coordinator's call: the sink's step is the advance's
// instant.
func (st *stepper) advance(r, to, replica uint8) uint8 {
	f := &st.s.Sink.Fence[st.d.FenceOf(r)]
	*f = st.d.Advance(*f, to)
	st.s.Sink.U[r] = st.d.OnAdvance(st.s.Sink.U[r], st.m.Config.TTL)
	fence := *f
	g := &st.s.Ghost[r]
	g.Advanced, g.LastAdvanced = max(g.Advanced, fence), fence
	g.show(0)
	p := coord(replica)
	st.rec.emit(p, history.Invoke, history.Advance, r, nil)
	st.rec.emit(p, history.OK, history.Advance, r, func() history.Value { return history.Value{Token: int64(fence)} })
	return fence
}

// sinkAdvance is the sink taking an advance request, numbered in order by
// its coordinator (Req) unless nobody waits for it (Req 0: applied, not
// answered). Under FenceFirst the sink picks the token, so it must know
// which request it answers: a retry of the last one it applied gets the
// same fence without moving it again, and a late copy of an older one is
// ignored. An advance that carries its token (CounterFirst) is applied by
// the design's Advance and OnAdvance every time a copy arrives, as by a
// sink that keeps no record of the requests it applied (a max makes a copy
// harmless; a sink that sets the fence to the token is set back by a late
// one); the last one's copies are answered with the fence they leave.
func (st *stepper) sinkAdvance(msg *Msg) {
	s := &st.s.Sink
	r, c := msg.Res, msg.Replica
	last := s.AdvSeq[c][r]
	switch {
	case msg.Req == 0: // GrantThenFence, ReleaseAdvances: nobody waits for it
		st.advance(r, msg.Token, c)
		return
	case st.d.Tokens == CounterFirst:
		fence := st.advance(r, msg.Token, c)
		if msg.Req < last {
			return // the coordinator waits for a later one
		}
		s.AdvSeq[c][r], s.AdvFence[c][r] = msg.Req, fence
	case msg.Req < last:
		return
	case msg.Req > last:
		s.AdvSeq[c][r], s.AdvFence[c][r] = msg.Req, st.advance(r, msg.Token, c)
	}
	st.send(Msg{Kind: AdvanceRep, Res: r, Replica: c, Req: msg.Req, Token: s.AdvFence[c][r]})
}

// advanced is the coordinator taking the sink's answer: the acquire that
// waited for it is granted with the fence as its token.
func (st *stepper) advanced(msg *Msg) {
	co := &st.s.Coord[msg.Replica]
	wt := &co.Wait[msg.Res]
	if wt.Worker == 0 || wt.Seq != msg.Req {
		return // an answer to an advance the coordinator no longer waits for
	}
	wk := &st.s.Workers[wt.Worker-1] // the grant's reply is live if its worker still waits for it
	req := Msg{Kind: AcquireReq, Worker: wt.Worker - 1, Res: msg.Res, Replica: msg.Replica, Inc: wt.Inc, Req: wt.Req,
		Age: wt.Age, Skew: wt.Skew, U: wt.U, Live: wk.WaitsFor(wt.Inc, wt.Req)}
	*wt = Waiting{}
	st.grant(&req, msg.Token)
}

// reanswered is the ghost of an answer of token to acquire msg from a
// record, a token no grant gave that request, naming grant i (0: none):
// the worker counts on its lease from the request's sending, as on a
// grant, so its incarnation's grant of that token is its again,
// unreleased, its earliest deadline no earlier than ttl after that
// sending, and its token the one handed out last (Ghost.Latest). Its
// latest deadline stays the coordinator's: a history dates the lease's
// latest from the answer's ok line, but only if the worker takes it, which
// the answer cannot know (absolute-validity may then be the model's alone,
// never the history's alone). Where no
// grant of the incarnation carries the token (a record of an earlier
// incarnation that the design's Answers takes, or one a Restart changed
// or made up), the answer is a grant in all but name, and the ghost
// issues one (Ghost.Named; deliverable leaves a slot for it), answering
// the request. It returns the grant.
func (st *stepper) reanswered(msg *Msg, token, i uint8) uint8 {
	g := &st.s.Ghost[msg.Res]
	ttl := st.m.Config.TTL
	if i == 0 {
		g.Grants++
		g.Named++
		i = g.Grants
		g.Grant[i] = GrantTruth{Worker: msg.Worker + 1, Inc: msg.Inc, Token: token, Late: Clamp(ttl)}
		g.Answered[msg.Worker].Add(msg.Req)
	}
	g.Latest = i
	t := &g.Grant[i]
	t.Req = msg.Req
	t.Early = max(t.Early, Clamp(ttl-int(msg.Age)))
	switch {
	case t.Early <= 0:
		t.Phase = Void
	case t.Phase != Held:
		t.Phase = Pending
	}
	return i
}

// show notes that a line of the history shows the fence at v: Shown
// keeps the highest such v above Advanced and SeenToken, and is 0 where
// none is (show(0) after either rises). Above both is where it tells
// fencing something they do not, so only there does it tell states apart.
func (g *Ghost) show(v uint8) {
	g.Shown = max(g.Shown, v)
	if g.Shown <= max(g.Advanced, g.SeenToken) {
		g.Shown = 0
	}
}

// recordGrant is the grant an answer from record rec to worker w's
// incarnation inc hands out: the record's, if it is that incarnation's
// grant of the record's token, else the incarnation's latest grant of the
// token (a record a Restart changed or made up, or an earlier
// incarnation's), or 0 if there is none.
func (g *Ghost) recordGrant(w, inc uint8, rec Dedup) uint8 {
	if t := &g.Grant[rec.Grant]; rec.Grant != 0 && t.Worker == w+1 && t.Inc == inc && t.Token == rec.Token {
		return rec.Grant
	}
	return g.grantOf(w, inc, rec.Token)
}

// grantOf is the latest grant of token to worker w's incarnation inc, or
// 0 if there is none.
func (g *Ghost) grantOf(w, inc, token uint8) uint8 {
	for i := g.Grants; i > 0; i-- {
		if t := &g.Grant[i]; t.Worker == w+1 && t.Inc == inc && t.Token == token {
			return i
		}
	}
	return 0
}

func (st *stepper) acquire(msg *Msg) {
	s, d := st.s, st.d
	co := &s.Coord[msg.Replica]
	r, w := msg.Res, msg.Worker
	rec := co.Dedup[r][w]
	ans := d.Answers(rec, *msg)
	decided(st.m, decAnswers, msg, ans, func(q Msg, _ Perm) uint8 { return d.Answers(rec, q) })
	switch codeOf("Answers", ans, answersCodes) {
	case RepOK:
		if rec.Req != 0 {
			rep := st.reply(msg, AcquireRep, RepOK)
			gi := s.Ghost[r].recordGrant(w, msg.Inc, rec)
			if msg.Live && (gi == 0 || s.Ghost[r].Grant[gi].Req != msg.Req) {
				gi = st.reanswered(msg, rec.Token, gi)
				st.fact = Fact{Kind: Reanswered, Res: r, Worker: w, Replica: msg.Replica, Inc: msg.Inc, Req: msg.Req,
					Token: rec.Token, Grant: gi}
			}
			rep.Token, rep.Grant = rec.Token, gi
			return
		}
	case RepHeld:
		st.reply(msg, AcquireRep, RepHeld)
		return
	}
	if wt := &co.Wait[r]; wt.Worker != 0 {
		if wt.Worker == w+1 && wt.Inc == msg.Inc && wt.Req == msg.Req {
			st.send(Msg{Kind: AdvanceReq, Res: r, Replica: msg.Replica, Req: wt.Seq, Token: wt.Token}) // a retry drives the advance again
		} else {
			st.reply(msg, AcquireRep, RepHeld) // the resource is being granted
		}
		return
	}
	l := co.Lease[r]
	valid := d.Valid(l, *msg)
	decided(st.m, decValid, msg, valid, func(q Msg, p Perm) bool { return d.Valid(p.lease(l), q) })
	if valid || d.Hold(co.U, co.RU[r]) {
		st.reply(msg, AcquireRep, RepHeld)
		return
	}
	var token uint8
	if d.Tokens != FenceFirst {
		c := &co.Counter[d.CounterOf(r)]
		*c = d.NextToken(*c)
		token = *c
	}
	if d.Tokens == FenceFirst || d.Tokens == CounterFirst {
		// Ask the sink to advance the fence, and grant when it answers.
		co.AdvSeq[r]++
		co.Wait[r] = Waiting{Worker: w + 1, Inc: msg.Inc, Req: msg.Req, Age: msg.Age, Skew: msg.Skew, U: msg.U,
			Seq: co.AdvSeq[r], Token: token}
		st.send(Msg{Kind: AdvanceReq, Res: r, Replica: msg.Replica, Req: co.AdvSeq[r], Token: token})
		return
	}
	st.grant(msg, token)
	if d.Tokens == GrantThenFence {
		st.send(Msg{Kind: AdvanceReq, Res: r, Replica: msg.Replica, Token: token})
	}
}

// grant issues a new grant of token to request msg: the lease, the
// deduplication record, the ghost truth, and the reply.
func (st *stepper) grant(msg *Msg, token uint8) {
	s, m, d := st.s, st.m, st.d
	co := &s.Coord[msg.Replica]
	r, w := msg.Res, msg.Worker
	g := &s.Ghost[r]
	for i := 1; i <= int(g.Grants); i++ {
		if g.Grant[i].Phase != Released {
			st.fact.Scenes |= SceneTakeover
		}
	}
	g.Grants++
	gi := g.Grants
	g.Latest = gi
	g.Grant[gi] = GrantTruth{Worker: w + 1, Inc: msg.Inc, Token: token,
		Early: Clamp(m.Config.TTL - int(msg.Age)), Late: Clamp(m.Config.TTL), Req: msg.Req}
	if !msg.Live || g.Grant[gi].Early <= 0 {
		g.Grant[gi].Phase = Void // its worker no longer waits for it, or it has lapsed
	}
	left := d.Deadline(Lease{}, *msg, m.Config.TTL)
	decided(st.m, decDeadline, msg, left, func(q Msg, _ Perm) int8 { return d.Deadline(Lease{}, q, m.Config.TTL) })
	co.Lease[r] = Lease{Holder: w + 1, Inc: msg.Inc, Token: token, Grant: gi, Left: left}
	st.onLease(LeaseGranted, &co.RU[r], co.Lease[r])
	co.Dedup[r][w] = Dedup{Inc: msg.Inc, Req: msg.Req, Token: token, Grant: gi}
	g.Answered[w].Add(msg.Req)
	st.fact = Fact{Kind: Granted, Res: r, Worker: w, Replica: msg.Replica, Inc: msg.Inc, Req: msg.Req,
		Token: token, Grant: gi, Scenes: st.fact.Scenes}
	rep := st.reply(msg, AcquireRep, RepOK)
	rep.Token, rep.Grant = token, gi
}

func (st *stepper) renew(msg *Msg) {
	s, m, d := st.s, st.m, st.d
	co := &s.Coord[msg.Replica]
	l := &co.Lease[msg.Res]
	if RefOwns(*l, *msg) && l.Left == 0 {
		st.fact.Scenes |= SceneRenewAtDeadline
	}
	old := *l
	code := d.Renew(old, *msg)
	decided(st.m, decRenew, msg, code, func(q Msg, p Perm) uint8 { return d.Renew(p.lease(old), q) })
	code = codeOf("Renew", code, renewCodes)
	if code != RepOK || l.Holder == 0 {
		if code == RepOK {
			code = RepNotHolder // there is no lease to renew, whatever the design says
		}
		st.reply(msg, RenewRep, code)
		return
	}
	// The renewer counts on its own lease again, the grant its request
	// names, whoever holds the coordinator's (a design may say ok to a
	// renew from another worker, as release() has it); a request that
	// names none extends the coordinator's.
	gi := msg.Grant
	if gi == 0 {
		gi = l.Grant
	}
	st.fact = Fact{Kind: Renewed, Res: msg.Res, Worker: msg.Worker, Replica: msg.Replica, Inc: msg.Inc,
		Token: msg.Token, Grant: gi, Scenes: st.fact.Scenes}
	l.Left = d.Deadline(old, *msg, m.Config.TTL)
	decided(st.m, decDeadline, msg, l.Left, func(q Msg, p Perm) int8 { return d.Deadline(p.lease(old), q, m.Config.TTL) })
	st.onLease(LeaseRenewed, &co.RU[msg.Res], *l)
	gt := &s.Ghost[msg.Res].Grant[gi]
	gt.Early = max(gt.Early, Clamp(m.Config.TTL-int(msg.Age)))
	gt.Late = Clamp(m.Config.TTL)
	if gt.Early > 0 && gt.Phase != Released {
		gt.Phase = Held
	}
	st.reply(msg, RenewRep, RepOK)
}

func (st *stepper) release(msg *Msg) {
	s, d := st.s, st.d
	co := &s.Coord[msg.Replica]
	l := &co.Lease[msg.Res]
	if l.Holder == 0 {
		st.reply(msg, ReleaseRep, RepNotHolder)
		return
	}
	old := *l
	code := d.Release(old, *msg)
	decided(st.m, decRelease, msg, code, func(q Msg, p Perm) uint8 { return d.Release(p.lease(old), q) })
	if codeOf("Release", code, releaseCodes) != RepOK {
		st.reply(msg, ReleaseRep, RepNotHolder)
		return
	}
	if msg.Grant == l.Grant {
		// Only the grant's holder gives it up: a release the design
		// accepts from another worker frees the lease at the coordinator,
		// while its holder goes on counting on it.
		t := &s.Ghost[msg.Res].Grant[l.Grant]
		t.Phase = Released
	}
	st.onLease(LeaseReleased, &co.RU[msg.Res], *l)
	*l = Lease{}
	if d.ReleaseAdvances {
		st.send(Msg{Kind: AdvanceReq, Res: msg.Res, Replica: msg.Replica}) // nobody waits for it
	}
	st.reply(msg, ReleaseRep, RepOK)
}

// onLease sets ru, a resource's coordinator registers, to what the
// design's OnLease makes of them after event e on lease l.
func (st *stepper) onLease(e LeaseEvent, ru *Regs, l Lease) {
	in, ttl := *ru, st.m.Config.TTL
	*ru = st.d.OnLease(e, in, l, ttl)
	nameFree(st.m, decOnLease, *ru, func(p Perm) Regs { return st.d.OnLease(e, in, p.lease(l), ttl) })
}

// view is what the sink's decisions see of resource r: the coordinator's
// lease record only when asking is a step of its own (SinkView.Lease).
func (st *stepper) view(r uint8, ask bool) SinkView {
	s := st.s
	v := SinkView{Fence: s.Sink.Fence[st.d.FenceOf(r)], U: s.Sink.U[r]}
	if ask {
		v.Lease = s.Coord[0].Lease[r]
	}
	return v
}

// write is the sink's write: the design's check, then (in the same step,
// unless the design commits in a second one) the idempotent result write.
func (st *stepper) write(msg *Msg) {
	d := st.d
	g := &st.s.Ghost[msg.Res]
	if msg.Grant < g.Observed {
		st.fact.Scenes |= SceneStaleWrite
	}
	if d.ReplayFirst && st.find(msg) != nil {
		st.store(msg) // the idempotency record answers before the token is looked at
		return
	}
	v := st.view(msg.Res, d.Commit != nil)
	code := d.Check(v, *msg)
	decided(st.m, decCheck, msg, code, func(q Msg, p Perm) uint8 { return d.Check(p.view(v), q) })
	if code = codeOf("Check", code, checkCodes); code != RepOK {
		st.reject(msg, code)
		return
	}
	if d.Commit != nil {
		u := st.s.Sink.U[msg.Res]
		st.s.Sink.U[msg.Res] = d.Prepared(u, *msg)
		decided(st.m, decPrepared, msg, st.s.Sink.U[msg.Res], func(q Msg, _ Perm) Regs { return d.Prepared(u, q) })
		c := *msg
		c.Kind = Commit
		st.send(c)
		return
	}
	st.store(msg)
}

// commit is the second step of a two-step write.
func (st *stepper) commit(msg *Msg) {
	d, v := st.d, st.view(msg.Res, false)
	code := d.Commit(v, *msg)
	decided(st.m, decCommit, msg, code, func(q Msg, p Perm) uint8 { return d.Commit(p.view(v), q) })
	if code = codeOf("Commit", code, checkCodes); code != RepOK {
		st.reject(msg, code)
		return
	}
	st.store(msg)
}

// reject answers a write the sink refused.
func (st *stepper) reject(msg *Msg, code uint8) {
	if code == RepFenced {
		st.fact = Fact{Kind: WriteFenced, Res: msg.Res, Worker: msg.Worker, Token: msg.Token, Grant: msg.Grant,
			Scenes: st.fact.Scenes}
	}
	st.applied(msg, code)
	st.reply(msg, WriteRep, code)
}

// applied records the sink's side of a write: the instant it applied or
// rejected it, with the fence its token met (history format: apply), and
// the fence and the token taken that it shows (Ghost.Shown).
func (st *stepper) applied(msg *Msg, code uint8) {
	fence := st.s.Sink.Fence[st.d.FenceOf(msg.Res)]
	g := &st.s.Ghost[msg.Res]
	g.show(fence)
	if code == RepOK || code == RepReplayed {
		g.show(msg.Token)
	}
	st.rec.emit(sink, history.Info, history.Apply, msg.Res, func() history.Value {
		v := history.Value{Writer: Process(msg.Worker), Token: int64(msg.Token), ResultID: resultID(msg.Res, msg.Worker, msg.Key),
			Payload: payload(msg.PW, msg.PT), HasPayload: true, Task: ResourceName(msg.Res),
			Fence: int64(fence), HasFence: true}
		switch code {
		case RepOK:
			v.Outcome = history.Written
		case RepReplayed:
			v.Outcome = history.Replayed
		default:
			v.Error = codeNames[code]
		}
		return v
	})
}

// find returns the stored result under msg's key, or nil. A per-attempt key
// belongs to its writer.
func (st *stepper) find(msg *Msg) *Result {
	s := st.s
	for i := 0; i < int(s.Sink.NResults); i++ {
		res := &s.Sink.Results[i]
		if res.Res == msg.Res && res.Key == msg.Key && (msg.Key == 0 || res.Writer == msg.PW) {
			return res
		}
	}
	return nil
}

// store stores the result unless another payload holds its key.
func (st *stepper) store(msg *Msg) {
	s := st.s
	code := RepOK
	if res := st.find(msg); res != nil {
		code = RepConflict
		if res.Writer == msg.PW && res.Token == msg.PT {
			code = RepReplayed
		}
	} else {
		if int(s.Sink.NResults) == len(s.Sink.Results) {
			panic(&DesignFault{Decision: "Key", Detail: fmt.Sprintf("keys more results than the sink's table of %d holds (New tried only Key(Msg{}, 1) and Key(Msg{Worker: 1}, 2))", len(s.Sink.Results))})
		}
		s.Sink.Results[s.Sink.NResults] = Result{Res: msg.Res, Key: msg.Key, Writer: msg.PW, Token: msg.PT,
			Grant: msg.Grant}
		s.Sink.NResults++
		s.Sink.sortResults()
	}
	st.applied(msg, code)
	if code != RepConflict {
		d, v := st.d, st.view(msg.Res, false)
		f := &s.Sink.Fence[d.FenceOf(msg.Res)]
		*f, s.Sink.U[msg.Res] = d.Accepted(v, *msg)
		decided(st.m, decAccepted, msg, sinkAnswer{*f, s.Sink.U[msg.Res]}, func(q Msg, p Perm) sinkAnswer {
			f, u := d.Accepted(p.view(v), q)
			return sinkAnswer{f, u}
		})
		st.fact = Fact{Kind: WriteAccepted, Res: msg.Res, Worker: msg.Worker, Token: msg.Token, Grant: msg.Grant,
			Scenes: st.fact.Scenes}
	}
	st.reply(msg, WriteRep, code)
}

func (st *stepper) read(msg *Msg) {
	s := st.s
	rep := st.reply(msg, ReadRep, RepOK)
	rep.U = s.Sink.U[msg.Res].A
	for i := 0; i < int(s.Sink.NResults); i++ {
		if res := s.Sink.Results[i]; res.Res == msg.Res && res.Key == 0 {
			rep.PW, rep.PT = res.Writer, res.Token
		}
	}
}

// receive hands a reply to its worker, which completes its operation if the
// reply answers it and ignores it otherwise.
func (st *stepper) receive(msg *Msg) {
	s, d := st.s, st.d
	w := msg.Worker
	wk := &s.Workers[w]
	want := replyOp[msg.Kind]
	if !msg.Live || wk.Pending != want || msg.Inc != wk.Inc || (want == OpAcquire && msg.Req != wk.Req) {
		return
	}
	wk.Pending = OpNone
	st.forget(w) // the operation is over: copies of its requests and replies no longer count
	if want == OpAcquire {
		st.stopWaiting(w)
	}
	u := wk.U
	wk.U = d.OnReply(u, want, *msg, st.m.Config.TTL)
	decided(st.m, decOnReply, msg, wk.U, func(q Msg, _ Perm) Regs { return d.OnReply(u, want, q, st.m.Config.TTL) })
	f := opName[want]
	if msg.Code != RepOK && msg.Code != RepReplayed {
		if msg.Code != RepHeld && msg.Code != RepConflict {
			wk.Token, wk.Grant = 0, 0 // the lease is gone
		}
		st.rec.emit(worker(w), history.Fail, f, msg.Res, func() history.Value {
			return history.Value{Error: codeNames[msg.Code]}
		})
		return
	}
	switch want {
	case OpAcquire:
		wk.Token, wk.Grant, wk.Res = msg.Token, msg.Grant, msg.Res
		g := &s.Ghost[msg.Res]
		g.Observed = max(g.Observed, msg.Grant)
		g.SeenToken = max(g.SeenToken, msg.Token)
		g.show(0)
		if t := &g.Grant[msg.Grant]; msg.Grant != 0 && t.Early > 0 && t.Phase != Released {
			t.Phase = Held
		}
		st.fact = Fact{Kind: GrantSeen, Res: msg.Res, Worker: w, Replica: msg.Replica, Inc: msg.Inc, Token: msg.Token, Grant: msg.Grant}
	case OpRelease:
		wk.Token, wk.Grant = 0, 0
	}
	st.rec.emit(worker(w), history.OK, f, msg.Res, func() history.Value {
		var v history.Value
		switch want {
		case OpAcquire:
			v = history.Value{Token: int64(msg.Token), TTL: int64(st.m.Config.TTL)}
		case OpWrite:
			v.Outcome = history.Written
			if msg.Code == RepReplayed {
				v.Outcome = history.Replayed
			}
		case OpRead:
			if msg.PW != 0 {
				v.Payload, v.HasPayload = payload(msg.PW, msg.PT), true
			}
		}
		return v
	})
}

// replyOp is the operation a reply kind answers.
var replyOp = [...]uint8{AcquireRep: OpAcquire, RenewRep: OpRenew, ReleaseRep: OpRelease, WriteRep: OpWrite,
	ReadRep: OpRead}

var codeNames = [...]string{RepHeld: history.Held, RepExpired: history.Expired, RepNotHolder: history.NotHolder,
	RepFenced: history.Fenced, RepConflict: history.Conflict}

func requestID(w, inc, req uint8) string {
	return fmt.Sprintf("%s-%d-%d", Process(w), inc, req)
}

// resultID is the idempotency key of a result: the task's identity, or with
// a per-attempt key, the write attempt's own id.
func resultID(r, w, key uint8) string {
	if key == 0 {
		return ResourceName(r)
	}
	return fmt.Sprintf("%s/%s-%d", ResourceName(r), Process(w), key)
}

func payload(writer, token uint8) string {
	return fmt.Sprintf("%s@%d", Process(writer-1), token)
}
