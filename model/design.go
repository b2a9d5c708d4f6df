package model

// Design is a lease + fencing protocol: every decision its coordinator,
// sink and holders make, each a pure function of fixed-size values (or, for
// a choice among the framework's mechanisms, a plain value). A nil function
// takes the reference protocol's decision, the Ref* function of the same
// name, so a design is the few decisions it changes:
//
//	late := model.Design{Deadline: func(old model.Lease, req model.Msg, ttl int) int8 {
//		return model.Clamp(int(old.Left) + ttl) // renewal extends the old deadline
//	}}
//
// The world is the framework's, never a design's: the network (delays,
// losses, duplicates), the clocks, the faults, and the ghost truth the
// invariants judge (which grant a token came from, the deadlines a holder
// may count on, releases). Decisions get copies of what they read and
// return what they decide, so no design can change what counts as a
// violation; nor does any decision see that truth: in its inputs the
// ghost's grant (Msg.Grant, Lease.Grant, Dedup.Grant, Result.Grant) and
// whether a message's sender still waits for it (Msg.Live) are zero, for
// no real process knows them. A design keeps its own state in Regs (per
// worker, per resource at the coordinator and at the sink, per coordinator
// replica) and in one byte per message (Msg.U).
type Design struct {
	// ReportsTime makes workers put their clock reading in acquire and renew
	// requests (Msg.Skew, with Msg.Age the ticks since sending), for
	// decisions that judge time on the worker's clock (Reported). A design
	// whose decisions read Msg.Age must set it: without it, a search's
	// timers and ages reductions (ReduceTimers, ReduceAges) take ages to be
	// read only by the framework, and cut them, or let a younger request
	// stand for an older one; so must one whose Restart reads the ages of
	// the acquires the coordinator waits to grant (Waiting.Age). It is
	// checked, not trusted: without it, New refuses a design whose
	// decisions it sees answer differently for a message of another age
	// (it probes each decision the design sets on a few inputs), and a step
	// whose decision answers differently for its message (or Restart for
	// its waiting acquires) at another age a run can give it panics with a
	// DesignFault naming ReportsTime, which a search reports as the
	// design's fault, not as a verdict.
	ReportsTime bool
	// Asymmetric says the design's decisions tell workers or resources
	// apart (they read worker or resource numbers: Msg.Worker, Lease.Holder,
	// Msg.Res, a register holding one), so a search must not treat workers,
	// nor resources, as interchangeable (no symmetry reduction). It is
	// checked, not trusted: without it, a step that takes a decision the
	// design sets itself takes it again on its inputs renamed by every
	// renaming of workers and resources the config allows, and panics with
	// a DesignFault naming Asymmetric if the answer changes (renamed, for
	// Restart and SinkRestart), which a search reports as the design's
	// fault. The framework never renames a design's registers, keys or
	// message bytes, so a design that keeps a number there must set it too.
	Asymmetric bool

	// Valid reports whether lease l still excludes other applicants when
	// request req reaches the coordinator.
	Valid func(l Lease, req Msg) bool
	// Hold reports whether the coordinator must not grant resource r, free
	// or expired, now: u are its replica-wide registers, ru the resource's.
	Hold func(u, ru Regs) bool
	// Answers is what the coordinator's record d of the last request it
	// granted to req's worker (d.Req is 0 when there is none) makes of acquire
	// req: RepOK answers it with that grant (a retry), RepHeld refuses it (a
	// request older than the record: a late copy), 0 lets it ask for a new
	// grant.
	Answers func(d Dedup, req Msg) uint8
	// Tokens is where a grant's token comes from and when the sink's fence
	// moves.
	Tokens TokenPlan
	// CounterOf is which of the coordinator's counters resource r's tokens
	// come from (TokenPlan other than FenceFirst).
	CounterOf func(r uint8) uint8
	// NextToken is the token after counter value c.
	NextToken func(c uint8) uint8
	// Deadline is the ticks left that the coordinator sets on a grant (old
	// is the zero Lease) or on an accepted renew of old, for request req.
	Deadline func(old Lease, req Msg, ttl int) int8
	// Renew is the coordinator's answer to renew req of lease l: RepOK,
	// RepNotHolder or RepExpired.
	Renew func(l Lease, req Msg) uint8
	// Release is the coordinator's answer to release req of lease l: RepOK
	// frees the lease, RepNotHolder keeps it.
	Release func(l Lease, req Msg) uint8
	// ReleaseAdvances makes an accepted release advance the sink's fence, so
	// the released holder's late writes are rejected at once.
	ReleaseAdvances bool
	// OnLease is the resource's coordinator registers after event e on
	// lease l (LeaseGranted, LeaseRenewed, LeaseReleased).
	OnLease func(e LeaseEvent, ru Regs, l Lease, ttl int) Regs
	// Restart is a coordinator replica after a restart, given it before:
	// what lives only in memory is lost, what is durable is kept. Its
	// leases may be kept, shortened, lengthened or dropped (the framework
	// keeps the ghost identity of the ones kept), and so may its dedup
	// records (which grant a record answers with is the ghost's: a kept
	// record keeps it, a changed or made-up one answers with no grant of
	// the coordinator's, as a forged token). The framework's part is
	// not its to decide: the grant in progress (Wait) is lost and the
	// numbers of advances (AdvSeq) are kept, whatever it returns.
	Restart func(co Coordinator, ttl int) Coordinator

	// FenceOf is where resource r's fence lives at the sink.
	FenceOf func(r uint8) uint8
	// Advance is the sink's fence after an advance request: to is the
	// coordinator's token (0 under FenceFirst: the sink picks the next).
	Advance func(fence, to uint8) uint8
	// OnAdvance is the sink's registers for a resource after its fence was
	// advanced for a grant with ttl (a sink that keeps its own deadline).
	OnAdvance func(u Regs, ttl int) Regs
	// ReplayFirst makes the sink answer a write whose key already holds its
	// payload as a replay before it looks at the token.
	ReplayFirst bool
	// Check is the sink's verdict on write w: RepOK goes on to store the
	// result, RepFenced or RepExpired rejects it.
	Check func(v SinkView, w Msg) uint8
	// Commit, when set, makes the write two steps: Check in one, then Commit
	// (its verdict on the same write, against the sink as it is then) in a
	// later step of the sink, with other steps possibly between them.
	Commit func(v SinkView, w Msg) uint8
	// Prepared is the sink's registers for the resource after Check passed
	// a two-step write (Commit set).
	Prepared func(u Regs, w Msg) Regs
	// Accepted is the sink's fence and registers for the resource after it
	// stored or replayed write w.
	Accepted func(v SinkView, w Msg) (fence uint8, u Regs)
	// Key is the idempotency key of write w's result: 0 is the task's
	// identity; another value names the write attempt (attempt is unique to
	// the worker's write).
	Key func(w Msg, attempt uint8) uint8
	// SinkRestart is the sink after a crash and restart, given it before.
	// The sink's record of the advances it applied (AdvSeq, AdvFence) is
	// the framework's and is kept, whatever it returns.
	SinkRestart func(s Sink) Sink

	// MayWrite reports whether a holder with registers u writes now (a
	// decision on the holder's own clock).
	MayWrite func(u Regs) bool
	// Stamp is the byte a worker with registers u puts in its request of
	// kind (Msg.U).
	Stamp func(u Regs, kind uint8) uint8
	// OnReply is the worker's registers after reply rep (rep.Code: Rep*)
	// to its operation op (Op*), for a lease of ttl. A read's reply carries
	// the sink's register A for the resource in rep.U (a row version that
	// readers see).
	OnReply func(u Regs, op uint8, rep Msg, ttl int) Regs
	// OnSend is the worker's registers after it sends a request of kind
	// (AcquireReq, RenewReq, ReleaseReq, WriteReq, ReadReq; a retried
	// acquire is sent again) for a lease of ttl; Stamp reads them before.
	// A holder that counts its lease from before its request left (validity
	// = ttl − the time since the send − drift: Redlock's rule) starts its
	// timer here and keeps it in OnReply.
	OnSend func(u Regs, kind uint8, ttl int) Regs
	// OnCrash is the worker's registers after it crashes and restarts:
	// what it kept in memory is lost, what it journaled is kept. (Its
	// token is the framework's and is kept: a journaled lease.)
	OnCrash func(u Regs) Regs
}

// Regs are a design's own registers on one entity: two plain bytes and a
// timer. The framework copies, compares, hashes and permutes them with their
// entity; the timer counts down by one on every tick of the entity's clock
// (a worker's moves with its clock offset) and stops at -1.
type Regs struct {
	A, B uint8
	T    int8
}

// TokenPlan is where a grant's token comes from and when the sink's fence
// moves.
type TokenPlan uint8

// Token plans.
const (
	// FenceFirst (the reference): the coordinator asks the sink to advance
	// its fence and grants the fence the sink returns.
	FenceFirst TokenPlan = iota
	// CounterFirst: the token is the coordinator's next counter value; the
	// sink's fence is advanced to it before the grant.
	CounterFirst
	// GrantThenFence: the token is the coordinator's next counter value,
	// granted at once; the advance reaches the sink later, as a message.
	GrantThenFence
	// CounterOnly: the token is the coordinator's next counter value and
	// the coordinator never touches the sink: the holder's writes raise the
	// fence (a max-token sink, for lease services without a coordinator
	// that talks to the sink, such as etcd).
	CounterOnly
)

// LeaseEvent is what happened to a lease, for Design.OnLease.
type LeaseEvent uint8

// Lease events.
const (
	LeaseGranted LeaseEvent = iota + 1
	LeaseRenewed
	LeaseReleased
)

// SinkView is what the sink's decisions read about one write's resource.
type SinkView struct {
	Fence uint8 // the resource's fence (where FenceOf puts it)
	U     Regs  // the sink's registers for the resource
	// Lease is the coordinator's record of the resource (replica 0), for a
	// design whose target asks the scheduler instead of checking a fence.
	// Only the Check of a two-step write (Commit set) sees it: a real
	// target asks over the network and writes afterwards, so a takeover
	// can come between the answer and the write, which the second step
	// lets happen. A one-step Check, Commit and Accepted see the zero
	// Lease: nothing reads the scheduler's table in the same atomic step
	// as the write.
	Lease Lease
}

// Clamp is v as ticks left: below -1 is -1 (past the deadline, however long
// ago), above 127 is 127.
func Clamp(v int) int8 {
	switch {
	case v < -1:
		return -1
	case v > 127:
		return 127
	}
	return int8(v)
}

// Reported is the time the request's sender reported, relative to now (the
// sender's clock offset minus the ticks since it sent). It reads the
// request's age: a design whose decisions call it must set ReportsTime
// (without it the offset is 0 and the age is all that is left).
func Reported(req Msg) int { return int(req.Skew) - int(req.Age) }

// RefValid: the coordinator's own clock says the deadline is still ahead.
func RefValid(l Lease, _ Msg) bool { return l.Holder != 0 && l.Left > 0 }

// RefHold: no grant during the grace period after a restart (the replica's
// timer, which RefRestart sets to one ttl).
func RefHold(u, _ Regs) bool { return u.T > 0 }

// RefAnswers: the record answers a retry (the same incarnation and request
// id) with its grant and refuses a late copy of an older request of the
// same worker (request ids grow), or of an earlier incarnation's
// (incarnations grow: without this, a crashed incarnation's delayed retry
// would get a second grant for a request id already answered).
func RefAnswers(d Dedup, req Msg) uint8 {
	switch {
	case d.Req == 0:
		return 0
	case req.Inc < d.Inc:
		return RepHeld
	case d.Inc != req.Inc:
		return 0
	case req.Req == d.Req:
		return RepOK
	case req.Req < d.Req:
		return RepHeld
	}
	return 0
}

// RefCounterOf: each resource has its own counter.
func RefCounterOf(r uint8) uint8 { return r }

// RefNextToken: tokens count up by one.
func RefNextToken(c uint8) uint8 { return c + 1 }

// RefDeadline: ttl from now, on the coordinator's clock.
func RefDeadline(_ Lease, _ Msg, ttl int) int8 { return Clamp(ttl) }

// RefRenew: the holder, its incarnation and its token must match, and the
// lease must still be valid (now < deadline).
func RefRenew(l Lease, req Msg) uint8 {
	switch {
	case !RefOwns(l, req):
		return RepNotHolder
	case l.Left <= 0:
		return RepExpired
	}
	return RepOK
}

// RefOwns reports whether req comes from lease l's holder: the same worker,
// incarnation and token.
func RefOwns(l Lease, req Msg) bool {
	return l.Holder == req.Worker+1 && l.Inc == req.Inc && l.Token == req.Token
}

// RefRelease: only the holder (worker, incarnation, token) releases.
func RefRelease(l Lease, req Msg) uint8 {
	if RefOwns(l, req) {
		return RepOK
	}
	return RepNotHolder
}

// RefOnLease: the reference keeps no registers.
func RefOnLease(_ LeaseEvent, ru Regs, _ Lease, _ int) Regs { return ru }

// RefRestart: the lease table lives in memory and is lost, with the clock
// that measured it; the deduplication records and the counters are durable
// (in the coordination store). No lease is granted for one ttl after the
// restart (a grace period), so a lease granted before it has expired by any
// clock before its resource is granted again.
func RefRestart(co Coordinator, ttl int) Coordinator {
	co.Lease = [MaxResources]Lease{}
	co.U.T = Clamp(ttl)
	return co
}

// tokenStep is the most d's NextToken raises a counter, and its Advance a
// fence above both the fence and the coordinator's token, in one call: 1
// for the reference's (left nil), else found by trying every byte
// (Machine.MaxToken).
func (d *Design) tokenStep() int {
	step := 1
	for a := range 256 {
		if d.NextToken != nil {
			step = max(step, int(d.NextToken(uint8(a)))-a)
		}
		if d.Advance == nil {
			continue
		}
		for to := range 256 {
			step = max(step, int(d.Advance(uint8(a), uint8(to)))-max(a, to))
		}
	}
	return step
}

// RefFenceOf: each resource has its own fence.
func RefFenceOf(r uint8) uint8 { return r }

// RefAdvance: the fence moves up by one (FenceFirst), or up to the
// coordinator's token, never down.
func RefAdvance(fence, to uint8) uint8 {
	if to == 0 {
		return fence + 1
	}
	return max(fence, to)
}

// RefOnAdvance: the reference sink keeps no registers.
func RefOnAdvance(u Regs, _ int) Regs { return u }

// RefCheck: the token must equal the fence.
func RefCheck(v SinkView, w Msg) uint8 {
	if w.Token == v.Fence {
		return RepOK
	}
	return RepFenced
}

// RefPrepared: the reference sink keeps no registers.
func RefPrepared(u Regs, _ Msg) Regs { return u }

// RefAccepted: a write changes neither the fence nor the registers.
func RefAccepted(v SinkView, _ Msg) (uint8, Regs) { return v.Fence, v.U }

// RefKey: a result's key is its task's identity.
func RefKey(Msg, uint8) uint8 { return 0 }

// RefSinkRestart: the sink's fences and results are durable.
func RefSinkRestart(s Sink) Sink { return s }

// RefMayWrite: a holder writes whenever it has a token; the sink decides.
func RefMayWrite(Regs) bool { return true }

// RefStamp: requests carry no design byte.
func RefStamp(Regs, uint8) uint8 { return 0 }

// RefOnReply: the reference worker keeps no registers.
func RefOnReply(u Regs, _ uint8, _ Msg, _ int) Regs { return u }

// RefOnSend: the reference worker keeps no registers.
func RefOnSend(u Regs, _ uint8, _ int) Regs { return u }

// RefOnCrash: the reference worker keeps no registers; a design's are kept
// across a crash, as if journaled, unless its OnCrash says otherwise.
func RefOnCrash(u Regs) Regs { return u }

// withDefaults returns d with every nil decision set to the reference's.
func (d Design) withDefaults() Design {
	if d.Valid == nil {
		d.Valid = RefValid
	}
	if d.Hold == nil {
		d.Hold = RefHold
	}
	if d.Answers == nil {
		d.Answers = RefAnswers
	}
	if d.CounterOf == nil {
		d.CounterOf = RefCounterOf
	}
	if d.NextToken == nil {
		d.NextToken = RefNextToken
	}
	if d.Deadline == nil {
		d.Deadline = RefDeadline
	}
	if d.Renew == nil {
		d.Renew = RefRenew
	}
	if d.Release == nil {
		d.Release = RefRelease
	}
	if d.OnLease == nil {
		d.OnLease = RefOnLease
	}
	if d.Restart == nil {
		d.Restart = RefRestart
	}
	if d.FenceOf == nil {
		d.FenceOf = RefFenceOf
	}
	if d.Advance == nil {
		d.Advance = RefAdvance
	}
	if d.OnAdvance == nil {
		d.OnAdvance = RefOnAdvance
	}
	if d.Check == nil {
		d.Check = RefCheck
	}
	if d.Prepared == nil {
		d.Prepared = RefPrepared
	}
	if d.Accepted == nil {
		d.Accepted = RefAccepted
	}
	if d.Key == nil {
		d.Key = RefKey
	}
	if d.SinkRestart == nil {
		d.SinkRestart = RefSinkRestart
	}
	if d.MayWrite == nil {
		d.MayWrite = RefMayWrite
	}
	if d.Stamp == nil {
		d.Stamp = RefStamp
	}
	if d.OnReply == nil {
		d.OnReply = RefOnReply
	}
	if d.OnSend == nil {
		d.OnSend = RefOnSend
	}
	if d.OnCrash == nil {
		d.OnCrash = RefOnCrash
	}
	return d
}
