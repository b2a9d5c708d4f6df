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
	st := stepper{m: m, s: s, rec: rec}
	st.do(a)
	s.sortMsgs()
	return rec.evs, st.fact
}

// Next is Step without events: the explorer's inner loop, which allocates
// nothing.
func (m *Machine) Next(s *State, a Action) Fact {
	st := stepper{m: m, s: s}
	st.do(a)
	s.sortMsgs()
	return st.fact
}

type stepper struct {
	m    *Machine
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
	id    uint8
	coord bool // id is a coordinator replica, not a worker
	nem   bool // the nemesis
}

func worker(w uint8) proc { return proc{id: w} }
func coord(c uint8) proc  { return proc{id: c, coord: true} }
func (p proc) name() string {
	switch {
	case p.nem:
		return history.Nemesis
	case p.coord:
		return CoordinatorName(p.id)
	}
	return Process(p.id)
}

var nemesis = proc{nem: true}

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

func (st *stepper) do(a Action) {
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
			msg.Token = m.forgedToken()
		}
		if m.Protocol.RequestIDKey {
			msg.Req = wk.Ops
		}
		msg.PW, msg.PT = w+1, msg.Token
		st.send(msg)
		st.rec.emit(worker(w), history.Invoke, history.Write, wk.Res, func() history.Value {
			return history.Value{Token: int64(msg.Token), ResultID: resultID(msg.Res, w, msg.Req),
				Payload: payload(msg.PW, msg.PT), HasPayload: true, Task: ResourceName(msg.Res)}
		})
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
		st.rec.emit(nemesis, history.Info, history.Drop, 0, func() history.Value { return history.Value{Target: endpoint(&a.Msg)} })
	case Duplicate:
		s.Dups++
		st.send(a.Msg)
		st.rec.emit(nemesis, history.Info, history.Duplicate, 0, func() history.Value { return history.Value{Target: endpoint(&a.Msg)} })
	case Pause:
		wk.Paused = true
		st.rec.emit(worker(w), history.Info, history.Pause, 0, nil)
	case Resume:
		wk.Paused = false
		st.rec.emit(worker(w), history.Info, history.Resume, 0, nil)
	case Crash:
		s.Crashes++
		st.giveUp(w)
		st.rec.emit(worker(w), history.Info, history.Crash, 0, nil)
		wk.Inc++
		wk.Paused = false
		st.rec.emit(worker(w), history.Info, history.Restart, 0, nil)
	case Restart:
		s.Restarts++
		co := &s.Coord[a.Replica]
		if m.Protocol.VolatileCounter {
			co.Counter = [MaxResources]uint8{}
		}
		if m.Protocol.FailoverResetsTTL {
			for r := range co.Lease {
				if l := &co.Lease[r]; l.Holder != 0 && l.Left > 0 {
					l.Left = int8(m.Config.TTL)
				}
			}
		}
		st.rec.emit(coord(a.Replica), history.Info, history.Crash, 0, nil)
		st.rec.emit(coord(a.Replica), history.Info, history.Restart, 0, nil)
	case SetClock:
		if m.Protocol.HolderClock && wk.Token != 0 {
			wk.Left = clampLeft(int(wk.Left) - int(a.Skew-wk.Skew)) // the holder's clock jumped
		}
		wk.Skew = a.Skew
		st.rec.emit(worker(w), history.Info, history.Clock, 0, func() history.Value { return history.Value{Offset: int64(a.Skew)} })
	}
}

// request builds a request from worker w about its current resource.
func (st *stepper) request(kind uint8, w, replica uint8) Msg {
	wk := &st.s.Workers[w]
	msg := Msg{Kind: kind, Worker: w, Res: wk.Res, Replica: replica, Inc: wk.Inc, Token: wk.Token,
		Grant: wk.Grant, Live: true}
	switch kind {
	case AcquireReq:
		msg.Token, msg.Grant, msg.Req = 0, 0, wk.Req
	case ReadReq:
		msg.Token, msg.Grant = 0, 0
	}
	if st.m.readsClock() && (kind == AcquireReq || kind == RenewReq) {
		msg.Skew = wk.Skew
	}
	return msg
}

// giveUp ends worker w's open operation as info: the worker stops waiting
// and ignores any later reply to it.
func (st *stepper) giveUp(w uint8) {
	s := st.s
	wk := &s.Workers[w]
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
		if s.Msgs[i].Worker == w && s.Msgs[i].Kind != AdvanceReq {
			s.Msgs[i].Live = false
		}
	}
}

var opName = [...]string{OpAcquire: history.Acquire, OpRenew: history.Renew, OpRelease: history.Release,
	OpWrite: history.Write, OpRead: history.Read}

func endpoint(msg *Msg) string {
	if msg.Kind == AdvanceReq {
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

func (st *stepper) tick() {
	s, m := st.s, st.m
	for c := range s.Coord {
		for r := range s.Coord[c].Lease {
			l := &s.Coord[c].Lease[r]
			if l.Holder != 0 {
				l.Left = clampLeft(int(l.Left) - 1)
			}
		}
	}
	if m.Protocol.SinkDeadline {
		for r := range s.Sink.Left {
			s.Sink.Left[r] = clampLeft(int(s.Sink.Left[r]) - 1)
		}
	}
	for r := range s.Ghost {
		g := &s.Ghost[r]
		for i := 1; i <= int(g.Grants); i++ {
			g.Grant[i].Early = clampLeft(int(g.Grant[i].Early) - 1)
			g.Grant[i].Late = clampLeft(int(g.Grant[i].Late) - 1)
		}
	}
	if m.Protocol.HolderClock {
		for w := range s.Workers {
			if wk := &s.Workers[w]; wk.Token != 0 {
				wk.Left = clampLeft(int(wk.Left) - 1)
			}
		}
	}
	limit := m.ageCap()
	for i := 0; i < int(s.NMsgs); i++ {
		msg := &s.Msgs[i]
		if (msg.Kind == AcquireReq || msg.Kind == RenewReq) && msg.Age < limit {
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
		st.advanceTo(msg.Res, msg.Token, msg.Replica)
	default:
		st.receive(&msg)
	}
}

// advance moves the sink's fence of r up by one and returns it (the article's
// FencedSink.advance), recording the coordinator's call.
func (st *stepper) advance(r, replica uint8) uint8 {
	f := &st.s.Sink.Fence[st.m.fenceIndex(r)]
	*f++
	st.recordAdvance(r, *f, replica)
	return *f
}

// advanceTo raises the sink's fence of r to token (counter-based tokens).
func (st *stepper) advanceTo(r, token, replica uint8) {
	f := &st.s.Sink.Fence[st.m.fenceIndex(r)]
	if st.m.Protocol.VolatileCounter || token > *f {
		*f = token
	}
	st.recordAdvance(r, *f, replica)
}

func (st *stepper) recordAdvance(r, fence, replica uint8) {
	p := coord(replica)
	st.rec.emit(p, history.Invoke, history.Advance, r, nil)
	st.rec.emit(p, history.OK, history.Advance, r, func() history.Value { return history.Value{Token: int64(fence)} })
}

func (st *stepper) acquire(msg *Msg) {
	s, m, p := st.s, st.m, &st.m.Protocol
	co := &s.Coord[msg.Replica]
	r, w := msg.Res, msg.Worker
	if m.dedupHit(s, msg) {
		d := co.Dedup[r][w]
		rep := st.reply(msg, AcquireRep, RepOK)
		rep.Token, rep.Grant = d.Token, d.Grant
		return
	}
	if m.leaseValid(&co.Lease[r], msg) {
		st.reply(msg, AcquireRep, RepHeld)
		return
	}
	var token uint8
	switch {
	case p.GrantBeforeFence || p.VolatileCounter:
		ci := m.fenceIndex(r)
		co.Counter[ci]++
		token = co.Counter[ci]
		if !p.GrantBeforeFence {
			st.advanceTo(r, token, msg.Replica)
		}
	default:
		token = st.advance(r, msg.Replica)
	}
	g := &s.Ghost[r]
	g.Grants++
	gi := g.Grants
	age := int(msg.Age)
	g.Grant[gi] = GrantTruth{Worker: w + 1, Inc: msg.Inc, Token: token,
		Early: clampLeft(m.Config.TTL - age), Late: int8(m.Config.TTL)}
	left := int8(m.Config.TTL)
	if p.WorkerClock {
		left = clampLeft(reported(msg) + m.Config.TTL)
	}
	co.Lease[r] = Lease{Holder: w + 1, Inc: msg.Inc, Token: token, Grant: gi, Left: left}
	if p.SinkDeadline {
		s.Sink.Left[r] = left
	}
	answer := Dedup{Inc: msg.Inc, Req: msg.Req, Token: token, Grant: gi}
	if !p.NoAcquireDedup {
		co.Dedup[r][w] = answer
	}
	g.Answer[w] = answer
	st.fact = Fact{Kind: Granted, Res: r, Worker: w, Replica: msg.Replica, Inc: msg.Inc, Req: msg.Req,
		Token: token, Grant: gi}
	rep := st.reply(msg, AcquireRep, RepOK)
	rep.Token, rep.Grant = token, gi
	if p.GrantBeforeFence {
		st.send(Msg{Kind: AdvanceReq, Res: r, Replica: msg.Replica, Token: token})
	}
}

func (st *stepper) renew(msg *Msg) {
	s, m, p := st.s, st.m, &st.m.Protocol
	l := &s.Coord[msg.Replica].Lease[msg.Res]
	holder := l.Holder == msg.Worker+1 && l.Inc == msg.Inc
	if p.RenewTokenOnly {
		holder = l.Holder != 0
	}
	if !holder || l.Token != msg.Token {
		st.reply(msg, RenewRep, RepNotHolder)
		return
	}
	now := 0
	if p.WorkerClock {
		now = reported(msg)
	}
	alive := now < int(l.Left) || (p.RenewAtDeadline && now == int(l.Left))
	if !alive {
		st.reply(msg, RenewRep, RepExpired)
		return
	}
	st.fact = Fact{Kind: Renewed, Res: msg.Res, Worker: msg.Worker, Replica: msg.Replica, Inc: msg.Inc,
		Token: msg.Token, Grant: l.Grant}
	switch {
	case p.WorkerClock || p.RenewFromSendTime:
		l.Left = clampLeft(reported(msg) + m.Config.TTL)
	default:
		l.Left = int8(m.Config.TTL)
	}
	if p.SinkDeadline {
		s.Sink.Left[msg.Res] = l.Left
	}
	gt := &s.Ghost[msg.Res].Grant[l.Grant]
	gt.Early = max(gt.Early, clampLeft(m.Config.TTL-int(msg.Age)))
	gt.Late = int8(m.Config.TTL)
	st.reply(msg, RenewRep, RepOK)
}

func (st *stepper) release(msg *Msg) {
	s := st.s
	l := &s.Coord[msg.Replica].Lease[msg.Res]
	if l.Holder != msg.Worker+1 || l.Inc != msg.Inc || l.Token != msg.Token {
		st.reply(msg, ReleaseRep, RepNotHolder)
		return
	}
	s.Ghost[msg.Res].Grant[l.Grant].Released = true
	*l = Lease{}
	st.reply(msg, ReleaseRep, RepOK)
}

// write is the sink's write: the token check, then (atomically, unless the
// protocol is check-then-write) the idempotent result write.
func (st *stepper) write(msg *Msg) {
	s, p := st.s, &st.m.Protocol
	if p.DedupBeforeFence && st.stored(msg) {
		st.commit(msg) // the idempotency record answers before the fence is looked at
		return
	}
	var pass bool
	switch {
	case p.SchedulerCheck:
		// The scheduler checks the attempt against its own bookkeeping; the
		// target then writes whatever it is sent.
		l := &s.Coord[msg.Replica].Lease[msg.Res]
		pass = l.Holder == msg.Worker+1 && l.Inc == msg.Inc && l.Token == msg.Token && l.Left > 0
	case p.NoFence:
		pass = true
	default:
		fence := s.Sink.Fence[st.m.fenceIndex(msg.Res)]
		pass = msg.Token == fence || (p.AcceptHigherToken && msg.Token > fence)
	}
	if !pass {
		st.fact = Fact{Kind: WriteFenced, Res: msg.Res, Worker: msg.Worker, Token: msg.Token, Grant: msg.Grant}
		st.writeReply(msg, RepFenced)
		return
	}
	if p.SinkDeadline && s.Sink.Left[msg.Res] <= 0 {
		st.writeReply(msg, RepExpired)
		return
	}
	if p.CheckThenWrite || p.SchedulerCheck {
		c := *msg
		c.Kind = Commit
		st.send(c)
		return
	}
	st.commit(msg)
}

// stored reports whether the sink holds a result under msg's key.
func (st *stepper) stored(msg *Msg) bool {
	s := st.s
	for i := 0; i < int(s.Sink.NResults); i++ {
		if res := &s.Sink.Results[i]; res.Res == msg.Res && res.Key == msg.Req {
			return true
		}
	}
	return false
}

// commit stores the result unless another payload holds its key.
func (st *stepper) commit(msg *Msg) {
	s, p := st.s, &st.m.Protocol
	code := RepOK
	found := false
	for i := 0; i < int(s.Sink.NResults); i++ {
		res := &s.Sink.Results[i]
		if res.Res == msg.Res && res.Key == msg.Req {
			found = true
			code = RepConflict
			if res.Writer == msg.PW && res.Token == msg.PT {
				code = RepReplayed
			}
		}
	}
	if !found {
		if s.Sink.NResults == MaxResults {
			panic("model: sink result table full; lower ops")
		}
		s.Sink.Results[s.Sink.NResults] = Result{Res: msg.Res, Key: msg.Req, Writer: msg.PW, Token: msg.PT,
			Grant: msg.Grant}
		s.Sink.NResults++
		s.sortResults()
	}
	if code != RepConflict {
		if p.AcceptHigherToken {
			f := &s.Sink.Fence[st.m.fenceIndex(msg.Res)]
			*f = max(*f, msg.Token)
		}
		st.fact = Fact{Kind: WriteAccepted, Res: msg.Res, Worker: msg.Worker, Token: msg.Token, Grant: msg.Grant}
	}
	st.writeReply(msg, code)
}

func (st *stepper) writeReply(msg *Msg, code uint8) {
	st.reply(msg, WriteRep, code)
}

func (st *stepper) read(msg *Msg) {
	s := st.s
	rep := st.reply(msg, ReadRep, RepOK)
	for i := 0; i < int(s.Sink.NResults); i++ {
		if res := s.Sink.Results[i]; res.Res == msg.Res && res.Key == 0 {
			rep.PW, rep.PT = res.Writer, res.Token
		}
	}
}

// receive hands a reply to its worker, which completes its operation if the
// reply answers it and ignores it otherwise.
func (st *stepper) receive(msg *Msg) {
	s := st.s
	w := msg.Worker
	wk := &s.Workers[w]
	want := replyOp[msg.Kind]
	if !msg.Live || wk.Pending != want || msg.Inc != wk.Inc || (want == OpAcquire && msg.Req != wk.Req) {
		return
	}
	wk.Pending = OpNone
	f := opName[want]
	if msg.Code != RepOK && msg.Code != RepReplayed {
		if msg.Code != RepHeld && msg.Code != RepConflict {
			wk.Token, wk.Grant, wk.Left = 0, 0, 0 // the lease is gone
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
		st.fact = Fact{Kind: GrantSeen, Res: msg.Res, Worker: w, Replica: msg.Replica, Token: msg.Token, Grant: msg.Grant}
	case OpRelease:
		wk.Token, wk.Grant = 0, 0
	}
	if st.m.Protocol.HolderClock && (want == OpAcquire || want == OpRenew) {
		wk.Left = int8(st.m.Config.TTL) // the holder counts its lease from the reply
	}
	if wk.Token == 0 {
		wk.Left = 0
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
	ReadRep: OpRead, AdvanceReq: OpNone}

var codeNames = [...]string{RepHeld: history.Held, RepExpired: history.Expired, RepNotHolder: history.NotHolder,
	RepFenced: history.Fenced, RepConflict: history.Conflict}

func requestID(w, inc, req uint8) string {
	return fmt.Sprintf("%s-%d-%d", Process(w), inc, req)
}

// resultID is the idempotency key of a result: the task's identity, or with
// request-id keys, the write attempt's own id.
func resultID(r, w, attempt uint8) string {
	if attempt == 0 {
		return ResourceName(r)
	}
	return fmt.Sprintf("%s/%s-%d", ResourceName(r), Process(w), attempt)
}

func payload(writer, token uint8) string {
	return fmt.Sprintf("%s@%d", Process(writer-1), token)
}
