package model

// State is one state of the whole system: workers, coordinator replicas,
// sink, network and ghost bookkeeping. It is a plain value of fixed size:
// copying it is a copy, == compares it, and Encode gives its canonical bytes.
// Time is not stored: every deadline is kept relative to now, so states that
// differ only in the absolute clock are the same state.
type State struct {
	Workers  [MaxWorkers]Worker
	Coord    [MaxReplicas]Coordinator
	Sink     Sink
	Msgs     [MaxMsgs]Msg // in flight, sorted (a multiset)
	NMsgs    uint8
	Ghost    [MaxResources]Ghost
	Drops    uint8 // faults used so far
	Dups     uint8
	Crashes  uint8
	Restarts uint8
	Forged   uint8
	// SinkRestarts counts the sink's crash-and-restarts so far.
	SinkRestarts uint8
}

// Pending operation kinds of a worker (0: none).
const (
	OpNone uint8 = iota
	OpAcquire
	OpRenew
	OpRelease
	OpWrite
	OpRead
)

// Worker is one worker process.
type Worker struct {
	Inc     uint8 // incarnation, from 1; a crash and restart changes it
	Ops     uint8 // operations started so far
	Pending uint8 // the outstanding operation, Op*
	Res     uint8 // resource of the outstanding operation or held lease; 0 when neither (see busy)
	Token   uint8 // the token the worker believes it holds (0: none); journaled, so it survives a restart
	Grant   uint8 // ghost: which grant Token came from
	Req     uint8 // sequence of the current acquire request
	Paused  bool
	// Holding: the worker paused between deciding to write and its write
	// leaving (a pause between a lease check and the send). Its live write
	// request is in Msgs but not sent yet: not deliverable, lost,
	// duplicated or aging until the worker resumes (or crashes, when it
	// leaves just before). Only under Config.Delay: in an asynchronous
	// network a held write is a write the network delays.
	Holding bool
	// PausedFor is the ticks the worker has been paused (counted only
	// under Config.Pause) since a tick last passed with it running: pauses
	// with no tick between them are one pause.
	PausedFor uint8
	Skew      int8 // the worker clock's offset from the coordinator's
	U         Regs // the design's registers (U.T runs on the worker's clock)
}

// WaitsFor reports whether the worker waits for an answer to its acquire
// request req of incarnation inc: whether a reply to it is live.
func (wk *Worker) WaitsFor(inc, req uint8) bool {
	return wk.Pending == OpAcquire && wk.Inc == inc && wk.Req == req
}

// busy reports whether the worker has an outstanding operation or holds a
// token: only then does any step read its Res. Step and Next set the Res
// of a worker that is not busy to 0, so that states that differ only in a
// resource no step reads are one state, and a renaming of resources leaves
// it as it is: a renaming of a state reached from the initial state is then
// reached from it too (by the renamed run), and the orbits' sizes count
// reachable states.
func (wk *Worker) busy() bool { return wk.Token != 0 || wk.Pending != OpNone }

// Coordinator is one coordinator replica. With one replica, it is the
// coordinator; two replicas that both believe they are primary model split
// brain (they share the sink, not their tables).
//
// What a restart keeps and loses is the design's Restart decision, but for
// the framework's part: a restart always loses Wait and keeps AdvSeq. The
// reference (RefRestart) loses the lease table and keeps the deduplication
// records and counters. Requests in flight stay in flight.
type Coordinator struct {
	Lease   [MaxResources]Lease
	Dedup   [MaxResources][MaxWorkers]Dedup // request id -> grant
	Counter [MaxResources]uint8             // token counters (token plans other than FenceFirst)
	U       Regs                            // the design's registers for the replica (U.T: the reference's grace period)
	RU      [MaxResources]Regs              // the design's registers per resource
	// Wait is, per resource, the acquire being granted while the sink
	// advances the fence for it (in memory: a restart loses it).
	Wait [MaxResources]Waiting
	// AdvSeq numbers the replica's sequenced advances per resource
	// (durable, so that a restarted coordinator's advance is never taken
	// for a retry of an old one: a restart keeps it whatever the design's
	// Restart returns).
	AdvSeq [MaxResources]uint8
}

// Waiting is an acquire request the coordinator accepted and will grant
// when the sink's fence has moved.
type Waiting struct {
	Worker uint8 // worker+1; 0: none
	Inc    uint8
	Req    uint8
	Age    uint8 // ticks since the request was sent (capped)
	Skew   int8
	U      uint8
	Seq    uint8 // the advance's sequence number
	Token  uint8 // the token advanced to (CounterFirst; 0 under FenceFirst)
}

// Lease is the coordinator's record of who holds a resource.
type Lease struct {
	Holder uint8 // worker+1; 0: free
	Inc    uint8
	Token  uint8
	Grant  uint8 // ghost: the grant this lease is (a decision sees 0)
	Left   int8  // ticks until the deadline on the coordinator's clock; 0 is the deadline itself, -1 past it
}

// Dedup is the coordinator's durable record of the last acquire it granted to
// one worker: a retry with the same request gets the same grant. Grant is
// the ghost's: which grant that is (a decision sees 0).
type Dedup struct {
	Inc, Req, Token, Grant uint8
}

// Sink is the write target: a fence and results per resource.
type Sink struct {
	Fence [MaxResources]uint8
	// AdvSeq and AdvFence are, per coordinator replica and resource, the
	// last sequenced advance the sink applied and the fence it answered (a
	// retry gets the same; durable: a sink restart keeps them whatever the
	// design's SinkRestart returns).
	AdvSeq   [MaxReplicas][MaxResources]uint8
	AdvFence [MaxReplicas][MaxResources]uint8
	U        [MaxResources]Regs // the design's registers per resource (U.T runs on the sink's clock)
	Results  [MaxResults]Result // sorted; zero entries last
	NResults uint8
}

// Result is one stored result.
type Result struct {
	Res    uint8
	Key    uint8 // 0: the task's identity; otherwise the write attempt's (Design.Key)
	Writer uint8 // payload: worker+1 and token it was computed under
	Token  uint8
	Grant  uint8 // ghost: the grant the write came from (a decision sees 0)
}

// Message kinds.
const (
	MsgNone uint8 = iota
	AcquireReq
	AcquireRep
	RenewReq
	RenewRep
	ReleaseReq
	ReleaseRep
	WriteReq
	WriteRep
	ReadReq
	ReadRep
	// Commit is the sink's second step of a two-step write (Design.Commit):
	// the write was checked, the result is not yet written. It is
	// sink-internal: the network cannot lose or duplicate it.
	Commit
	// AdvanceReq is a coordinator's request that the sink advance its
	// fence: sequenced (Req, for the sink to answer a retry with the fence
	// it gave) when a grant waits for the reply, unsequenced and unanswered
	// under GrantThenFence.
	AdvanceReq
	// AdvanceRep is the sink's answer to a sequenced advance: Token is the
	// fence.
	AdvanceRep
)

// Reply codes.
const (
	RepOK uint8 = iota + 1
	RepReplayed
	RepHeld
	RepExpired
	RepNotHolder
	RepFenced
	RepConflict
)

// Msg is a message in flight.
type Msg struct {
	Kind    uint8
	Worker  uint8 // the worker that sent the request or gets the reply, numbered from 0 (Lease.Holder is worker+1: RefOwns compares them)
	Res     uint8
	Replica uint8 // the coordinator replica it goes to or comes from
	Inc     uint8
	Token   uint8
	Req     uint8 // acquire: the request's sequence number
	Grant   uint8 // ghost: the grant the token came from (a decision sees 0)
	Code    uint8 // replies: Rep*
	PW, PT  uint8 // payload: writer+1 and token (writes, read replies)
	Age     uint8 // ticks since an acquire or renew request (with Config.Delay, any message) was sent (capped); a decision may read it only with Design.ReportsTime
	Skew    int8  // the sender's clock offset when it sent (Design.ReportsTime only)
	Live    bool  // false once the worker no longer waits for the operation: it gave up, crashed, began another, or took its reply (the framework's: a decision sees false)
	Key     uint8 // write: the result's key (Design.Key; 0: the task's identity)
	U       uint8 // the design's byte (Design.Stamp)
}

// Ghost is bookkeeping that no protocol step reads: the truth about grants,
// kept so that the invariants can be stated over grant identity, not only
// over token numbers.
type Ghost struct {
	Grants uint8 // grants issued so far for the resource (any replica), Named among them
	// Named is how many of the grants the ghost issued for answers from
	// records (stepper.reanswered: a token no grant of the incarnation
	// carries, a grant in all but name), which the config's bound on
	// grants does not count.
	Named    uint8
	Observed uint8 // newest grant whose acquire reply reached its worker
	// Advanced is the highest fence an advance for this resource (for its
	// next grant, or a release) has set: a fence above a holder's token that
	// this resource's own protocol raised is no other resource's doing.
	Advanced uint8
	// LastAdvanced is the fence the last such advance set: below Advanced
	// where an advance lowered the fence (after a sink restart that reset
	// it, or to a token a coordinator that lost its counter named). A fence
	// above a holder's token that the last advance did not set is no doing
	// of the resource's (resource-independence), as a history has it,
	// which reads the last advance before the write it fences.
	LastAdvanced uint8
	// SeenToken is the highest token an acquire reply of the resource
	// brought a worker: what a history shows of the fence from its grants
	// (a newer grant may carry a lower token, where tokens are not
	// monotonic; fencing reads this, not the newest grant's).
	SeenToken uint8
	// Shown is the highest fence, or token of a write accepted, that the
	// sink's applies showed (the fence each reported, and the token of
	// each write it took), where it is above Advanced and SeenToken, and
	// 0 where it is not: what a history's lines show of the fence besides
	// grants and advances (fencing), which a sink restart or a design's
	// fence may have lowered since, and a restart may have dropped or
	// changed the result of (see Ghost.show).
	Shown uint8
	// Latest is the grant whose token was handed out last: the newest
	// grant, or an older one whose token an answer from a record handed
	// out again since. A renew of another grant is one after a takeover,
	// as a history has it (renew-validity).
	Latest uint8
	Grant  [MaxGrants + 1]GrantTruth
	// Answered is, per worker, the set of its acquire requests that a new
	// grant answered, whatever the design itself remembers.
	Answered [MaxWorkers]ReqSet
	// LostWriter and LostToken are the payload (as Result's Writer and
	// Token) of a result of the resource that a sink restart dropped or
	// changed, of those lost the one with the highest token: for
	// idempotent-result, a sink that forgot a result and then accepts
	// another payload for the task has accepted two, whatever its table
	// holds now. Zero when none was lost.
	LostWriter, LostToken uint8
}

// ReqSet is a set of a worker's acquire request numbers, 1..16 (Config.Ops
// bounds them).
type ReqSet [2]uint8

// Has reports whether req is in the set.
func (q *ReqSet) Has(req uint8) bool {
	return req >= 1 && req <= 16 && q[(req-1)/8]&(1<<((req-1)%8)) != 0
}

// Add puts req in the set.
func (q *ReqSet) Add(req uint8) { q[(req-1)/8] |= 1 << ((req - 1) % 8) }

// GrantTruth is one grant as it really was.
type GrantTruth struct {
	Worker uint8 // holder+1
	Inc    uint8
	Token  uint8
	// Early is the ticks left until the earliest deadline the holder may
	// count on: ttl after it sent its latest accepted acquire or renew.
	Early int8
	// Late is the ticks left until the deadline the reference coordinator
	// sets: ttl after it received that request.
	Late int8
	// Phase is where the lease stands as a history can show it.
	Phase Phase
	// Req is the acquire request of the holder's incarnation that the
	// grant answered last: the one it was issued for, or a later one an
	// answer from a record gave its token. Another answer of the grant to
	// that request is a retry's; to another request, a grant in all but
	// name (Reanswered).
	Req uint8
}

// Phase is where a grant's lease stands as a history can show it: a lease
// counts (Pending or Held) while someone counts on it or may yet, and only
// while it is valid by its earliest deadline (Early > 0).
type Phase uint8

const (
	// Pending: its reply has not reached its worker, which still waits
	// for it (a retry's answer from a record may bring it).
	Pending Phase = iota
	// Held: a reply of the grant reached its worker (the ok of its
	// acquire, or of an acquire a record answered with its token), or the
	// coordinator renewed it.
	Held
	// Void: the lease counts for nothing: it has lapsed, or its worker
	// stopped waiting for its reply before it came (a grant whose reply
	// nobody takes is no lease anyone counts on).
	Void
	// Released: the coordinator accepted the holder's release of the
	// grant. A release from anyone else that a design accepts frees the
	// lease, but the holder goes on counting on it.
	//
	// An answer from a record that hands out a Void or Released grant's
	// token again makes it Pending (Void if it has lapsed even so).
	Released
)

// Counts reports whether a lease in phase p is one that someone counts
// on, or may yet.
func (p Phase) Counts() bool { return p <= Held }
