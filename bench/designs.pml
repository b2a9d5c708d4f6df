/*
 * designs.pml: the design decisions that fencing.pml and fencing_procs.pml
 * share word for word, each selected by its design's macro (the models
 * #include it; TestSpinAgrees and run.sh copy it beside them). What a
 * decision reads or writes through a model's own names (the message being
 * taken, a worker's registers) stays in each model. So does the judging of
 * the invariants, but for what both judge of a stored write: STORE.
 */

/* a max-token sink: it takes any token at least its fence and raises its
 * fence to it (designs' maxToken and raiseFence) */
#if defined(ACCEPT_HIGHER_TOKEN) || defined(ETCD_REVISIONS)
#define MAXTOKSINK
#endif
/* the coordinator's counter a resource's tokens come from (model.Design.CounterOf) */
#ifdef ETCD_REVISIONS
#define CTR(r) 0
#else
#define CTR(r) (r)
#endif
/* a holder that counts its lease on its own clock from the reply of its
 * acquire or renew, and writes only while more than MARGIN ticks are left
 * (designs' holderTimer; model.Design.OnReply and MayWrite) */
#if defined(HOLDER_CLOCK) || defined(HOLDER_CLOCK_NO_FENCE) || defined(HOLDER_MARGIN)
#define HOLDERTIMER
#endif
#ifdef HOLDER_MARGIN
#define MARGIN 1
#else
#define MARGIN 0
#endif
/* a lock-delay (designs.LockDelay(2)): the coordinator's per-resource timer
 * RU[r].T, set by model.Design.OnLease to the lease's time left plus the
 * delay when it grants or renews and cleared by a release, holds off new
 * grants (Design.Hold) */
#ifdef LOCK_DELAY_NO_FENCE
#define LOCKDELAY 2
#define HOLD(r) (grace1 > 1 || rut1[r] > 1)
#define ONLEASE(r) rut1[r] = lease[r].left1 + LOCKDELAY
#define ONRELEASE(r) rut1[r] = 1
#else
#define HOLD(r) (grace1 > 1)  /* RefHold */
#define ONLEASE(r) skip
#define ONRELEASE(r) skip
#endif
/* a sink that refuses a write once one ttl has passed since the last advance
 * (designs.SinkDeadline: Design.OnAdvance sets its register U[r].T to ttl,
 * and its Check answers Expired when it is out) */
#ifdef SINK_DEADLINE
#define ONADVANCE(r) sinkt1[r] = TTL + 1
#define SINKEXPIRED(r) (sinkt1[r] <= 1)
#else
#define ONADVANCE(r) skip
#define SINKEXPIRED(r) 0
#endif
/* a sink that checks no token (model.Design.Check ok) */
#if defined(TTL_ONLY_LOCK) || defined(HOLDER_CLOCK_NO_FENCE) || defined(HOLDER_MARGIN) || \
    defined(LOCK_DELAY_NO_FENCE)
#define NOCHECK
#endif
/* holderTimer: the worker's timer after a reply to its operation */
#ifdef HOLDERTIMER
#define ONREPLY(t1, op, code) \
	if \
	:: (op == OpAcquire || op == OpRenew) && code == RepOK -> t1 = TTL + 1 \
	:: op == OpRelease && code == RepOK || code == RepExpired || code == RepNotHolder || code == RepFenced -> \
		t1 = 1 \
	:: else \
	fi
#define MAYWRITE(t1) (t1 > MARGIN + 1)
#else
#define ONREPLY(t1, op, code) skip
#define MAYWRITE(t1) 1
#endif
/* model.Design.Restart: what a coordinator restart leaves of r's lease
 * (RefRestart: nothing; failover-ttl-reset: all, a valid lease's ttl
 * restarted in full) and of the grace timer (RefRestart: one ttl;
 * restart-no-grace: none; failover-ttl-reset: as it was) */
#ifdef FAILOVER_TTL_RESET
#define RESTARTLEASE(r) if :: lease[r].holder != 0 && lease[r].left1 > 1 -> lease[r].left1 = TTL + 1 :: else fi
#define RESTARTGRACE skip
#else
#define RESTARTLEASE(r) lease[r].holder = 0; lease[r].inc = 0; lease[r].token = 0; lease[r].grant = 0; \
	lease[r].left1 = 1
#ifdef RESTART_NO_GRACE
#define RESTARTGRACE grace1 = 1
#else
#define RESTARTGRACE grace1 = TTL + 1
#endif
#endif

/* spec.writtenGrant: the grant (into gi_) the write m to resource r is
 * judged as: its own, unless its token is forged and is another grant's of
 * r, the first one's (no fence can tell a guessed token from the holder's) */
inline writtengrant(r, m) {
	gi_ = m.grant;
	if
	:: ghost[r].g[m.grant - 1].token != m.token ->
		k_ = 0;
		do
		:: k_ < ghost[r].grants && ghost[r].g[k_].token != m.token -> k_++
		:: k_ < ghost[r].grants && ghost[r].g[k_].token == m.token -> gi_ = k_ + 1; break
		:: else -> break
		od
	:: else
	fi
}

/* the sink's results (model.stepper.find), one per key: the task's identity,
 * or under REQUEST_ID_KEY (designs.RequestIDKey) the write's attempt WKEY(m),
 * which belongs to its writer: a slot per task, writer and attempt, none with
 * the task's key (which a read returns) */
#ifdef REQUEST_ID_KEY
#ifdef DEDUP_BEFORE_FENCE
#error "REQUEST_ID_KEY's results have no task key for DEDUP_BEFORE_FENCE to look up"
#endif
#define NRESULTS (R * W * OPS)
#define RESULTS(r) ((r) * W * OPS)     /* the first of task r's */
#define RESULT(r, m) result[RESULTS(r) + (m.pw - 1) * OPS + WKEY(m) - 1]
#define TASKPW(r) 0
#define TASKPT(r) 0
/* spec.mixedPayloads: two of task r's results hold different payloads (into
 * mixed_) */
inline mixed(r) {
	first_ = 0; mixed_ = 0;
	for (k_ : RESULTS(r) .. RESULTS(r) + W * OPS - 1) {
		if
		:: result[k_].writer != 0 && first_ == 0 -> first_ = k_ + 1
		:: result[k_].writer != 0 && first_ != 0 &&
		   (result[k_].writer != result[first_ - 1].writer || result[k_].token != result[first_ - 1].token) ->
			mixed_ = 1
		:: else
		fi
	}
}
#define CHECKMIXED(r) mixed(r); CHECK(!mixed_, idempotent-result)
#else
#define NRESULTS R
#define RESULT(r, m) result[r]
#define TASKPW(r) result[r].writer
#define TASKPT(r) result[r].token
#define CHECKMIXED(r) skip             /* one result per task: never two */
#endif

/* model.stepper.store of the write m to resource r: its result stored under
 * its key unless another payload holds it (code_: RepOK, RepReplayed or
 * RepConflict), and a write taken judged (spec.Judge's WriteAccepted: from a
 * grant older than one observed, or below the highest token an acquire's
 * reply brought, the fence r's advances set, the fence it met, or a fence or
 * token an earlier apply showed), what its apply shows noted (SHOW), and
 * applied to the sink's registers (ACCEPTED, each model's). A macro, not an
 * inline: CHECK and ACCEPTED are defined after this file is included. */
#define STORE(r, m) \
	if \
	:: RESULT(r, m).writer == 0 -> \
		RESULT(r, m).writer = m.pw; RESULT(r, m).token = m.pt; RESULT(r, m).grant = m.grant; \
		code_ = RepOK \
	:: RESULT(r, m).writer != 0 && RESULT(r, m).writer == m.pw && RESULT(r, m).token == m.pt -> \
		code_ = RepReplayed \
	:: else -> code_ = RepConflict \
	fi; \
	if \
	:: code_ != RepConflict -> \
		writtengrant(r, m); \
		CHECK(!(gi_ < ghost[r].observed || m.token < ADVANCED(r) || m.token < fence[FR(r)] || \
		        m.token < ghost[r].seentok || m.token < gshown[r]), fencing); \
		CHECKMIXED(r); \
		SHOW(r, fence[FR(r)]); SHOW(r, m.token); \
		ACCEPTED(r, m.token) \
	:: else -> SHOW(r, fence[FR(r)]) \
	fi
