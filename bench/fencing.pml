/*
 * fencing.pml: fencecheck's reference lease + fencing protocol in Promela,
 * for benchmarking against Spin. It mirrors model/step.go and
 * model/enabled.go (the reference design: every model.Design decision the
 * Ref* one, token plan FenceFirst; one coordinator replica, no delay or
 * pause bound, by default no clock skew and no sink crash) and, one macro
 * at a time, 25 other designs of the catalogue, state for state: one fencecheck
 * action is one d_step of the single process `system`, and the global
 * variables are fencecheck's canonical state (model.Machine.Encode) minus the
 * fields that are constant or derived in this configuration.
 * bench/README.md lists every difference.
 *
 * Bounds (override with -D on the spin command line, e.g. spin -a -DOPS=2):
 *   W workers (2..3), R resources (1..2), TTL, OPS per worker (<= 8), GRANTS
 *   per resource, INFLIGHT messages (<= 7), DROPS, DUPS, CRASHES (worker
 *   crash+restart), RESTARTS (coordinator), FORGERIES, SINKRESTARTS (default
 *   0), SKEW (0..2, default 0).
 * Designs other than the reference (one at a time):
 *   -DCHECK_THEN_WRITE    the sink checks the fence and writes in two steps
 *                         (designs.CheckThenWrite)
 *   -DGRANT_BEFORE_FENCE  the token is granted from the coordinator's counter
 *                         before the fence is advanced (designs.GrantBeforeFence,
 *                         token plan GrantThenFence)
 *   -DTTL_ONLY_LOCK       the sink checks no token (designs.TTLOnlyLock)
 *   -DNO_ACQUIRE_DEDUP    the coordinator answers no request from its record:
 *                         every acquire asks anew (designs.NoAcquireDedup)
 *   -DRENEW_TOKEN_ONLY    renew checks the worker and token, not the
 *                         incarnation (designs.RenewTokenOnly)
 *   -DRENEW_AT_DEADLINE   a renew exactly at the deadline is accepted
 *                         (designs.RenewAtDeadline)
 *   -DGLOBAL_FENCE        one fence shared by all resources (designs.GlobalFence)
 *   -DVOLATILE_COUNTER    tokens come from an in-memory counter that a restart
 *                         resets, and the sink sets its fence to the token it
 *                         is given (designs.VolatileCounter, token plan
 *                         CounterFirst)
 *   -DACCEPT_HIGHER_TOKEN the sink takes any token at least its fence and
 *                         raises its fence to it (designs.AcceptHigherToken)
 *   -DDEDUP_BEFORE_FENCE  a write whose task has a result is answered from it
 *                         before its token is checked (designs.DedupBeforeFence)
 *   -DRELEASE_ADVANCES_FENCE an accepted release sends the sink an
 *                         unanswered advance (designs.ReleaseAdvancesFence)
 *   -DRENEW_FROM_OLD_DEADLINE a renew extends the lease by ttl from its old
 *                         deadline (designs.RenewFromOldDeadline)
 *   -DTWO_STEP_COMMIT_CHECK the sink checks the token and records it, then
 *                         commits only if the fence and the record still equal
 *                         it (designs.TwoStepCommitCheck)
 *   -DSCHEDULER_ONLY_CHECK the sink checks the write against the coordinator's
 *                         lease, then writes in a second step
 *                         (designs.SchedulerOnlyCheck)
 *   -DRESTART_NO_GRACE    a restarted coordinator grants at once
 *                         (designs.RestartNoGrace)
 *   -DFAILOVER_TTL_RESET  a restart keeps the lease table and restarts each
 *                         valid lease's ttl, with no grace period
 *                         (designs.FailoverTTLReset)
 *   -DETCD_REVISIONS      tokens come from one counter for every resource and
 *                         are granted at once (token plan CounterOnly: the
 *                         coordinator never advances the sink); a max-token
 *                         sink, as under ACCEPT_HIGHER_TOKEN
 *                         (designs.EtcdRevisions)
 *   -DHOLDER_CLOCK        the holder writes only while its own timer, set to
 *                         ttl by its acquire's or renew's reply, has time left
 *                         (designs.HolderClock)
 *   -DHOLDER_CLOCK_NO_FENCE the same, and the sink checks no token
 *                         (designs.HolderClockNoFence)
 *   -DHOLDER_MARGIN       the same, writing only while more than one tick is
 *                         left (designs.HolderMargin(1))
 *   -DLOCK_DELAY_NO_FENCE no grant until 2 ticks after a lease's deadline,
 *                         and the sink checks no token (designs.LockDelay(2))
 *   -DSINK_DEADLINE       the sink refuses writes once one ttl has passed
 *                         since its last advance (designs.SinkDeadline)
 *   -DPRODUCER_EPOCHS     the sink keeps each worker's highest incarnation and
 *                         refuses an older one's writes, not other holders'
 *                         (designs.ProducerEpochs)
 *   -DROW_VERSION_CAS     a write carries the row version its worker last read
 *                         and succeeds only if the row is still at it, which
 *                         bumps the version (designs.RowVersionCAS)
 *   -DVOLATILE_SINK_FENCE a sink restart resets the fences to zero
 *                         (designs.VolatileSinkFence; with SINKRESTARTS)
 *   -DWORKER_CLOCK        a worker reports its clock in its acquires and
 *                         renews, and the coordinator judges a lease's expiry
 *                         by it (designs.WorkerClock; with SKEW)
 *   -DREQUEST_ID_KEY      a result's idempotency key is the write attempt (its
 *                         worker's operation count), not the task: the sink
 *                         may hold several results of one task
 *                         (designs.RequestIDKey)
 */

#ifndef W
#define W 2
#endif
#ifndef R
#define R 1
#endif
#ifndef TTL
#define TTL 2
#endif
#ifndef OPS
#define OPS 1
#endif
#ifndef GRANTS
#define GRANTS 2
#endif
#ifndef INFLIGHT
#define INFLIGHT 2
#endif
#ifndef DROPS
#define DROPS 1
#endif
#ifndef DUPS
#define DUPS 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif
#ifndef FORGERIES
#define FORGERIES 1
#endif
#ifndef SINKRESTARTS
#define SINKRESTARTS 0
#endif
/* SKEW: the largest offset of a worker's clock from the coordinator's
 * (model.Config.Skew, 0..2); a worker may set its clock to any offset in
 * -SKEW..SKEW at any time (model's SetClock) */
#ifndef SKEW
#define SKEW 0
#endif
#if SKEW > 2
#error "fencing.pml: SKEW 0..2"
#endif

#include "designs.pml"
#define AGECAP (TTL + 2 * SKEW + 2) /* model.Machine.ageCap with delay 0 */
/* model.Machine.forgedToken: above model.Config.MaxToken (one replica, no
 * sink restart), bigger than any token a coordinator can grant */
#define FORGED (R * (GRANTS + RESTARTS + SINKRESTARTS) + W * OPS + DUPS + 1)
#if defined(GRANT_BEFORE_FENCE) || defined(RELEASE_ADVANCES_FENCE)
#define MAXMSG 8                   /* model.MaxMsgs: a grant's or a release's advance comes on top */
#else
#define MAXMSG INFLIGHT            /* every delivery sends at most one message */
#endif
/* room for the advance a delivery sends on top of its reply
 * (model.Machine.deliverable) */
#ifdef GRANT_BEFORE_FENCE
#define GRANTROOM (nmsg < MAXMSG)
#else
#define GRANTROOM 1
#endif
#ifdef RELEASE_ADVANCES_FENCE
#define RELEASEROOM (nmsg < MAXMSG)
#else
#define RELEASEROOM 1
#endif

/* message kinds (model.AcquireReq ...) */
#define AcquireReq 1
#define AcquireRep 2
#define RenewReq   3
#define RenewRep   4
#define ReleaseReq 5
#define ReleaseRep 6
#define WriteReq   7
#define WriteRep   8
#define ReadReq    9
#define ReadRep    10
#define Commit     11
#define AdvanceReq 12
#define AdvanceRep 13
/* pending operations (model.OpAcquire ...); a reply of kind k answers k/2 */
#define OpNone    0
#define OpAcquire 1
#define OpRenew   2
#define OpRelease 3
#define OpWrite   4
#define OpRead    5
/* reply codes (model.RepOK ...) */
#define RepOK        1
#define RepReplayed  2
#define RepHeld      3
#define RepExpired   4
#define RepNotHolder 5
#define RepFenced    6
#define RepConflict  7

/* CHECK(e, id) asserts e, the invariant id (an ID of spec.Invariants), and
 * when e is false first prints "violated: id": pan prints a Promela printf
 * during the search when compiled with -DPRINTF, and then, with -c0, names
 * every asserted invariant violated anywhere in the state space (pan's own
 * messages name an assertion by its expression). Every CHECK is inside a
 * d_step, where the if and the printfs add no state and no transition. */
#define CHECK(e, id) \
	if :: !(e) -> printf("violated: "); printf(#id); printf("\n") :: else fi; \
	assert(e)

/* Signed tick counts (model's int8 Left, Early, Late, the grace timer,
 * clamped at -1) are stored plus one, so that they fit a byte: 0 means -1
 * (past the deadline), 1 means 0 (at it). */

/* Msg.u, the design's byte (model.Msg.U), is kept only where it can be
 * other than 0: a read's reply carries the sink's register A
 * (model.stepper.read), which TWO_STEP_COMMIT_CHECK, PRODUCER_EPOCHS and
 * ROW_VERSION_CAS write, and under ROW_VERSION_CAS a write carries the
 * version its worker read (model.Design.Stamp). Under REQUEST_ID_KEY, which
 * writes no U, it holds a write's key instead (model.Msg.Key, elsewhere
 * always 0) */
#if defined(TWO_STEP_COMMIT_CHECK) || defined(PRODUCER_EPOCHS) || defined(ROW_VERSION_CAS) || \
    defined(REQUEST_ID_KEY)
#define MSGU
#endif
typedef Msg {
	byte kind; byte worker; byte res; byte inc; byte token; byte req;
	byte grant; byte code; byte pw; byte pt; byte age; bool live
#ifdef MSGU
	; byte u
#endif
#ifdef WORKER_CLOCK
	; byte sk       /* an acquire's or renew's Msg.Skew + SKEW: the sender's reported clock */
#endif
};
#if defined(MSGU) && defined(WORKER_CLOCK)
#error "fencing.pml: Msg.u and Msg.sk share K2's top byte"
#endif
typedef Worker {
	byte inc = 1; byte ops; byte pending; byte res; byte token; byte grant;
	byte req; bool paused
#ifdef HOLDERTIMER
	; byte t1 = 1 /* U.T + 1: the holder's own timer */
#endif
#ifdef ROW_VERSION_CAS
	; byte a      /* U.A: the row version it last read */
#endif
#if SKEW > 0
	; byte skew = SKEW /* Skew + SKEW: its clock's offset */
#endif
};
typedef Lease { byte holder; byte inc; byte token; byte grant; byte left1 = 1 };
typedef Ded { byte inc; byte req; byte token; byte grant };
typedef Waiting { byte worker; byte inc; byte req; byte age; byte seq /* worker+1; 0: none */
#ifdef WORKER_CLOCK
	; byte sk      /* the acquire's Msg.sk */
#endif
};
#ifdef WORKER_CLOCK
#define WAITSK(stmt) stmt
#else
#define WAITSK(stmt) skip
#endif
/* the token the waiting grant's advance asks for: FenceFirst none (the sink
 * picks the next); CounterFirst the counter's value (Waiting.Token in model:
 * here the counter, which no step moves while a grant waits) */
#ifdef VOLATILE_COUNTER
#define WAITTOK(r) counter[r]
#else
#define WAITTOK(r) 0
#endif
/* phase: model.Phase (where the lease stands as a history can show it) */
#define PENDING  0 /* its reply not taken; its worker still waits for it */
#define HELD     1 /* its reply taken, or renewed */
#define VOID     2 /* lapsed, or its worker stopped waiting for its reply */
#define RELEASED 3 /* its holder released it */
#define COUNTS(t) (t.phase <= HELD)
typedef Truth { byte worker; byte inc; byte token; byte early1; byte late1; byte phase };
/* answered[w]: bit q-1 is set when a grant answered w's acquire request q
 * (model.ReqSet) */
typedef Ghost { byte grants; byte observed; byte seentok; Truth g[GRANTS]; byte answered[W] };
typedef Result { byte writer; byte token; byte grant }; /* writer 0: no result */

Worker wk[W];
/* the coordinator */
Lease lease[R];           /* lease table (in memory: a restart loses it) */
Waiting waiting[R];       /* the acquire being granted (in memory) */
Ded dedup[R * W];         /* durable request-id record, [r*W + w] */
byte advseq[R];           /* durable: its sequenced advances per resource */
byte grace1 = 1;          /* Coordinator.U.T + 1: RefHold's grace timer */
#ifdef LOCK_DELAY_NO_FENCE
byte rut1[R] = 1;         /* Coordinator.RU[r].T + 1: the lock-delay */
#endif
#if defined(GRANT_BEFORE_FENCE) || defined(VOLATILE_COUNTER) || defined(ETCD_REVISIONS)
byte counter[R];          /* token counters: durable (in memory under VOLATILE_COUNTER) */
#endif
/* the sink */
byte fence[R];            /* resource r's is fence[FR(r)] */
byte sinkseq[R];          /* Sink.AdvSeq: the last sequenced advance applied */
#ifdef SINK_DEADLINE
byte sinkt1[R] = 1;       /* Sink.U[r].T + 1: the time left since the last advance */
#endif
#ifdef GLOBAL_FENCE
byte advfence[R];         /* Sink.AdvFence: the fence it answered (elsewhere fence[r]) */
#define FR(r) 0
#define ADVFENCE(r) advfence[r]
#define NOTEFENCE(r) advfence[r] = fence[0]
#else
#define FR(r) (r)                /* model.RefFenceOf */
#define ADVFENCE(r) fence[r]
#define NOTEFENCE(r) skip
#endif
#if defined(GLOBAL_FENCE) || defined(VOLATILE_COUNTER) || defined(MAXTOKSINK) || defined(VOLATILE_SINK_FENCE)
byte gadvanced[R];        /* Ghost.Advanced: the highest fence r's advances set */
byte glastadv[R];         /* Ghost.LastAdvanced: the fence r's last advance set (lower than
                           * gadvanced where an advance lowered the fence) */
#define ADVANCED(r) gadvanced[r]
#define LASTADV(r) glastadv[r]
#define NOTEADV(r) glastadv[r] = fence[FR(r)]; if :: fence[FR(r)] > gadvanced[r] -> gadvanced[r] = fence[FR(r)] :: else fi; \
	SHOW(r, 0)
#else                     /* fence[r]: only r's advances move it, only up */
#define ADVANCED(r) fence[r]
#define LASTADV(r) fence[r]
#define NOTEADV(r) SHOW(r, 0)
#endif
byte gshown[R];           /* Ghost.Shown: the highest fence, or token taken, that a write's
                           * apply showed, where above ADVANCED(r) and the highest token
                           * seen, else 0 (model.Ghost.show) */
#define SHOW(r, v) if :: (v) > gshown[r] -> gshown[r] = (v) :: else fi; \
	if :: gshown[r] <= ADVANCED(r) || gshown[r] <= ghost[r].seentok -> gshown[r] = 0 :: else fi
/* a sequenced advance for r moved the fence (answered with it) */
#define NOTESEQ(r) NOTEFENCE(r); NOTEADV(r)
#ifdef VOLATILE_COUNTER
#define SEQADVANCE(r) fence[FR(r)] = cur.token  /* the sink takes the coordinator's word */
#else
#define SEQADVANCE(r) fence[FR(r)]++           /* RefAdvance(fence, 0) */
#endif
/* model.Design.Accepted: the sink's fence after it took a write of token t
 * (RefAccepted keeps it; a max-token sink raises it to t) */
#ifdef MAXTOKSINK
#define ACCEPTED(r, t) if :: t > fence[FR(r)] -> fence[FR(r)] = t :: else fi
#elif defined(PRODUCER_EPOCHS)            /* the writer's epoch raised to its incarnation */
#define ACCEPTED(r, t) if :: cur.inc > EPOCH(r, cur.worker) -> EPOCH(r, cur.worker) = cur.inc :: else fi
#elif defined(ROW_VERSION_CAS)            /* the row's version bumped (kept below 4) */
#define ACCEPTED(r, t) if :: version[r] < 3 -> version[r]++ :: else fi
#else
#define ACCEPTED(r, t) skip
#endif
/* the sink's register A a read's reply carries (0 where no design writes it) */
#ifdef TWO_STEP_COMMIT_CHECK
#define READU(r) sinka[r]
#elif defined(PRODUCER_EPOCHS)            /* workers 0 and 1's epochs, four bits each */
#define READU(r) (EPOCH(r, 0) | (EPOCH(r, 1) << 4))
#elif defined(ROW_VERSION_CAS)
#define READU(r) version[r]
#else
#define READU(r) 0
#endif
#ifdef PRODUCER_EPOCHS
byte epoch[R * W];        /* Sink.U[r]: the highest incarnation of each worker it took a write from */
#define EPOCH(r, w) epoch[(r) * W + (w)]
#endif
#ifdef ROW_VERSION_CAS
byte version[R];          /* Sink.U[r].A: the row's version */
#endif
/* the design's byte a worker's write carries (model.Design.Stamp) */
#ifdef ROW_VERSION_CAS
#define STAMPWRITE(w) SETU(wk[w].a)
#elif defined(REQUEST_ID_KEY)             /* not the design's byte: the key (Design.Key), its attempt */
#define STAMPWRITE(w) SETU(wk[w].ops)
#else
#define STAMPWRITE(w) skip
#endif
/* model.Design.SinkRestart: what a sink restart leaves of the fences */
#ifdef VOLATILE_SINK_FENCE
#define SINKRESTARTFENCES for (r_ : 0 .. R - 1) { fence[r_] = 0 }
#else
#define SINKRESTARTFENCES skip
#endif
Result result[NRESULTS];  /* a result per key (RESULT in designs.pml) */
#define WKEY(m) m.u         /* a write's attempt (REQUEST_ID_KEY) */
#ifdef TWO_STEP_COMMIT_CHECK
byte sinka[R];            /* Sink.U[r].A: the token the last write checked was prepared with */
#endif
/* the network */
Msg msg[MAXMSG];          /* in flight, kept sorted: a multiset */
byte nmsg;
Ghost ghost[R];
byte drops; byte dups; byte crashes; byte restarts; byte forged;
/* The design registers' timers (every worker's U.T, the coordinator's RU[r].T,
 * the sink's U[r].T) start at 0 and count down to -1 at the first tick,
 * where they stay: all of them are this one bit. No step reads them in the
 * reference, but they are part of fencecheck's state. */
bool ticked;

/* scratch, not part of the state vector */
hidden Msg cur;
hidden Msg tmp;
hidden byte i_;
hidden byte j_;
hidden byte k_;
hidden byte r_;
hidden byte w_;
hidden byte tok_;
hidden byte gi_;
hidden byte code_;
hidden byte inc_;
hidden byte req_;
hidden byte age_;
hidden byte live_;
hidden byte sk_;    /* newgrant: the granted acquire's Msg.sk (WORKER_CLOCK) */
hidden byte excl_;  /* newgrant, renew: some other grant is still valid */
hidden byte mono_;  /* newgrant: some earlier grant's token is not below the new one */
hidden byte first_; /* mixed (designs.pml): the slot of task r's first result, plus one */
hidden byte mixed_; /* mixed: two of task r's results differ */
hidden byte fr_;    /* stopwaiting: the acquire's resource */
hidden byte fk_;    /* stopwaiting, FENCEDREPLY: a grant */
hidden byte maxt_;  /* FENCEDREPLY: the highest token granted */

/* a total order over messages (any total order gives the same canonical
 * states as fencecheck's): two packed keys */
#define K1(m) ((m.kind << 24) | (m.worker << 22) | (m.res << 20) | (m.inc << 16) | \
               (m.token << 12) | (m.req << 8) | (m.grant << 4) | m.code)
#ifdef MSGU
#define K2(m) ((m.u << 24) | (m.pw << 16) | (m.pt << 8) | (m.age << 1) | m.live)
#define CPU(d, s) ; d.u = s.u
#define ZEROU(d) ; d.u = 0
#define SETU(v) msg[nmsg - 1].u = v   /* the last message sent */
#elif defined(WORKER_CLOCK)           /* Msg.sk instead of Msg.u (no design has both) */
#define K2(m) ((m.sk << 24) | (m.pw << 16) | (m.pt << 8) | (m.age << 1) | m.live)
#define CPU(d, s) ; d.sk = s.sk
#define ZEROU(d) ; d.sk = 0
#define SETU(v) skip
#else
#define K2(m) ((m.pw << 16) | (m.pt << 8) | (m.age << 1) | m.live)
#define CPU(d, s)
#define ZEROU(d)
#define SETU(v) skip
#endif
#define LESS(a, b) (K1(a) < K1(b) || (K1(a) == K1(b) && K2(a) < K2(b)))
#define SAME(a, b) (K1(a) == K1(b) && K2(a) == K2(b))

#define CP(d, s) d.kind = s.kind; d.worker = s.worker; d.res = s.res; d.inc = s.inc; \
	d.token = s.token; d.req = s.req; d.grant = s.grant; d.code = s.code; d.pw = s.pw; \
	d.pt = s.pt; d.age = s.age; d.live = s.live CPU(d, s)

#define ZERO(d) d.kind = 0; d.worker = 0; d.res = 0; d.inc = 0; d.token = 0; d.req = 0; \
	d.grant = 0; d.code = 0; d.pw = 0; d.pt = 0; d.age = 0; d.live = 0 ZEROU(d)

#define SEND(K, WW, RR, INC, TOK, REQ, G, CODE, PW, PT, AGE, LIVE) \
	msg[nmsg].kind = K; msg[nmsg].worker = WW; msg[nmsg].res = RR; msg[nmsg].inc = INC; \
	msg[nmsg].token = TOK; msg[nmsg].req = REQ; msg[nmsg].grant = G; msg[nmsg].code = CODE; \
	msg[nmsg].pw = PW; msg[nmsg].pt = PT; msg[nmsg].age = AGE; msg[nmsg].live = LIVE; nmsg++

/* model.stepper.reply: a reply to cur */
#define REPLY(K, TOK, G, CODE, PW, PT) \
	SEND(K, cur.worker, cur.res, cur.inc, TOK, cur.req, G, CODE, PW, PT, 0, cur.live)

/* an advance request or reply between the coordinator and the sink (no
 * worker, incarnation, age; not live) */
#define SENDADV(K, RR, TOK, SEQ) SEND(K, 0, RR, 0, TOK, SEQ, 0, 0, 0, 0, 0, 0)

/* model.State.sortMsgs */
inline sortmsgs() {
	i_ = 1;
	do
	:: i_ < nmsg ->
		j_ = i_;
		do
		:: j_ > 0 && LESS(msg[j_], msg[j_ - 1]) ->
			CP(tmp, msg[j_]); CP(msg[j_], msg[j_ - 1]); CP(msg[j_ - 1], tmp); j_--
		:: else -> break
		od;
		i_++
	:: else -> break
	od;
	skip /* a break must not leave a d_step */
}

/* model.stepper.remove: take msg[i] out into cur */
inline removemsg(i) {
	CP(cur, msg[i]);
	nmsg--;
	CP(msg[i], msg[nmsg]);
	ZERO(msg[nmsg])
}

/* model.stepper.forget: w's messages in flight are no longer live (the
 * coordinator's advances carry no worker) */
inline forget(w) {
	k_ = 0;
	do
	:: k_ < nmsg ->
		if
		:: msg[k_].worker == w && msg[k_].kind != AdvanceReq && msg[k_].kind != AdvanceRep ->
			msg[k_].live = 0
		:: else
		fi;
		k_++
	:: else -> break
	od;
	skip /* a break must not leave a d_step */
}

/* model.stepper.stopWaiting: w's acquire ends (its reply taken, or given
 * up): its grants of the acquire's resource whose replies it was waiting
 * for count for nothing (the one it took receive makes HELD) */
inline stopwaiting(w) {
	fr_ = wk[w].res; fk_ = 0;
	do
	:: fk_ < ghost[fr_].grants ->
		if
		:: ghost[fr_].g[fk_].worker == w + 1 && ghost[fr_].g[fk_].phase == PENDING ->
			ghost[fr_].g[fk_].phase = VOID
		:: else
		fi;
		fk_++
	:: else -> break
	od;
	skip /* a break must not leave a d_step */
}

/* model.stepper.tick */
inline tick() {
	if :: !ticked -> ticked = 1 :: else fi; /* read, so that Spin's dead-variable
	                                          * elimination keeps it in the state */
	if :: grace1 > 0 -> grace1-- :: else fi;
#ifdef LOCK_DELAY_NO_FENCE
	for (r_ : 0 .. R - 1) {
		if :: rut1[r_] > 0 -> rut1[r_]-- :: else fi
	}
#endif
#ifdef SINK_DEADLINE
	for (r_ : 0 .. R - 1) {
		if :: sinkt1[r_] > 0 -> sinkt1[r_]-- :: else fi
	}
#endif
#ifdef HOLDERTIMER
	for (w_ : 0 .. W - 1) {
		if :: wk[w_].t1 > 0 -> wk[w_].t1-- :: else fi
	}
#endif
	for (r_ : 0 .. R - 1) {
		if
		:: lease[r_].holder != 0 && lease[r_].left1 > 0 -> lease[r_].left1--
		:: else
		fi;
		if
		:: waiting[r_].worker != 0 && waiting[r_].age < AGECAP -> waiting[r_].age++
		:: else
		fi;
		k_ = 0;
		do
		:: k_ < ghost[r_].grants ->
			if :: ghost[r_].g[k_].early1 > 0 -> ghost[r_].g[k_].early1-- :: else fi;
			if :: ghost[r_].g[k_].late1 > 0 -> ghost[r_].g[k_].late1-- :: else fi;
			if :: ghost[r_].g[k_].early1 <= 1 && COUNTS(ghost[r_].g[k_]) -> ghost[r_].g[k_].phase = VOID :: else fi;
			k_++
		:: else -> break
		od
	}
	k_ = 0;
	do
	:: k_ < nmsg ->
		if
		:: (msg[k_].kind == AcquireReq || msg[k_].kind == RenewReq) && msg[k_].age < AGECAP ->
			msg[k_].age++
		:: else
		fi;
		k_++
	:: else -> break
	od;
	skip /* a break must not leave a d_step */
}

/* model.RefAnswers: the durable record answers a retry (same incarnation and
 * request id) or refuses a late copy of an older request or incarnation */
#define DED(m) dedup[m.res * W + m.worker]
#ifdef NO_ACQUIRE_DEDUP
#define ANSWERED(m) 0
#else
#define ANSWERED(m) (DED(m).req != 0 && (DED(m).inc == m.inc && m.req <= DED(m).req || m.inc < DED(m).inc))
#endif
/* model.Reported: the time a request's sender reported, relative to now */
#define REPORTED(sk, age) ((sk) - SKEW - (age))
#ifdef WORKER_CLOCK
#define LEASEVALID(m) (lease[m.res].holder != 0 && REPORTED(m.sk, m.age) < lease[m.res].left1 - 1)
#else
#define LEASEVALID(m) (lease[m.res].holder != 0 && lease[m.res].left1 > 1) /* RefValid */
#endif
/* a Clamp(v) + 1 of a v above -2 at most 126: the lease's time left, plus one */
#define LEFT1(v) ((v) < -1 -> 0 : (v) + 1)
#ifdef WORKER_CLOCK
#define GRANTED1 LEFT1(REPORTED(sk_, age_) + TTL)  /* the reported time plus ttl */
#else
#define GRANTED1 (TTL + 1)
#endif
/* model.Design.Renew: whose renew the lease answers NotHolder, and when
 * Expired (RefOwns, RefValid; the variants' own) */
#ifdef RENEW_TOKEN_ONLY
#define RENEWFOREIGN(r) (lease[r].holder != cur.worker + 1 || lease[r].token != cur.token)
#else
#define RENEWFOREIGN(r) (lease[r].holder != cur.worker + 1 || lease[r].inc != cur.inc || lease[r].token != cur.token)
#endif
#ifdef RENEW_AT_DEADLINE
#define RENEWEXPIRED(r) (lease[r].left1 < 1)
#elif defined(WORKER_CLOCK)
#define RENEWEXPIRED(r) (REPORTED(cur.sk, cur.age) >= lease[r].left1 - 1)
#else
#define RENEWEXPIRED(r) (lease[r].left1 <= 1)
#endif
/* model.Design.Deadline of a renew: ttl from the renew (RefDeadline), or
 * from the old deadline */
#ifdef RENEW_FROM_OLD_DEADLINE
#define RENEWED1(r) (lease[r].left1 + TTL)
#elif defined(WORKER_CLOCK)
#define RENEWED1(r) LEFT1(REPORTED(cur.sk, cur.age) + TTL)
#else
#define RENEWED1(r) (TTL + 1)
#endif

/* model.Machine.deliverable */
#define DELIVERABLE(m) \
	((m.kind == AcquireRep || m.kind == RenewRep || m.kind == ReleaseRep || \
	  m.kind == WriteRep || m.kind == ReadRep) -> !wk[m.worker].paused : \
	 (m.kind == AcquireReq -> (ANSWERED(m) || waiting[m.res].worker != 0 || LEASEVALID(m) || HOLD(m.res) || \
	                            (ghost[m.res].grants < GRANTS && GRANTROOM)) : \
	  (m.kind == ReleaseReq -> RELEASEROOM : 1)))

/* model.stepper.grant: a new grant of tok_ to worker w_ (incarnation inc_,
 * request req_, sent age_ ticks ago) for resource r_, answered with live_.
 * spec.Judge's fact Granted is asserted over the ghost state before it:
 * exclusive-lease when its worker waits for it and another grant counts,
 * not the same incarnation's of the same token nor one still pending for
 * it (an answer to the same request). */
inline newgrant() {
	excl_ = 0; mono_ = 0; /* each CHECK once a transition, as spec.Judge sets a bit once */
	i_ = 0;
	do
	:: i_ < ghost[r_].grants ->
		if
		:: live_ && COUNTS(ghost[r_].g[i_]) &&
		   !(ghost[r_].g[i_].worker == w_ + 1 && ghost[r_].g[i_].inc == inc_ &&
		     (ghost[r_].g[i_].token == tok_ || ghost[r_].g[i_].phase == PENDING)) -> excl_ = 1
		:: else
		fi;
		if :: ghost[r_].g[i_].token >= tok_ -> mono_ = 1 :: else fi;
		i_++
	:: else -> break
	od;
	CHECK(!excl_, exclusive-lease);
	CHECK(!mono_, token-monotonic);
	CHECK((ghost[r_].answered[w_] & (1 << (req_ - 1))) == 0, acquire-idempotent);
	ghost[r_].grants++; gi_ = ghost[r_].grants;
	ghost[r_].g[gi_ - 1].worker = w_ + 1;
	ghost[r_].g[gi_ - 1].inc = inc_;
	ghost[r_].g[gi_ - 1].token = tok_;
	ghost[r_].g[gi_ - 1].early1 = (age_ > TTL -> 0 : TTL + 1 - age_);
	ghost[r_].g[gi_ - 1].late1 = TTL + 1;
	ghost[r_].g[gi_ - 1].phase = (live_ && age_ < TTL -> PENDING : VOID);
	lease[r_].holder = w_ + 1; lease[r_].inc = inc_; lease[r_].token = tok_;
	lease[r_].grant = gi_; lease[r_].left1 = GRANTED1;
	ONLEASE(r_);
	k_ = r_ * W + w_;
	dedup[k_].inc = inc_; dedup[k_].req = req_; dedup[k_].token = tok_; dedup[k_].grant = gi_;
	ghost[r_].answered[w_] = ghost[r_].answered[w_] | (1 << (req_ - 1));
	SEND(AcquireRep, w_, r_, inc_, tok_, req_, gi_, RepOK, 0, 0, 0, live_)
}

/* the coordinator: model.stepper.acquire */
inline acquire() {
	r_ = cur.res; w_ = cur.worker; k_ = r_ * W + w_;
	if
	:: ANSWERED(cur) ->
		if
		:: cur.inc == dedup[k_].inc && cur.req == dedup[k_].req -> REPLY(AcquireRep, dedup[k_].token, dedup[k_].grant, RepOK, 0, 0)
		:: else -> REPLY(AcquireRep, 0, 0, RepHeld, 0, 0)   /* a late copy of an older request or incarnation */
		fi
	:: else ->
		if
		:: waiting[r_].worker != 0 ->
			if
			:: waiting[r_].worker == w_ + 1 && waiting[r_].inc == cur.inc && waiting[r_].req == cur.req ->
				SENDADV(AdvanceReq, r_, WAITTOK(r_), waiting[r_].seq) /* a retry drives the advance again */
			:: else -> REPLY(AcquireRep, 0, 0, RepHeld, 0, 0) /* the resource is being granted */
			fi
		:: else ->
			if
			:: LEASEVALID(cur) || HOLD(r_) -> REPLY(AcquireRep, 0, 0, RepHeld, 0, 0)
			:: else ->
#if defined(GRANT_BEFORE_FENCE) || defined(ETCD_REVISIONS)
				/* GrantThenFence, CounterOnly: grant the counter's next value */
				counter[CTR(r_)]++;
				tok_ = counter[CTR(r_)]; inc_ = cur.inc; req_ = cur.req; age_ = cur.age; live_ = cur.live;
				newgrant()
#ifdef GRANT_BEFORE_FENCE
				; SENDADV(AdvanceReq, r_, tok_, 0)         /* unsequenced, unanswered */
#endif
#else
				/* FenceFirst: ask the sink to advance, grant when it answers
				 * (CounterFirst: to the counter's next value) */
#ifdef VOLATILE_COUNTER
				counter[r_]++;
#endif
				advseq[r_]++;
				waiting[r_].worker = w_ + 1; waiting[r_].inc = cur.inc; waiting[r_].req = cur.req;
				waiting[r_].age = cur.age; waiting[r_].seq = advseq[r_]; WAITSK(waiting[r_].sk = cur.sk);
				SENDADV(AdvanceReq, r_, WAITTOK(r_), advseq[r_])
#endif
			fi
		fi
	fi
}

/* the sink: model.stepper.sinkAdvance */
inline sinkadvance() {
	r_ = cur.res;
	if
	:: cur.req == 0 ->                        /* nobody waits: RefAdvance(fence, token) */
		if
		:: cur.token == 0 -> fence[FR(r_)]++  /* a release's (the sink picks the next) */
		:: cur.token > fence[FR(r_)] -> fence[FR(r_)] = cur.token /* GrantThenFence's */
		:: else
		fi;
		NOTEADV(r_); ONADVANCE(r_)
	:: cur.req != 0 && cur.req < sinkseq[r_] -> skip /* a late copy of an older advance */
	:: cur.req != 0 && cur.req >= sinkseq[r_] ->
		if
		:: cur.req > sinkseq[r_] -> sinkseq[r_] = cur.req; SEQADVANCE(r_); NOTESEQ(r_); ONADVANCE(r_)
		:: else                                  /* a retry: the same answer */
		fi;
		SENDADV(AdvanceRep, r_, ADVFENCE(r_), cur.req)
	fi
}

/* the coordinator takes the sink's answer: model.stepper.advanced */
inline advanced() {
	r_ = cur.res;
	if
	:: waiting[r_].worker == 0 || waiting[r_].seq != cur.req -> skip
	:: else ->
		w_ = waiting[r_].worker - 1; inc_ = waiting[r_].inc; req_ = waiting[r_].req;
		age_ = waiting[r_].age; tok_ = cur.token; WAITSK(sk_ = waiting[r_].sk);
		/* live if its worker still waits for it */
		live_ = (wk[w_].pending == OpAcquire && wk[w_].inc == inc_ && wk[w_].req == req_);
		waiting[r_].worker = 0; waiting[r_].inc = 0; waiting[r_].req = 0; waiting[r_].age = 0;
		waiting[r_].seq = 0; WAITSK(waiting[r_].sk = 0);
		newgrant()
	fi
}

/* model.stepper.renew */
inline renew() {
	r_ = cur.res;
	if
	:: RENEWFOREIGN(r_) -> REPLY(RenewRep, 0, 0, RepNotHolder, 0, 0)
	:: else ->
		if
		:: RENEWEXPIRED(r_) -> REPLY(RenewRep, 0, 0, RepExpired, 0, 0)
		:: else ->
			/* the renewer's own grant, the one its request names (a variant
			 * may accept a renew the lease's holder did not send) */
			gi_ = (cur.grant != 0 -> cur.grant - 1 : lease[r_].grant - 1);
			/* the grant whose token was handed out last (model.Ghost.Latest) is the
			 * newest: no design here answers a new request from a record */
			CHECK(!(ghost[r_].g[gi_].late1 <= 1 || ghost[r_].g[gi_].worker != cur.worker + 1 ||
			        ghost[r_].g[gi_].inc != cur.inc || ghost[r_].g[gi_].token != cur.token ||
			        gi_ + 1 < ghost[r_].grants), renew-validity);
			code_ = (cur.age > TTL -> 0 : TTL + 1 - cur.age);
			if :: code_ > ghost[r_].g[gi_].early1 -> ghost[r_].g[gi_].early1 = code_ :: else fi;
			excl_ = 0; i_ = 0;   /* the renewed lease counts, and another grant does: exclusive-lease */
			do
			:: i_ < ghost[r_].grants ->
				if
				:: ghost[r_].g[gi_].early1 > 1 && ghost[r_].g[gi_].phase != RELEASED && COUNTS(ghost[r_].g[i_]) &&
				   i_ != gi_ && !(ghost[r_].g[i_].worker == ghost[r_].g[gi_].worker &&
				   ghost[r_].g[i_].inc == ghost[r_].g[gi_].inc &&
				   (ghost[r_].g[i_].token == ghost[r_].g[gi_].token || ghost[r_].g[i_].phase == PENDING)) -> excl_ = 1
				:: else
				fi;
				i_++
			:: else -> break
			od;
			CHECK(!excl_, exclusive-lease);
			if :: ghost[r_].g[gi_].early1 > 1 && ghost[r_].g[gi_].phase != RELEASED -> ghost[r_].g[gi_].phase = HELD :: else fi;
			lease[r_].left1 = RENEWED1(r_); ONLEASE(r_);
			ghost[r_].g[gi_].late1 = TTL + 1;
			REPLY(RenewRep, 0, 0, RepOK, 0, 0)
		fi
	fi
}

/* model.stepper.release */
inline release() {
	r_ = cur.res;
	if
	:: lease[r_].holder != cur.worker + 1 || lease[r_].inc != cur.inc || lease[r_].token != cur.token ->
		REPLY(ReleaseRep, 0, 0, RepNotHolder, 0, 0)
	:: else ->
		ghost[r_].g[lease[r_].grant - 1].phase = RELEASED; ONRELEASE(r_);
		lease[r_].holder = 0; lease[r_].inc = 0; lease[r_].token = 0; lease[r_].grant = 0;
		lease[r_].left1 = 1;
#ifdef RELEASE_ADVANCES_FENCE
		SENDADV(AdvanceReq, r_, 0, 0);            /* unsequenced, unanswered */
#endif
		REPLY(ReleaseRep, 0, 0, RepOK, 0, 0)
	fi
}

/* the sink: model.stepper.store, the idempotent write under cur's key */
inline commit() {
	r_ = cur.res;
	STORE(r_, cur);
	REPLY(WriteRep, 0, 0, code_, 0, 0)
}

/* model.Design.Check: the sink's check of a write's token */
#ifdef NOCHECK
#define FENCED(t, r) 0
#elif defined(MAXTOKSINK)
#define FENCED(t, r) (t < fence[FR(r)])
#elif defined(SCHEDULER_ONLY_CHECK)
#define FENCED(t, r) (!(lease[r].holder == cur.worker + 1 && lease[r].inc == cur.inc && \
                        lease[r].token == t && lease[r].left1 > 1)) /* RefOwns, Left > 0 */
#elif defined(PRODUCER_EPOCHS)
#define FENCED(t, r) (cur.inc < EPOCH(r, cur.worker))
#elif defined(ROW_VERSION_CAS)
#define FENCED(t, r) (cur.u != version[r])
#else
#define FENCED(t, r) (t != fence[FR(r)])
#endif
/* A write whose check passed is written at once, or by a Commit message in a
 * second step (model.Design.Commit): the sink's registers after the check
 * (Design.Prepared), and whether the commit writes (Design.Commit) */
#if defined(CHECK_THEN_WRITE) || defined(TWO_STEP_COMMIT_CHECK) || defined(SCHEDULER_ONLY_CHECK)
#define TWOSTEP
#endif
#ifdef TWO_STEP_COMMIT_CHECK
#define PREPARED(r) sinka[r] = cur.token
#define COMMITOK(r) (sinka[r] == cur.token && fence[FR(r)] == cur.token)
#else
#define PREPARED(r) skip
#define COMMITOK(r) 1
#endif
/* model.Design.ReplayFirst: a write whose key holds a result is stored
 * (replayed, or refused as a conflict) before its token is checked */
#ifdef DEDUP_BEFORE_FENCE
#define REPLAYFIRST(r) (result[r].writer != 0)
#else
#define REPLAYFIRST(r) 0
#endif

/* model.stepper.reject of a write fenced at resource r_ (spec.Judge's fact
 * WriteFenced: its token the highest any grant of r_ carries) */
#define FENCEDREPLY \
	maxt_ = 0; fk_ = 0; \
	do \
	:: fk_ < ghost[r_].grants -> \
		if :: ghost[r_].g[fk_].token > maxt_ -> maxt_ = ghost[r_].g[fk_].token :: else fi; \
		fk_++ \
	:: else -> break \
	od; \
	CHECK(!(ghost[r_].grants > 0 && cur.token == maxt_ && \
	        LASTADV(r_) <= cur.token), resource-independence); \
	SHOW(r_, fence[FR(r_)]); \
	REPLY(WriteRep, 0, 0, RepFenced, 0, 0)

/* model.stepper.write: check the token, then (atomically, or in a second
 * step) store */
inline write() {
	r_ = cur.res;
	if
	:: REPLAYFIRST(r_) -> commit()
	:: !REPLAYFIRST(r_) && FENCED(cur.token, r_) -> FENCEDREPLY
	:: !REPLAYFIRST(r_) && !FENCED(cur.token, r_) && SINKEXPIRED(r_) ->
		SHOW(r_, fence[FR(r_)]); REPLY(WriteRep, 0, 0, RepExpired, 0, 0)
	:: !REPLAYFIRST(r_) && !FENCED(cur.token, r_) && !SINKEXPIRED(r_) ->
#ifdef TWOSTEP
		PREPARED(r_);
		SEND(Commit, cur.worker, cur.res, cur.inc, cur.token, cur.req, cur.grant, cur.code,
		     cur.pw, cur.pt, cur.age, cur.live); SETU(cur.u)
#else
		commit()
#endif
	fi
}

/* model.stepper.commit: the second step of a two-step write */
inline commitstep() {
	r_ = cur.res;
	if
	:: COMMITOK(r_) -> commit()
	:: else -> FENCEDREPLY
	fi
}

/* model.stepper.read */
inline read() {
	REPLY(ReadRep, 0, 0, RepOK, TASKPW(cur.res), TASKPT(cur.res));
	SETU(READU(cur.res))
}

/* model.State.normal: a worker with neither an outstanding operation nor a
 * token has no resource (Res 0): no step reads it */
#define IDLE(w) if :: wk[w].token == 0 -> wk[w].res = 0 :: else fi

/* model.stepper.receive: a worker gets a reply */
inline receive() {
	w_ = cur.worker;
	if
	:: !cur.live || wk[w_].pending != cur.kind / 2 || cur.inc != wk[w_].inc ||
	   (cur.kind == AcquireRep && cur.req != wk[w_].req) -> skip
	:: else ->
		wk[w_].pending = OpNone;
		forget(w_);   /* the operation is over: its other messages no longer count */
		if :: cur.kind == AcquireRep -> stopwaiting(w_) :: else fi;
#ifdef HOLDERTIMER
		ONREPLY(wk[w_].t1, cur.kind / 2, cur.code);
#endif
#ifdef ROW_VERSION_CAS
		if :: cur.kind == ReadRep -> wk[w_].a = cur.u :: else fi; /* the version it read */
#endif
		if
		:: cur.code != RepOK && cur.code != RepReplayed ->
			if
			:: cur.code != RepHeld && cur.code != RepConflict -> wk[w_].token = 0; wk[w_].grant = 0
			:: else
			fi
		:: else ->
			if
			:: cur.kind == AcquireRep ->
				wk[w_].token = cur.token; wk[w_].grant = cur.grant; wk[w_].res = cur.res;
				if :: cur.grant > ghost[cur.res].observed -> ghost[cur.res].observed = cur.grant :: else fi;
				if :: cur.token > ghost[cur.res].seentok -> ghost[cur.res].seentok = cur.token :: else fi;
				SHOW(cur.res, 0);
				if
				:: cur.grant != 0 && ghost[cur.res].g[cur.grant - 1].early1 > 1 && ghost[cur.res].g[cur.grant - 1].phase != RELEASED ->
					ghost[cur.res].g[cur.grant - 1].phase = HELD
				:: else
				fi;
				CHECK(LASTADV(cur.res) >= cur.token, fence-before-grant)
			:: cur.kind == ReleaseRep -> wk[w_].token = 0; wk[w_].grant = 0
			:: else
			fi
		fi;
		IDLE(w_)
	fi
}

inline deliver(i) {
	removemsg(i);
	if
	:: cur.kind == AcquireReq -> acquire()
	:: cur.kind == RenewReq -> renew()
	:: cur.kind == ReleaseReq -> release()
	:: cur.kind == WriteReq -> write()
	:: cur.kind == Commit -> commitstep()
	:: cur.kind == ReadReq -> read()
	:: cur.kind == AdvanceReq -> sinkadvance()
	:: cur.kind == AdvanceRep -> advanced()
	:: else -> receive()
	fi;
	sortmsgs()
}

/* model.stepper.restart: the design's Restart (RefRestart: the lease table
 * is lost; no grant for one ttl); the grant in progress is lost, the
 * request-id records and the advance numbers (and counters, but under
 * VOLATILE_COUNTER) are durable */
inline restart() {
	restarts++;
	for (r_ : 0 .. R - 1) {
		RESTARTLEASE(r_);
		waiting[r_].worker = 0; waiting[r_].inc = 0; waiting[r_].req = 0; waiting[r_].age = 0;
		waiting[r_].seq = 0; WAITSK(waiting[r_].sk = 0);
#ifdef VOLATILE_COUNTER
		counter[r_] = 0;
#endif
	}
	RESTARTGRACE
}

/* model.stepper.sinkRestart: the design's SinkRestart; the sink's record of
 * the advances it applied is kept, and a two-step write it had checked but
 * not committed is lost */
#if SINKRESTARTS > 0
byte sinkrestarts;
inline sinkrestart() {
	sinkrestarts++;
	SINKRESTARTFENCES;
	k_ = 0;
	do
	:: k_ < nmsg && msg[k_].kind == Commit -> removemsg(k_)
	:: k_ < nmsg && msg[k_].kind != Commit -> k_++
	:: else -> break
	od;
	sortmsgs()
}
#endif

/* The actions, in the order of model.Machine.Enabled. */

#define CANSTART(w) (!wk[w].paused && wk[w].pending == OpNone && wk[w].ops < OPS && nmsg < INFLIGHT)

/* a request of w reports its clock (model.Design.ReportsTime) */
#if defined(WORKER_CLOCK) && SKEW > 0
#define REPORT(w) msg[nmsg - 1].sk = wk[w].skew
#elif defined(WORKER_CLOCK)
#define REPORT(w) skip                 /* sk is SKEW + 0 = 0 */
#else
#define REPORT(w) skip
#endif
/* model's SetClock to offset v - SKEW: a holder's timer runs on its clock,
 * which jumped (a timer with time left moves by the jump, clamped at -1) */
#ifdef HOLDERTIMER
#define JUMP(w, v) if :: wk[w].t1 > 1 -> wk[w].t1 = LEFT1(wk[w].t1 - 1 - (v - wk[w].skew)) :: else fi
#else
#define JUMP(w, v) skip
#endif
#define SETCLOCK(w, v) :: d_step { wk[w].skew != v -> JUMP(w, v); wk[w].skew = v }
#if SKEW > 1
#define SETCLOCKS(w) SETCLOCK(w, 0) SETCLOCK(w, 1) SETCLOCK(w, 2) SETCLOCK(w, 3) SETCLOCK(w, 4)
#elif SKEW > 0
#define SETCLOCKS(w) SETCLOCK(w, 0) SETCLOCK(w, 1) SETCLOCK(w, 2)
#else
#define SETCLOCKS(w)
#endif

#define WORKER(w) \
	SETCLOCKS(w) \
	:: d_step { wk[w].paused -> wk[w].paused = 0 } \
	:: d_step { !wk[w].paused -> wk[w].paused = 1 } \
	:: d_step { CANSTART(w) && wk[w].token != 0 -> \
		forget(w); wk[w].ops++; wk[w].pending = OpRenew; \
		SEND(RenewReq, w, wk[w].res, wk[w].inc, wk[w].token, 0, wk[w].grant, 0, 0, 0, 0, 1); REPORT(w); sortmsgs() } \
	:: d_step { CANSTART(w) && wk[w].token != 0 -> \
		forget(w); wk[w].ops++; wk[w].pending = OpRelease; \
		SEND(ReleaseReq, w, wk[w].res, wk[w].inc, wk[w].token, 0, wk[w].grant, 0, 0, 0, 0, 1); sortmsgs() } \
	:: d_step { CANSTART(w) && wk[w].token != 0 && MAYWRITE(wk[w].t1) -> \
		forget(w); wk[w].ops++; wk[w].pending = OpWrite; \
		SEND(WriteReq, w, wk[w].res, wk[w].inc, wk[w].token, 0, wk[w].grant, 0, w + 1, wk[w].token, 0, 1); \
		STAMPWRITE(w); sortmsgs() } \
	:: d_step { CANSTART(w) && wk[w].token != 0 && forged < FORGERIES -> \
		forget(w); wk[w].ops++; wk[w].pending = OpWrite; forged++; \
		SEND(WriteReq, w, wk[w].res, wk[w].inc, FORGED, 0, wk[w].grant, 0, w + 1, FORGED, 0, 1); \
		STAMPWRITE(w); sortmsgs() } \
	:: d_step { CANSTART(w) && wk[w].token > 1 && forged < FORGERIES -> \
		forget(w); wk[w].ops++; wk[w].pending = OpWrite; forged++; \
		SEND(WriteReq, w, wk[w].res, wk[w].inc, wk[w].token - 1, 0, wk[w].grant, 0, w + 1, wk[w].token - 1, 0, 1); \
		STAMPWRITE(w); sortmsgs() } \
	:: d_step { !wk[w].paused && wk[w].pending == OpAcquire && nmsg < INFLIGHT -> \
		SEND(AcquireReq, w, wk[w].res, wk[w].inc, 0, wk[w].req, 0, 0, 0, 0, 0, 1); REPORT(w); sortmsgs() } \
	:: d_step { !wk[w].paused && wk[w].pending != OpNone -> \
		if :: wk[w].pending == OpAcquire -> stopwaiting(w) :: else fi; \
		wk[w].pending = OpNone; forget(w); IDLE(w); sortmsgs() } \
	:: d_step { crashes < CRASHES -> \
		crashes++; if :: wk[w].pending == OpAcquire -> stopwaiting(w) :: else fi; \
		wk[w].pending = OpNone; forget(w); wk[w].inc++; wk[w].paused = 0; IDLE(w); sortmsgs() }

#define WORKER_RES(w, r) \
	:: d_step { CANSTART(w) && wk[w].token == 0 -> \
		forget(w); wk[w].ops++; wk[w].req++; wk[w].pending = OpAcquire; wk[w].res = r; \
		SEND(AcquireReq, w, r, wk[w].inc, 0, wk[w].req, 0, 0, 0, 0, 0, 1); REPORT(w); sortmsgs() } \
	:: d_step { CANSTART(w) && (wk[w].token == 0 || wk[w].res == r) -> \
		forget(w); wk[w].ops++; wk[w].pending = OpRead; wk[w].res = r; \
		SEND(ReadReq, w, r, wk[w].inc, 0, 0, 0, 0, 0, 0, 0, 1); sortmsgs() }

/* model.awaited: the sequenced advance the coordinator waits on, or its
 * answer; the coordinator sends it again until answered, so the network
 * does not lose it (a loss is a delay) */
#define AWAITED(m) ((m.kind == AdvanceReq && m.req != 0 || m.kind == AdvanceRep) && \
	waiting[m.res].worker != 0 && waiting[m.res].seq == m.req)

/* deliver, drop, duplicate msg[i]; NOTSAME skips a message equal to the one
 * before it (fencecheck's Enabled lists one action for both). A Commit is
 * inside the sink: the network can neither lose nor duplicate it, nor lose
 * an awaited advance. */
#define MSG(i, NOTSAME) \
	:: d_step { i < nmsg && NOTSAME && DELIVERABLE(msg[i]) -> deliver(i) } \
	:: d_step { i < nmsg && NOTSAME && drops < DROPS && msg[i].kind != Commit && !AWAITED(msg[i]) -> \
		removemsg(i); drops++; sortmsgs() } \
	:: d_step { i < nmsg && NOTSAME && dups < DUPS && nmsg < INFLIGHT && msg[i].kind != Commit -> \
		CP(msg[nmsg], msg[i]); nmsg++; dups++; sortmsgs() }

#define NOTPREV(i) !SAME(msg[i], msg[i - 1])

active proctype system() {
	do
	:: d_step { 1 -> tick(); sortmsgs() }
	WORKER(0)
	WORKER_RES(0, 0)
#if R > 1
	WORKER_RES(0, 1)
#endif
	WORKER(1)
	WORKER_RES(1, 0)
#if R > 1
	WORKER_RES(1, 1)
#endif
#if W > 2
	WORKER(2)
	WORKER_RES(2, 0)
#if R > 1
	WORKER_RES(2, 1)
#endif
#endif
	:: d_step { restarts < RESTARTS -> restart() }
#if SINKRESTARTS > 0
	:: d_step { sinkrestarts < SINKRESTARTS -> sinkrestart() }
#endif
	MSG(0, 1)
	MSG(1, NOTPREV(1))
#if MAXMSG > 2
	MSG(2, NOTPREV(2))
#endif
#if MAXMSG > 3
	MSG(3, NOTPREV(3))
#endif
#if MAXMSG > 4
	MSG(4, NOTPREV(4))
#endif
#if MAXMSG > 5
	MSG(5, NOTPREV(5))
#endif
#if MAXMSG > 6
	MSG(6, NOTPREV(6))
#endif
#if MAXMSG > 7
	MSG(7, NOTPREV(7))
#endif
	od
}
