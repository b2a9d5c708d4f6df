/*
 * fencing_procs.pml: the reference lease + fencing protocol as a Spin user
 * would write it: one process per worker, one for the coordinator, one for
 * the sink and a nemesis; the network is channels of typed messages; Spin's
 * partial-order reduction is meant to be on (no -DNOREDUCE), and the worker
 * side is written for it (exclusive reply channels, local state).
 *
 * It is a different model from fencing.pml (which is fencecheck's
 * model.Machine transcribed step for step, one process): it does not store
 * the same states and is not meant to. bench/README.md says exactly how it
 * differs. The protocol is the same: model/step.go's reference design, one
 * coordinator, no clock skew (a tick is the coordinator's clock).
 *
 * Bounds: the macros of fencing.pml (W 2..3, R 1..2, TTL, OPS <= 8, GRANTS,
 * INFLIGHT 1..3, DROPS, DUPS, CRASHES, RESTARTS, FORGERIES).
 * Buggy variants: -DCHECK_THEN_WRITE, -DGRANT_BEFORE_FENCE, -DTTL_ONLY_LOCK,
 * -DNO_ACQUIRE_DEDUP, -DRENEW_TOKEN_ONLY, -DRENEW_AT_DEADLINE, -DGLOBAL_FENCE,
 * -DVOLATILE_COUNTER, -DACCEPT_HIGHER_TOKEN, -DDEDUP_BEFORE_FENCE,
 * -DRELEASE_ADVANCES_FENCE, -DRENEW_FROM_OLD_DEADLINE, -DTWO_STEP_COMMIT_CHECK,
 * -DSCHEDULER_ONLY_CHECK, -DRESTART_NO_GRACE, -DFAILOVER_TTL_RESET,
 * -DETCD_REVISIONS, -DHOLDER_CLOCK, -DHOLDER_CLOCK_NO_FENCE, -DHOLDER_MARGIN,
 * -DLOCK_DELAY_NO_FENCE, -DSINK_DEADLINE, -DPRODUCER_EPOCHS, -DVOLATILE_SINK_FENCE,
 * -DREQUEST_ID_KEY
 * (as in fencing.pml; SINKRESTARTS, default 0, bounds the sink's restarts).
 * Not -DROW_VERSION_CAS (its replies carry no design byte), nor -DWORKER_CLOCK
 * or SKEW (its workers have no clocks).
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
#ifdef ROW_VERSION_CAS
#error "fencing_procs.pml: no ROW_VERSION_CAS (a reply carries no design byte)"
#endif
#if defined(WORKER_CLOCK) || defined(SKEW) && SKEW > 0
#error "fencing_procs.pml: no clock skew (WORKER_CLOCK, SKEW)"
#endif

#if INFLIGHT < 1 || INFLIGHT > 3 || W < 2 || W > 3 || R < 1 || R > 2
#error "fencing_procs.pml: INFLIGHT 1..3, W 2..3, R 1..2"
#endif

#include "designs.pml"
#define AGECAP (TTL + 2)
#define FORGED (R * (GRANTS + RESTARTS + SINKRESTARTS) + W * OPS + DUPS + 1) /* as fencing.pml's */
/* CHECK(e, id): assert e, the invariant id, printing "violated: id" first
 * when e is false, as in fencing.pml. Every CHECK is inside a d_step. */
#define CHECK(e, id) \
	if :: !(e) -> printf("violated: "); printf(#id); printf("\n") :: else fi; \
	assert(e)
/* reply lanes per worker: capacity-1 channels, so that replies arrive in any
 * order (a Promela channel is FIFO) */
#define NL INFLIGHT

/* message kinds, pending operations, reply codes: as in fencing.pml */
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
#define AdvanceReq 12
#define AdvanceRep 13
#define OpNone    0
#define OpAcquire 1
#define OpRenew   2
#define OpRelease 3
#define OpWrite   4
#define OpRead    5
#define RepOK        1
#define RepReplayed  2
#define RepHeld      3
#define RepExpired   4
#define RepNotHolder 5
#define RepFenced    6
#define RepConflict  7
/* what the network does to the reply a server step sends to a worker */
#define FNORMAL 0
#define FLOSE   1
#define FDUP    2

/*
 * The network. Requests to the coordinator and to the sink (and the
 * advances between them) travel in one queue per server, sorted (!!) so that
 * its contents are a multiset; the server may take, lose or duplicate any
 * message in it, and the coordinator's clock ages the acquire and renew
 * requests in its queue. Replies to worker w travel in NL lanes of
 * capacity 1 that only w reads (xr): a server sends into the first free lane
 * (and waits while there is none), w takes any full one, so replies too
 * arrive in any order. A reply is lost or duplicated as it is sent (FLOSE,
 * FDUP). INFLIGHT bounds what a worker may send: the two queues (and the
 * sink's checked writes, under a two-step write) and its own replies in
 * flight together stay below it; the other workers' replies are not counted
 * (w cannot read their lanes).
 */
#define CQFIELDS byte, byte, byte, byte, byte, byte, byte, byte, byte /* kind w r inc token req grant op age */
#define SQFIELDS byte, byte, byte, byte, byte, byte, byte, byte, byte, byte /* kind w r inc token req grant pw pt op */
#define RQFIELDS byte, byte, byte, byte, byte, byte, byte, byte, byte, byte /* kind r inc token req grant code pw pt op */

chan coordq = [INFLIGHT] of { CQFIELDS };
chan sinkq = [INFLIGHT] of { SQFIELDS };
/* a write whose check passed is written in a second step (model.Design.Commit) */
#if defined(CHECK_THEN_WRITE) || defined(TWO_STEP_COMMIT_CHECK) || defined(SCHEDULER_ONLY_CHECK)
#define TWOSTEP
#endif
#ifdef TWOSTEP
chan prepq = [INFLIGHT] of { SQFIELDS }; /* writes the sink checked, not yet written */
#define NPREP len(prepq)
#else
#define NPREP 0
#endif
/* a server may duplicate a queued message while the queues are below
 * INFLIGHT; a worker may send while they and its own replies in flight are */
#define CANSEND (len(coordq) + len(sinkq) + NPREP < INFLIGHT)
#if NL == 1
#define MYSEND(L0, L1, L2) (len(coordq) + len(sinkq) + NPREP + len(L0) < INFLIGHT)
#elif NL == 2
#define MYSEND(L0, L1, L2) (len(coordq) + len(sinkq) + NPREP + len(L0) + len(L1) < INFLIGHT)
#else
#define MYSEND(L0, L1, L2) (len(coordq) + len(sinkq) + NPREP + len(L0) + len(L1) + len(L2) < INFLIGHT)
#endif
#define CANSTART(L0, L1, L2) (ops < OPS && MYSEND(L0, L1, L2))

chan rep0_0 = [1] of { RQFIELDS };
chan rep1_0 = [1] of { RQFIELDS };
#if W > 2
chan rep2_0 = [1] of { RQFIELDS };
#endif
#if NL > 1
chan rep0_1 = [1] of { RQFIELDS };
chan rep1_1 = [1] of { RQFIELDS };
#if W > 2
chan rep2_1 = [1] of { RQFIELDS };
#endif
#endif
#if NL > 2
chan rep0_2 = [1] of { RQFIELDS };
chan rep1_2 = [1] of { RQFIELDS };
#if W > 2
chan rep2_2 = [1] of { RQFIELDS };
#endif
#endif
#if CRASHES > 0
/* the nemesis's crash orders to each worker */
chan crash0 = [CRASHES] of { bit };
chan crash1 = [CRASHES] of { bit };
#if W > 2
chan crash2 = [CRASHES] of { bit };
#endif
#endif

typedef CMsg { byte kind; byte w; byte r; byte inc; byte token; byte req; byte grant; byte op; byte age };
typedef SMsg { byte kind; byte w; byte r; byte inc; byte token; byte req; byte grant; byte pw; byte pt; byte op };
typedef RMsg { byte kind; byte r; byte inc; byte token; byte req; byte grant; byte code; byte pw; byte pt; byte op };

/* Tick counts are stored plus one (0 is -1, past the deadline), as in
 * fencing.pml. */
typedef Lease { byte holder; byte inc; byte token; byte grant; byte left1 = 1 };
typedef Waiting { byte worker; byte inc; byte req; byte age; byte seq };
/* the token the waiting grant's advance asks for: FenceFirst none (the sink
 * picks the next); CounterFirst the counter's value (Waiting.Token in model:
 * here the counter, which no step moves while a grant waits) */
#ifdef VOLATILE_COUNTER
#define WAITTOK(r) counter[r]
#else
#define WAITTOK(r) 0
#endif
typedef Ded { byte inc; byte req; byte token; byte grant };
typedef Result { byte writer; byte token; byte grant };

/* The ghost state the assertions read (model.Ghost): every grant as it
 * really was, the newest grant a holder observed, the requests a grant
 * answered. No protocol step reads it. */
typedef Truth { byte worker; byte inc; byte token; byte early1; byte late1; byte phase };
typedef Ghost { byte grants; byte observed; byte seentok; Truth g[GRANTS]; byte answered[W] };
Ghost ghost[R];
/* phase: model.Phase (where the lease stands as a history can show it) */
#define PENDING  0 /* its reply not taken; its worker still waits for it */
#define HELD     1 /* its reply taken, or renewed */
#define VOID     2 /* lapsed, or its worker stopped waiting for its reply */
#define RELEASED 3 /* its holder released it */
#define COUNTS(t) (t.phase <= HELD)
/* the acquire each worker waits for, inc * 16 + req (0: none): a grant's
 * reply is live when its worker waits for it (model.Msg.Live) */
byte waits[W];
/* model.stepper.stopWaiting: worker w stops waiting for its acquire, and its
 * grants whose replies it was waiting for count for nothing */
#define GIVEUP(w) waits[w] = 0; gk_ = 0; \
	do \
	:: gk_ < ghost[res].grants -> \
		if \
		:: ghost[res].g[gk_].worker == w + 1 && ghost[res].g[gk_].phase == PENDING -> \
			ghost[res].g[gk_].phase = VOID \
		:: else \
		fi; \
		gk_++ \
	:: else -> break \
	od; \
	gk_ = 0
byte fence[R];        /* the sink's fences (global: a holder's assertion reads them); r's is fence[FR(r)] */
#ifdef GLOBAL_FENCE
#define FR(r) 0
#define ADVFENCE(r) advfence[r]            /* the sink's: the fence it answered r with */
#define NOTEFENCE(r) advfence[r] = fence[0]
#else
#define FR(r) (r)
#define ADVFENCE(r) fence[r]
#define NOTEFENCE(r) skip
#endif
#if defined(GLOBAL_FENCE) || defined(VOLATILE_COUNTER) || defined(MAXTOKSINK) || defined(VOLATILE_SINK_FENCE)
byte gadvanced[R];        /* model.Ghost.Advanced: the highest fence r's advances set */
byte glastadv[R];         /* model.Ghost.LastAdvanced: the fence r's last advance set (lower than
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
#define SEQADVANCE(r) fence[FR(r)] = scur.token  /* the sink takes the coordinator's word */
#else
#define SEQADVANCE(r) fence[FR(r)]++
#endif
byte drops; byte dups; byte forged; /* faults used so far */
#ifdef SINK_DEADLINE
byte sinkt1[R] = 1;   /* the sink's timers, plus one (global: the coordinator's tick moves every clock) */
#endif
#ifdef HOLDERTIMER
byte wt1[W] = 1;      /* each worker's timer U.T + 1 (global: the coordinator's tick moves every clock) */
#endif
/* the coordinator's grants in progress (in memory: a restart loses them);
 * global so that the network can tell an awaited advance, which the
 * coordinator sends again until answered and the network so does not lose
 * (model.awaited), from one no one waits on */
Waiting waiting[R];
#ifdef SCHEDULER_ONLY_CHECK
Lease lease[R];       /* the coordinator's (in memory), global: the sink checks writes against it */
#endif
#define AWAITED(m) ((m.kind == AdvanceReq && m.req != 0 || m.kind == AdvanceRep) && \
	waiting[m.r].worker != 0 && waiting[m.r].seq == m.req)

/* the servers' scratch (their steps are d_steps: never interleaved) */
hidden CMsg cur;
hidden SMsg scur;
hidden CMsg ctmp[INFLIGHT];
hidden SMsg stmp[INFLIGHT];
hidden byte k_;
hidden byte r_;
hidden byte w_;
hidden byte gi_;
hidden byte tok_;
hidden byte code_;
hidden byte inc_;
hidden byte req_;
hidden byte age_;
hidden byte fate;   /* FNORMAL, FLOSE, FDUP: what the network does to the step's reply */
hidden byte excl_;  /* newgrant, renew: some other grant is still valid */
hidden byte mono_;  /* newgrant: some earlier grant's token is not below the new one */
hidden byte first_; /* mixed (designs.pml): the slot of task r's first result, plus one */
hidden byte mixed_; /* mixed: two of task r's results differ */
hidden byte live_;  /* newgrant: the granted acquire's worker waits for it */
hidden byte gk_;    /* GIVEUP: a grant */
hidden byte maxt_;  /* FENCEDREPLY: the highest token granted */
hidden byte mk_;    /* FENCEDREPLY: a grant */

/* ---- the workers ---- */

#define RECV(L, m) L ? m.kind, m.r, m.inc, m.token, m.req, m.grant, m.code, m.pw, m.pt, m.op
#define DISCARD(L) L ? _, _, _, _, _, _, _, _, _, _
#define ZEROR(m) m.kind = 0; m.r = 0; m.inc = 0; m.token = 0; m.req = 0; m.grant = 0; m.code = 0; \
	m.pw = 0; m.pt = 0; m.op = 0

/* an acquire's reply to worker w (model.stepper.receive); the ghost learns
 * of the grant */
inline acq_reply(m, w) {
	if
	:: m.kind != AcquireRep || m.inc != inc || m.req != req -> skip /* not the answer to this acquire */
	:: else ->
		pending = OpNone; GIVEUP(w);
		ONREPLY(wt1[w], OpAcquire, m.code);
		if
		:: m.code == RepOK ->
			token = m.token; grant = m.grant; res = m.r;
			if :: m.grant > ghost[m.r].observed -> ghost[m.r].observed = m.grant :: else fi;
			if :: m.token > ghost[m.r].seentok -> ghost[m.r].seentok = m.token :: else fi;
			SHOW(m.r, 0);
			if
			:: m.grant != 0 && ghost[m.r].g[m.grant - 1].early1 > 1 && ghost[m.r].g[m.grant - 1].phase != RELEASED ->
				ghost[m.r].g[m.grant - 1].phase = HELD
			:: else
			fi;
			CHECK(LASTADV(m.r) >= m.token, fence-before-grant)
		:: else                                                             /* held */
		fi
	fi;
	ZEROR(m)
}

/* the reply to any other operation: local only */
inline op_reply(m, w) {
	if
	:: m.kind != pending * 2 || m.inc != inc || m.op != ops -> skip    /* a late reply, or a stale one */
	:: else ->
		ONREPLY(wt1[w], pending, m.code);
		pending = OpNone;
		if
		:: m.code != RepOK && m.code != RepReplayed ->
			if :: m.code != RepHeld && m.code != RepConflict -> token = 0; grant = 0 :: else fi
		:: else -> if :: m.kind == ReleaseRep -> token = 0; grant = 0 :: else fi
		fi
	fi;
	ZEROR(m)
}

/* take a reply from lane L and handle it with h; the wait ends when it
 * answered the operation */
#define RCV(L, h, w) :: d_step { RECV(L, m); h(m, w) }; if :: pending == OpNone -> break :: else fi
#if NL > 1
#define RCV1(L1, h, w) RCV(L1, h, w)
#define DISCARD1(L1) :: DISCARD(L1)
#else
#define RCV1(L1, h, w)
#define DISCARD1(L1)
#endif
#if NL > 2
#define RCV2(L2, h, w) RCV(L2, h, w)
#define DISCARD2(L2) :: DISCARD(L2)
#else
#define RCV2(L2, h, w)
#define DISCARD2(L2)
#endif
#if CRASHES > 0
#define CRASHED(CR) :: CR ? _ -> d_step { pending = OpNone; inc++ }; break
/* a crash while an acquire waits also voids its grants still pending */
#define ACQCRASHED(CR, w) :: CR ? _ -> d_step { pending = OpNone; GIVEUP(w); inc++ }; break
#define CRASHIDLE(CR) :: CR ? _ -> inc++
#else
#define CRASHED(CR)
#define ACQCRASHED(CR, w)
#define CRASHIDLE(CR)
#endif

/* waiting for the reply to an acquire: retry, take a reply, give up, crash */
#define ACQWAIT(w, CR, L0, L1, L2) \
	do \
	:: d_step { MYSEND(L0, L1, L2) -> coordq !! AcquireReq, w, res, inc, 0, req, 0, 0, 0 } \
	RCV(L0, acq_reply, w) \
	RCV1(L1, acq_reply, w) \
	RCV2(L2, acq_reply, w) \
	:: d_step { pending = OpNone; GIVEUP(w) }; break \
	ACQCRASHED(CR, w) \
	od

/* waiting for any other reply: every option is local or an xr receive, so
 * the partial-order reduction may take this worker's steps alone */
#define OPWAIT(w, CR, L0, L1, L2) \
	do \
	RCV(L0, op_reply, w) \
	RCV1(L1, op_reply, w) \
	RCV2(L2, op_reply, w) \
	:: pending = OpNone; break \
	CRASHED(CR) \
	od

#define STARTRES(w, r, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && token == 0 -> ops++; req++; pending = OpAcquire; res = r; waits[w] = inc * 16 + req; \
		coordq !! AcquireReq, w, r, inc, 0, req, 0, 0, 0 }; ACQWAIT(w, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && (token == 0 || res == r) -> ops++; pending = OpRead; res = r; \
		sinkq !! ReadReq, w, r, inc, 0, 0, 0, 0, 0, ops }; OPWAIT(w, CR, L0, L1, L2)

#if R > 1
#define STARTRES1(w, CR, L0, L1, L2) STARTRES(w, 1, CR, L0, L1, L2)
#else
#define STARTRES1(w, CR, L0, L1, L2)
#endif

/* one worker: idle, it starts an operation (model.Machine.Enabled's worker
 * actions) and waits for its reply; a pause is the scheduler not running it */
#define WORKER(w, CR, L0, L1, L2) \
	byte inc = 1; byte ops; byte pending; byte res; byte token; byte grant; byte req; \
	RMsg m; \
	do \
	STARTRES(w, 0, CR, L0, L1, L2) \
	STARTRES1(w, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && token != 0 -> ops++; pending = OpRenew; \
		coordq !! RenewReq, w, res, inc, token, 0, grant, ops, 0 }; OPWAIT(w, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && token != 0 -> ops++; pending = OpRelease; \
		coordq !! ReleaseReq, w, res, inc, token, 0, grant, ops, 0 }; OPWAIT(w, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && token != 0 && MAYWRITE(wt1[w]) -> ops++; pending = OpWrite; \
		sinkq !! WriteReq, w, res, inc, token, 0, grant, w + 1, token, ops }; OPWAIT(w, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && token != 0 && forged < FORGERIES -> ops++; pending = OpWrite; forged++; \
		sinkq !! WriteReq, w, res, inc, FORGED, 0, grant, w + 1, FORGED, ops }; OPWAIT(w, CR, L0, L1, L2) \
	:: d_step { CANSTART(L0, L1, L2) && token > 1 && forged < FORGERIES -> ops++; pending = OpWrite; forged++; \
		sinkq !! WriteReq, w, res, inc, token - 1, 0, grant, w + 1, token - 1, ops }; OPWAIT(w, CR, L0, L1, L2) \
	:: DISCARD(L0) /* idle: every reply is stale */ \
	DISCARD1(L1) \
	DISCARD2(L2) \
	CRASHIDLE(CR) \
	od

#if NL == 1
#define XRLANES(w) xr rep##w##_0
#elif NL == 2
#define XRLANES(w) xr rep##w##_0, rep##w##_1
#else
#define XRLANES(w) xr rep##w##_0, rep##w##_1, rep##w##_2
#endif
#if CRASHES > 0
#define XRCRASH(w) xr crash##w;
#else
#define XRCRASH(w)
#endif

active proctype worker0() { XRLANES(0); XRCRASH(0) WORKER(0, crash0, rep0_0, rep0_1, rep0_2) }
active proctype worker1() { XRLANES(1); XRCRASH(1) WORKER(1, crash1, rep1_0, rep1_1, rep1_2) }
#if W > 2
active proctype worker2() { XRLANES(2); XRCRASH(2) WORKER(2, crash2, rep2_0, rep2_1, rep2_2) }
#endif

/* ---- the servers' network side ---- */

#define CQPOP(t) coordq ? t.kind, t.w, t.r, t.inc, t.token, t.req, t.grant, t.op, t.age
#define CQPUSH(t) coordq !! t.kind, t.w, t.r, t.inc, t.token, t.req, t.grant, t.op, t.age
#define SQPOP(q, t) q ? t.kind, t.w, t.r, t.inc, t.token, t.req, t.grant, t.pw, t.pt, t.op
#define SQPUSH(q, t) q !! t.kind, t.w, t.r, t.inc, t.token, t.req, t.grant, t.pw, t.pt, t.op

/* take the i-th message of a sorted queue into cur: the first i go to tmp
 * and come back (sorted, so the queue is as it was) in restore */
#define UPTO(n, body) k_ = 0; do :: k_ < n -> body; k_++ :: else -> break od
inline cq_take(i) {
	UPTO(i, CQPOP(ctmp[k_]));
	CQPOP(cur)
}
inline cq_restore(i) {
	UPTO(i, CQPUSH(ctmp[k_]));
	skip
}
inline sq_take(q, i) {
	UPTO(i, SQPOP(q, stmp[k_]));
	SQPOP(q, scur)
}
inline sq_restore(q, i) {
	UPTO(i, SQPUSH(q, stmp[k_]));
	skip
}

/* a reply to worker W_ into the server's outgoing slot o, sent after the
 * step (sendout): the network may lose or duplicate it (fate) */
#define REPLY(W_, K, RR, INC, TOK, REQ, G, CODE, PW, PT, OP) \
	o.kind = K; o.r = RR; o.inc = INC; o.token = TOK; o.req = REQ; o.grant = G; o.code = CODE; \
	o.pw = PW; o.pt = PT; o.op = OP; o_w = W_; \
	if \
	:: fate == FLOSE -> drops++; o_n = 0 \
	:: fate == FDUP -> dups++; o_n = 2 \
	:: else -> o_n = 1 \
	fi

#define PUT(L) L ! o.kind, o.r, o.inc, o.token, o.req, o.grant, o.code, o.pw, o.pt, o.op
/* the first free lane (a d_step: waits while none is free) */
#if NL == 1
#define LANES(w) d_step { nfull(rep##w##_0) -> PUT(rep##w##_0) }
#elif NL == 2
#define LANES(w) d_step { if :: nfull(rep##w##_0) -> PUT(rep##w##_0) :: nfull(rep##w##_1) -> PUT(rep##w##_1) fi }
#else
#define LANES(w) d_step { if :: nfull(rep##w##_0) -> PUT(rep##w##_0) :: nfull(rep##w##_1) -> PUT(rep##w##_1) \
	:: nfull(rep##w##_2) -> PUT(rep##w##_2) fi }
#endif
#if W > 2
#define LANES2 :: o_w == 2 -> LANES(2)
#else
#define LANES2
#endif

/* send o, o_n times, into free lanes of worker o_w (waits while they are
 * full: the worker can always take its replies) */
inline sendout() {
	do
	:: o_n > 0 ->
		if
		:: o_w == 0 -> LANES(0)
		:: o_w == 1 -> LANES(1)
		LANES2
		fi;
		o_n--
	:: else -> break
	od;
	d_step { ZEROR(o); o_w = 0 }
}

/* ---- the coordinator ---- */

#define DEDK(m) (m.r * W + m.w)
/* model.Design.Check: the sink's check of a write's token */
#ifdef NOCHECK
#define FENCED(t, r) 0
#elif defined(MAXTOKSINK)
#define FENCED(t, r) (t < fence[FR(r)])
#elif defined(PRODUCER_EPOCHS)
#define FENCED(t, r) (scur.inc < EPOCH(r, scur.w))
#elif defined(SCHEDULER_ONLY_CHECK)
#define FENCED(t, r) (!(lease[r].holder == scur.w + 1 && lease[r].inc == scur.inc && \
                        lease[r].token == t && lease[r].left1 > 1)) /* the coordinator's lease */
#else
#define FENCED(t, r) (t != fence[FR(r)])
#endif
/* model.Design.Accepted: the fence after a write of token t is taken */
#ifdef MAXTOKSINK
#define ACCEPTED(r, t) if :: t > fence[FR(r)] -> fence[FR(r)] = t :: else fi
#elif defined(PRODUCER_EPOCHS)            /* the writer's epoch raised to its incarnation */
#define ACCEPTED(r, t) if :: scur.inc > EPOCH(r, scur.w) -> EPOCH(r, scur.w) = scur.inc :: else fi
#else
#define ACCEPTED(r, t) skip
#endif
#define EPOCH(r, w) epoch[(r) * W + (w)]  /* the sink's, under PRODUCER_EPOCHS */
/* model.Design.SinkRestart: what a sink restart leaves of the fences */
#ifdef VOLATILE_SINK_FENCE
#define SINKRESTARTFENCES for (r_ : 0 .. R - 1) { fence[r_] = 0 }
#else
#define SINKRESTARTFENCES skip
#endif
/* model.Design.ReplayFirst: a write to a task with a result is stored
 * (replayed or refused) before its token is checked */
#ifdef DEDUP_BEFORE_FENCE
#define REPLAYFIRST(r) (result[r].writer != 0)
#else
#define REPLAYFIRST(r) 0
#endif

#ifdef NO_ACQUIRE_DEDUP
#define ANSWERED(m) 0
#else
#define ANSWERED(m) (dedup[DEDK(m)].req != 0 && (dedup[DEDK(m)].inc == m.inc && m.req <= dedup[DEDK(m)].req || m.inc < dedup[DEDK(m)].inc))
#endif
#define LEASEVALID(rr) (lease[rr].holder != 0 && lease[rr].left1 > 1)
/* model.Design.Renew: whose renew the lease answers NotHolder, and when Expired */
#ifdef RENEW_TOKEN_ONLY
#define RENEWFOREIGN(r) (lease[r].holder != w_ + 1 || lease[r].token != cur.token)
#else
#define RENEWFOREIGN(r) (lease[r].holder != w_ + 1 || lease[r].inc != cur.inc || lease[r].token != cur.token)
#endif
#ifdef RENEW_AT_DEADLINE
#define RENEWEXPIRED(r) (lease[r].left1 < 1)
#else
#define RENEWEXPIRED(r) (lease[r].left1 <= 1)
#endif
/* model.Design.Deadline of a renew: ttl from the renew, or from the old deadline */
#ifdef RENEW_FROM_OLD_DEADLINE
#define RENEWED1(r) (lease[r].left1 + TTL)
#else
#define RENEWED1(r) (TTL + 1)
#endif

/* model.stepper.grant to w_ (inc_, req_, sent age_ ticks ago) of tok_ for
 * r_: spec.Judge's fact Granted over the ghost before it */
inline newgrant() {
	excl_ = 0; mono_ = 0; /* each CHECK once a step, as spec.Judge sets a bit once */
	live_ = (waits[w_] == inc_ * 16 + req_);
	for (k_ : 1 .. ghost[r_].grants) {
		if
		:: live_ && COUNTS(ghost[r_].g[k_ - 1]) &&
		   !(ghost[r_].g[k_ - 1].worker == w_ + 1 && ghost[r_].g[k_ - 1].inc == inc_ &&
		     (ghost[r_].g[k_ - 1].token == tok_ || ghost[r_].g[k_ - 1].phase == PENDING)) -> excl_ = 1
		:: else
		fi;
		if :: ghost[r_].g[k_ - 1].token >= tok_ -> mono_ = 1 :: else fi
	}
	CHECK(!excl_, exclusive-lease);
	CHECK(!mono_, token-monotonic);
	CHECK((ghost[r_].answered[w_] & (1 << (req_ - 1))) == 0, acquire-idempotent);
	ghost[r_].grants++; gi_ = ghost[r_].grants;
	ghost[r_].g[gi_ - 1].worker = w_ + 1; ghost[r_].g[gi_ - 1].inc = inc_;
	ghost[r_].g[gi_ - 1].token = tok_;
	ghost[r_].g[gi_ - 1].early1 = (age_ > TTL -> 0 : TTL + 1 - age_);
	ghost[r_].g[gi_ - 1].late1 = TTL + 1; ghost[r_].g[gi_ - 1].phase = (live_ && age_ < TTL -> PENDING : VOID);
	ghost[r_].answered[w_] = ghost[r_].answered[w_] | (1 << (req_ - 1));
	lease[r_].holder = w_ + 1; lease[r_].inc = inc_; lease[r_].token = tok_;
	lease[r_].grant = gi_; lease[r_].left1 = TTL + 1;
	ONLEASE(r_);
	k_ = r_ * W + w_;
	dedup[k_].inc = inc_; dedup[k_].req = req_; dedup[k_].token = tok_; dedup[k_].grant = gi_;
	REPLY(w_, AcquireRep, r_, inc_, tok_, req_, gi_, RepOK, 0, 0, 0)
}

#define CREPLY(K, TOK, G, CODE) REPLY(cur.w, K, cur.r, cur.inc, TOK, cur.req, G, CODE, 0, 0, cur.op)

/* deliver cur (model.stepper.acquire, renew, release, advanced); an acquire
 * that would need a grant beyond GRANTS waits (goes back) */
inline coord_deliver() {
	r_ = cur.r; w_ = cur.w;
	if
	:: cur.kind == AcquireReq ->
		if
		:: ANSWERED(cur) && cur.inc == dedup[DEDK(cur)].inc && cur.req == dedup[DEDK(cur)].req ->
			CREPLY(AcquireRep, dedup[DEDK(cur)].token, dedup[DEDK(cur)].grant, RepOK)
		:: ANSWERED(cur) && (cur.inc != dedup[DEDK(cur)].inc || cur.req < dedup[DEDK(cur)].req) ->
			CREPLY(AcquireRep, 0, 0, RepHeld)                 /* a late copy of an older request or incarnation */
		:: !ANSWERED(cur) && waiting[r_].worker != 0 ->
			if
			:: waiting[r_].worker == w_ + 1 && waiting[r_].inc == cur.inc && waiting[r_].req == cur.req ->
				sinkq !! AdvanceReq, 0, r_, 0, WAITTOK(r_), waiting[r_].seq, 0, 0, 0, 0 /* a retry drives the advance */
			:: else -> CREPLY(AcquireRep, 0, 0, RepHeld)      /* the resource is being granted */
			fi
		:: !ANSWERED(cur) && waiting[r_].worker == 0 && (LEASEVALID(r_) || HOLD(r_)) ->
			CREPLY(AcquireRep, 0, 0, RepHeld)
		:: !ANSWERED(cur) && waiting[r_].worker == 0 && !LEASEVALID(r_) && !HOLD(r_) &&
		   ghost[r_].grants < GRANTS ->
#if defined(GRANT_BEFORE_FENCE) || defined(ETCD_REVISIONS)
			counter[CTR(r_)]++;
			tok_ = counter[CTR(r_)]; inc_ = cur.inc; req_ = cur.req; age_ = cur.age;
			newgrant()
#ifdef GRANT_BEFORE_FENCE
			; sinkq !! AdvanceReq, 0, r_, 0, tok_, 0, 0, 0, 0, 0 /* unsequenced, unanswered */
#endif
#else
#ifdef VOLATILE_COUNTER
			counter[r_]++;                                   /* CounterFirst */
#endif
			advseq[r_]++;
			waiting[r_].worker = w_ + 1; waiting[r_].inc = cur.inc; waiting[r_].req = cur.req;
			waiting[r_].age = cur.age; waiting[r_].seq = advseq[r_];
			sinkq !! AdvanceReq, 0, r_, 0, WAITTOK(r_), advseq[r_], 0, 0, 0, 0
#endif
		:: else -> CQPUSH(cur)                                /* waits: the grant bound */
		fi
	:: cur.kind == RenewReq ->
		if
		:: RENEWFOREIGN(r_) -> CREPLY(RenewRep, 0, 0, RepNotHolder)
		:: else ->
			if
			:: RENEWEXPIRED(r_) -> CREPLY(RenewRep, 0, 0, RepExpired)
			:: else ->
				/* the renewer's own grant, the one its request names (a variant
				 * may accept a renew the lease's holder did not send) */
				gi_ = (cur.grant != 0 -> cur.grant - 1 : lease[r_].grant - 1);
				/* the grant whose token was handed out last (model.Ghost.Latest) is the
				 * newest: no design here answers a new request from a record */
				CHECK(!(ghost[r_].g[gi_].late1 <= 1 || ghost[r_].g[gi_].worker != w_ + 1 ||
				        ghost[r_].g[gi_].inc != cur.inc || ghost[r_].g[gi_].token != cur.token ||
				        gi_ + 1 < ghost[r_].grants), renew-validity);
				code_ = (cur.age > TTL -> 0 : TTL + 1 - cur.age);
				if :: code_ > ghost[r_].g[gi_].early1 -> ghost[r_].g[gi_].early1 = code_ :: else fi;
				excl_ = 0;   /* the renewed lease counts, and another grant does: exclusive-lease */
				for (k_ : 1 .. ghost[r_].grants) {
					if
					:: ghost[r_].g[gi_].early1 > 1 && ghost[r_].g[gi_].phase != RELEASED && COUNTS(ghost[r_].g[k_ - 1]) &&
					   k_ - 1 != gi_ && !(ghost[r_].g[k_ - 1].worker == ghost[r_].g[gi_].worker &&
					   ghost[r_].g[k_ - 1].inc == ghost[r_].g[gi_].inc &&
					   (ghost[r_].g[k_ - 1].token == ghost[r_].g[gi_].token || ghost[r_].g[k_ - 1].phase == PENDING)) -> excl_ = 1
					:: else
					fi
				}
				CHECK(!excl_, exclusive-lease);
				if :: ghost[r_].g[gi_].early1 > 1 && ghost[r_].g[gi_].phase != RELEASED -> ghost[r_].g[gi_].phase = HELD :: else fi;
				lease[r_].left1 = RENEWED1(r_); ONLEASE(r_);
				ghost[r_].g[gi_].late1 = TTL + 1;
				CREPLY(RenewRep, 0, 0, RepOK)
			fi
		fi
	:: cur.kind == ReleaseReq ->
		if
		:: lease[r_].holder != w_ + 1 || lease[r_].inc != cur.inc || lease[r_].token != cur.token ->
			CREPLY(ReleaseRep, 0, 0, RepNotHolder)
		:: else ->
			ghost[r_].g[lease[r_].grant - 1].phase = RELEASED; ONRELEASE(r_);
			lease[r_].holder = 0; lease[r_].inc = 0; lease[r_].token = 0; lease[r_].grant = 0;
			lease[r_].left1 = 1;
#ifdef RELEASE_ADVANCES_FENCE
			sinkq !! AdvanceReq, 0, r_, 0, 0, 0, 0, 0, 0, 0; /* unsequenced, unanswered */
#endif
			CREPLY(ReleaseRep, 0, 0, RepOK)
		fi
	:: cur.kind == AdvanceRep ->                          /* the sink's answer: grant */
		if
		:: waiting[r_].worker == 0 || waiting[r_].seq != cur.req -> skip
		:: else ->
			w_ = waiting[r_].worker - 1; inc_ = waiting[r_].inc; req_ = waiting[r_].req;
			age_ = waiting[r_].age; tok_ = cur.token;
			waiting[r_].worker = 0; waiting[r_].inc = 0; waiting[r_].req = 0; waiting[r_].age = 0;
			waiting[r_].seq = 0;
			newgrant()
		fi
	fi
}

/* the coordinator's clock (model.stepper.tick): its leases, its grace
 * period, the acquire it is granting, the ghost deadlines, the ages of the
 * requests on their way to it */
inline tick() {
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
		if :: wt1[w_] > 0 -> wt1[w_]-- :: else fi
	}
#endif
	for (r_ : 0 .. R - 1) {
		if :: lease[r_].holder != 0 && lease[r_].left1 > 0 -> lease[r_].left1-- :: else fi;
		if :: waiting[r_].worker != 0 && waiting[r_].age < AGECAP -> waiting[r_].age++ :: else fi;
		for (k_ : 1 .. ghost[r_].grants) {
			if :: ghost[r_].g[k_ - 1].early1 > 0 -> ghost[r_].g[k_ - 1].early1-- :: else fi;
			if :: ghost[r_].g[k_ - 1].late1 > 0 -> ghost[r_].g[k_ - 1].late1-- :: else fi;
			if :: ghost[r_].g[k_ - 1].early1 <= 1 && COUNTS(ghost[r_].g[k_ - 1]) -> ghost[r_].g[k_ - 1].phase = VOID :: else fi
		}
	}
	w_ = len(coordq);
	for (k_ : 1 .. w_) { CQPOP(ctmp[k_ - 1]) }
	for (k_ : 1 .. w_) {
		if
		:: (ctmp[k_ - 1].kind == AcquireReq || ctmp[k_ - 1].kind == RenewReq) && ctmp[k_ - 1].age < AGECAP ->
			ctmp[k_ - 1].age++
		:: else
		fi;
		CQPUSH(ctmp[k_ - 1])
	}
	skip
}

/* the coordinator's options on the i-th message of its queue: deliver it
 * (its reply delivered, lost or duplicated), lose it, duplicate it */
#define COORDMSG(i) \
	:: atomic { d_step { len(coordq) > i -> fate = FNORMAL; cq_take(i); coord_deliver(); cq_restore(i) }; sendout() } \
	:: atomic { d_step { len(coordq) > i && drops < DROPS -> fate = FLOSE; cq_take(i); coord_deliver(); cq_restore(i) }; sendout() } \
	:: atomic { d_step { len(coordq) > i && dups < DUPS -> fate = FDUP; cq_take(i); coord_deliver(); cq_restore(i) }; sendout() } \
	:: d_step { len(coordq) > i && drops < DROPS -> cq_take(i); \
		if :: AWAITED(cur) -> CQPUSH(cur) :: else -> drops++ fi; cq_restore(i) } \
	:: d_step { len(coordq) > i && dups < DUPS && CANSEND -> cq_take(i); dups++; CQPUSH(cur); CQPUSH(cur); cq_restore(i) }

active proctype coordinator() {
#ifndef SCHEDULER_ONLY_CHECK
	Lease lease[R];         /* in memory: a restart loses it */
#endif
	Ded dedup[R * W];       /* durable (the coordination store) */
	byte advseq[R];         /* durable */
	byte grace1 = 1;        /* RefHold's timer, plus one */
#ifdef LOCK_DELAY_NO_FENCE
	byte rut1[R] = 1;       /* the lock-delay timers, plus one */
#endif
#if defined(GRANT_BEFORE_FENCE) || defined(VOLATILE_COUNTER) || defined(ETCD_REVISIONS)
	byte counter[R];        /* durable (in memory under VOLATILE_COUNTER) */
#endif
	byte restarts;
	RMsg o; byte o_w; byte o_n; /* the reply being sent */
	do
	:: d_step { tick() }
	:: d_step { restarts < RESTARTS ->               /* model.stepper.restart */
		restarts++;
		for (r_ : 0 .. R - 1) {
			RESTARTLEASE(r_);
			waiting[r_].worker = 0; waiting[r_].inc = 0; waiting[r_].req = 0; waiting[r_].age = 0;
			waiting[r_].seq = 0;
#ifdef VOLATILE_COUNTER
			counter[r_] = 0;
#endif
		}
		RESTARTGRACE }
	COORDMSG(0)
#if INFLIGHT > 1
	COORDMSG(1)
#endif
#if INFLIGHT > 2
	COORDMSG(2)
#endif
	od
}

/* ---- the sink ---- */

#define SREPLY(K, CODE, PW, PT) REPLY(scur.w, K, scur.r, scur.inc, 0, 0, 0, CODE, PW, PT, scur.op)
#define WKEY(m) m.op   /* a write's attempt (REQUEST_ID_KEY): its worker's operation number */

/* model.stepper.store: the idempotent write under scur's key */
inline store() {
	r_ = scur.r;
	STORE(r_, scur);
	SREPLY(WriteRep, code_, 0, 0)
}

/* a write fenced at resource r_ (model.stepper.reject; its token the
 * highest any grant of r_ carries) */
#define FENCEDREPLY \
	maxt_ = 0; mk_ = 0; \
	do \
	:: mk_ < ghost[r_].grants -> \
		if :: ghost[r_].g[mk_].token > maxt_ -> maxt_ = ghost[r_].g[mk_].token :: else fi; \
		mk_++ \
	:: else -> break \
	od; \
	CHECK(!(ghost[r_].grants > 0 && scur.token == maxt_ && \
	        LASTADV(r_) <= scur.token), resource-independence); \
	SHOW(r_, fence[FR(r_)]); \
	SREPLY(WriteRep, RepFenced, 0, 0)

/* model.Design.Prepared and Commit: under TWO_STEP_COMMIT_CHECK the check
 * records the token (the sink's register A), and the commit writes only if
 * the record and the fence still equal it */
#ifdef TWO_STEP_COMMIT_CHECK
#define PREPARED(r) sinka[r] = scur.token
#define COMMITOK(r) (sinka[r] == scur.token && fence[FR(r)] == scur.token)
#else
#define PREPARED(r) skip
#define COMMITOK(r) 1
#endif

/* the second step of a two-step write (model.stepper.commit) */
inline commitstep() {
	r_ = scur.r;
	if
	:: COMMITOK(r_) -> store()
	:: else -> FENCEDREPLY
	fi
}

inline sink_deliver() {
	r_ = scur.r;
	if
	:: scur.kind == WriteReq && REPLAYFIRST(r_) -> store()
	:: scur.kind == WriteReq && !REPLAYFIRST(r_) && FENCED(scur.token, r_) -> FENCEDREPLY
	:: scur.kind == WriteReq && !REPLAYFIRST(r_) && !FENCED(scur.token, r_) && SINKEXPIRED(r_) ->
		SHOW(r_, fence[FR(r_)]); SREPLY(WriteRep, RepExpired, 0, 0)
	:: scur.kind == WriteReq && !REPLAYFIRST(r_) && !FENCED(scur.token, r_) && !SINKEXPIRED(r_) ->
#ifdef TWOSTEP
		PREPARED(r_);
		SQPUSH(prepq, scur)                 /* checked; written in a later step */
#else
		store()
#endif
	:: scur.kind == ReadReq -> SREPLY(ReadRep, RepOK, TASKPW(r_), TASKPT(r_))
	:: scur.kind == AdvanceReq ->                   /* model.stepper.sinkAdvance */
		if
		:: scur.req == 0 ->                         /* unanswered: RefAdvance(fence, token) */
			if
			:: scur.token == 0 -> fence[FR(r_)]++   /* a release's */
			:: scur.token > fence[FR(r_)] -> fence[FR(r_)] = scur.token
			:: else
			fi;
			NOTEADV(r_); ONADVANCE(r_)
		:: scur.req != 0 && scur.req < sinkseq[r_] -> skip
		:: scur.req != 0 && scur.req >= sinkseq[r_] ->
			if :: scur.req > sinkseq[r_] -> sinkseq[r_] = scur.req; SEQADVANCE(r_); NOTESEQ(r_); ONADVANCE(r_) :: else fi;
			coordq !! AdvanceRep, 0, r_, 0, ADVFENCE(r_), scur.req, 0, 0, 0
		fi
	fi
}

#define SINKMSG(i) \
	:: atomic { d_step { len(sinkq) > i -> fate = FNORMAL; sq_take(sinkq, i); sink_deliver(); sq_restore(sinkq, i) }; sendout() } \
	:: atomic { d_step { len(sinkq) > i && drops < DROPS -> fate = FLOSE; sq_take(sinkq, i); sink_deliver(); sq_restore(sinkq, i) }; sendout() } \
	:: atomic { d_step { len(sinkq) > i && dups < DUPS -> fate = FDUP; sq_take(sinkq, i); sink_deliver(); sq_restore(sinkq, i) }; sendout() } \
	:: d_step { len(sinkq) > i && drops < DROPS -> sq_take(sinkq, i); \
		if :: AWAITED(scur) -> SQPUSH(sinkq, scur) :: else -> drops++ fi; sq_restore(sinkq, i) } \
	:: d_step { len(sinkq) > i && dups < DUPS && CANSEND -> sq_take(sinkq, i); dups++; SQPUSH(sinkq, scur); \
		SQPUSH(sinkq, scur); sq_restore(sinkq, i) }

/* under a two-step write: commit the i-th checked write (its reply may be
 * lost or duplicated; the checked write itself is inside the sink) */
#define COMMIT(i) \
	:: atomic { d_step { len(prepq) > i -> fate = FNORMAL; sq_take(prepq, i); commitstep(); sq_restore(prepq, i) }; sendout() } \
	:: atomic { d_step { len(prepq) > i && drops < DROPS -> fate = FLOSE; sq_take(prepq, i); commitstep(); sq_restore(prepq, i) }; sendout() } \
	:: atomic { d_step { len(prepq) > i && dups < DUPS -> fate = FDUP; sq_take(prepq, i); commitstep(); sq_restore(prepq, i) }; sendout() }

active proctype sink() {
	byte sinkseq[R];        /* the last sequenced advance applied */
#ifdef GLOBAL_FENCE
	byte advfence[R];       /* the fence each answered (elsewhere fence[r]) */
#endif
	Result result[NRESULTS]; /* a result per key (RESULT in designs.pml) */
#ifdef TWO_STEP_COMMIT_CHECK
	byte sinka[R];          /* the token the last write checked was prepared with */
#endif
#ifdef PRODUCER_EPOCHS
	byte epoch[R * W];      /* each worker's highest incarnation it took a write from */
#endif
#if SINKRESTARTS > 0
	byte sinkrestarts;
#endif
	RMsg o; byte o_w; byte o_n;
	do
#if SINKRESTARTS > 0
	:: d_step { sinkrestarts < SINKRESTARTS ->     /* model.stepper.sinkRestart */
		sinkrestarts++;
		SINKRESTARTFENCES;
#ifdef TWOSTEP
		do :: len(prepq) > 0 -> SQPOP(prepq, scur) :: else -> break od; /* checked writes are lost */
#endif
		skip }
#endif
	SINKMSG(0)
#if INFLIGHT > 1
	SINKMSG(1)
#endif
#if INFLIGHT > 2
	SINKMSG(2)
#endif
#ifdef TWOSTEP
	COMMIT(0)
#if INFLIGHT > 1
	COMMIT(1)
#endif
#if INFLIGHT > 2
	COMMIT(2)
#endif
#endif
	od
}

/* ---- the nemesis: worker crashes (its budget is its own) ---- */
#if CRASHES > 0
active proctype nemesis() {
	xs crash0; xs crash1;
#if W > 2
	xs crash2;
#endif
	byte crashes;
	do
	:: d_step { crashes < CRASHES -> crash0 ! 1; crashes++ }
	:: d_step { crashes < CRASHES -> crash1 ! 1; crashes++ }
#if W > 2
	:: d_step { crashes < CRASHES -> crash2 ! 1; crashes++ }
#endif
	od
}
#endif
