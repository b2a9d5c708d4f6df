package spec

import (
	"fmt"
	"strings"

	"github.com/fencecheck/fencecheck/model"
)

// Variant is a protocol variant: the reference protocol with one decision
// changed, and the verdicts the search is expected to reach on it.
type Variant struct {
	// Name identifies the variant (explore --variant NAME, history headers).
	Name string
	// Summary is one line on what changes.
	Summary string
	// Protocol is the model's decision points for this variant.
	Protocol model.Protocol
	// Expect is what the search must find and what it may find.
	Expect Expectation
	// Why explains what the change breaks (or buys), for the docs.
	Why string
	// Cite names the documented behaviour of real systems the variant
	// reproduces, for the docs ("" for the article's own variants).
	Cite string
}

// Expectation is the verdict a variant is expected to get. A target that
// checks no fence lets the history checker infer, from a stale write it
// accepted, a fence below a granted token (fence-before-grant). A variant whose
// sink departs from the sequential fenced-sink spec (a fence that moves down,
// is shared, is advanced late, or accepts bigger tokens) may also be caught by
// porcupine as linearizable-sink.
type Expectation struct {
	// Violates must each be found violated.
	Violates Set
	// May is collateral: violated in some runs, depending on what else the
	// search happened to do; either verdict is expected. Every invariant in
	// neither set must hold.
	May Set
}

// Matches reports whether the violated set is the expected verdict.
func (e Expectation) Matches(violated Set) bool {
	return violated&e.Violates == e.Violates && violated&^(e.Violates|e.May) == 0
}

// Verdict says, for one invariant, what was found and whether it was
// expected.
func (e Expectation) Verdict(id string, violated Set) (found, expected bool) {
	b := bitOf(id)
	found = violated&b != 0
	switch {
	case e.May&b != 0:
		return found, true
	case e.Violates&b != 0:
		return found, found
	default:
		return found, !found
	}
}

// Unexpected describes every verdict that differs from the expectation, or
// "" when violated matches it.
func (e Expectation) Unexpected(violated Set) string {
	var parts []string
	if missing := e.Violates &^ violated; missing != 0 {
		parts = append(parts, fmt.Sprintf("expected violations not found: %s", strings.Join(missing.IDs(), ", ")))
	}
	if extra := violated &^ (e.Violates | e.May); extra != 0 {
		parts = append(parts, fmt.Sprintf("unexpected violations: %s", strings.Join(extra.IDs(), ", ")))
	}
	return strings.Join(parts, "; ")
}

// nonGuarantee is what plain fencing does not promise: every variant whose
// sink ignores deadlines inherits it from the reference.
var nonGuarantee = SetOf(AbsoluteValidity)

// Variants is the catalogue of built-in variants: the reference protocol
// and every unsafe shortcut, under the names of the explore contract.
var Variants = []Variant{
	{
		Name:    "reference",
		Summary: "none: the protocol of the source article",
		Expect:  Expectation{Violates: nonGuarantee},
		Why: "The sink's fence is advanced before each grant and checked atomically with the write, so a " +
			"stale holder's write is rejected once a newer grant exists. A stale write between expiry and " +
			"takeover still lands: fencing does not give absolute lease validity (the article says so).",
	},
	{
		Name:     "grant-before-fence",
		Summary:  "the coordinator hands out the new token before the sink's fence is advanced",
		Protocol: model.Protocol{GrantBeforeFence: true},
		Expect: Expectation{Violates: nonGuarantee | SetOf(Fencing, FenceBeforeGrant),
			May: SetOf(ResourceIndependence, LinearizableSink)},
		Why: "Between the grant and the advance the sink still holds the old fence: the new holder is " +
			"rejected and the old holder's write is accepted after the takeover.",
	},
	{
		Name:     "check-then-write",
		Summary:  "the sink reads the fence and writes the result in two separate steps",
		Protocol: model.Protocol{CheckThenWrite: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(Fencing), May: SetOf(LinearizableSink)},
		Why: "A takeover can happen between the read of the fence and the write: the stale write passed " +
			"the check against the old fence and lands after the new holder got its token.",
	},
	{
		Name:     "volatile-counter",
		Summary:  "tokens come from the coordinator's in-memory counter, which restarts at zero with the coordinator",
		Protocol: model.Protocol{VolatileCounter: true},
		Expect: Expectation{Violates: nonGuarantee | SetOf(TokenMonotonic),
			May: SetOf(Fencing, FenceBeforeGrant, ExclusiveLease, ResourceIndependence, LinearizableSink)},
		Why: "After a restart the coordinator hands out numbers it already used: tokens are no longer " +
			"monotonic, and a stale holder's token can equal the fence again.",
	},
	{
		Name:     "worker-clock",
		Summary:  "lease expiry is judged by the time the worker reports, not the coordinator's monotonic clock",
		Protocol: model.Protocol{WorkerClock: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(ExclusiveLease), May: SetOf(RenewValidity)},
		Why: "A worker whose clock runs ahead makes the holder's lease look expired early: the coordinator " +
			"grants the lease again while the holder's lease is still valid.",
	},
	{
		Name:     "renew-token-only",
		Summary:  "renew checks the token but not the owner incarnation",
		Protocol: model.Protocol{RenewTokenOnly: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(RenewValidity)},
		Why: "A restarted worker (a new incarnation) that recovered the token from its journal renews the " +
			"lease of its previous incarnation, whose in-flight work it knows nothing about.",
	},
	{
		Name:     "renew-at-deadline",
		Summary:  "a renew exactly at the deadline is accepted",
		Protocol: model.Protocol{RenewAtDeadline: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(RenewValidity)},
		Why: "At the deadline the lease has expired (now < deadline is false): accepting the renew revives " +
			"an expired lease, which the article forbids.",
	},
	{
		Name:     "accept-higher-token",
		Summary:  "the sink accepts any token at least its fence, so a worker can supply a bigger number",
		Protocol: model.Protocol{AcceptHigherToken: true},
		Expect: Expectation{Violates: nonGuarantee | SetOf(Fencing),
			May: SetOf(ResourceIndependence, LinearizableSink)},
		Why: "A worker that makes up a big number is accepted, after the takeover, and fences out the " +
			"rightful holder: tokens must come from the coordinator and be compared for equality.",
	},
	{
		Name:     "global-fence",
		Summary:  "one fence shared by all resources",
		Protocol: model.Protocol{GlobalFence: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(ResourceIndependence), May: SetOf(LinearizableSink)},
		Why: "A takeover of an unrelated task advances the shared fence and invalidates the current " +
			"holder of this task: each resource needs its own generation.",
	},
	{
		Name:     "request-id-key",
		Summary:  "the result's idempotency key is a per-attempt request id, not the task's identity",
		Protocol: model.Protocol{RequestIDKey: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(IdempotentResult)},
		Why: "Two attempts at the same task store two different results: the key must contain the " +
			"business task's identity.",
	},
	{
		Name:     "no-acquire-dedup",
		Summary:  "acquire keeps no record of request id -> grant, so a retry after a lost grant allocates again",
		Protocol: model.Protocol{NoAcquireDedup: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(AcquireIdempotent)},
		Why: "When the grant's reply is lost and the worker retries, the coordinator allocates a second " +
			"grant for the same request, fencing out the first.",
	},
	{
		Name:     "sink-deadline",
		Summary:  "the sink also stores the lease deadline and rejects writes at or after it (clocks equal)",
		Protocol: model.Protocol{SinkDeadline: true},
		Expect:   Expectation{},
		Why: "The write target takes part in the deadline protocol, so a stale write is rejected from the " +
			"deadline on, before any takeover: it holds absolute validity too (with equal clocks).",
	},
}

// RealWorld lists variants that reproduce the documented behaviour of lease
// systems people run today, named by behaviour rather than product
// (docs/variants/ cites each product's documentation).
var RealWorld = []Variant{
	{
		Name:     "failover-ttl-reset",
		Summary:  "a coordinator failover restarts every lease's TTL in full (etcd, ZooKeeper, Consul)",
		Protocol: model.Protocol{FailoverResetsTTL: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(RenewValidity)},
		Why: "Leases only get longer, so exclusivity holds; but a holder whose deadline has passed can " +
			"still renew after a failover, and a takeover waits up to a full TTL more.",
		Cite: "etcd: a lessor promoted to primary refreshes every lease with its original TTL (server/lease/lessor.go, Promote; etcd-io/etcd#9496, #17642). ZooKeeper: a new leader rebuilds its session tracker from each session's timeout, so every expiry restarts (SessionTrackerImpl). Consul: \"the TTL represents a lower-bound ... This enables us to reset the TTL on a leader failover\" (hashicorp/consul#524; agent/consul/session_ttl.go, initializeSessionTimers).",
	},
	{
		Name:     "holder-clock",
		Summary:  "the holder judges expiry on its own clock and the target checks no token (Kubernetes client-go leader election)",
		Protocol: model.Protocol{HolderClock: true, NoFence: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(Fencing), May: SetOf(LinearizableSink, IdempotentResult, FenceBeforeGrant)},
		Why: "The holder stops writing when its own clock says the lease is over, but a write it sent " +
			"just before (or a clock that jumped back) lands after another holder took over: without a " +
			"token at the target nothing rejects it.",
		Cite: "Kubernetes client-go, tools/leaderelection: \"This implementation does not guarantee that only one client is acting as a leader (a.k.a. fencing)\"; clients act only on timestamps captured on their own clock, and the leader keeps acting until its renew deadline passes on that clock.",
	},
	{
		Name:     "ttl-only-lock",
		Summary:  "a lock service with no fencing token at all, only a TTL (Redlock)",
		Protocol: model.Protocol{NoFence: true},
		Expect:   Expectation{Violates: nonGuarantee | SetOf(Fencing), May: SetOf(LinearizableSink, IdempotentResult, FenceBeforeGrant)},
		Why: "When the holder pauses past the TTL, the lock goes to another client and the paused " +
			"client's write still lands: a TTL alone cannot fence.",
		Cite: "Redis, \"Distributed Locks with Redis\" (Redlock): a lock is a key with a TTL and a random value; nothing the lock service returns is checked by the resource. M. Kleppmann, \"How to do distributed locking\" (2016), shows the paused-client counterexample and the missing fencing token.",
	},
	{
		Name:     "scheduler-only-check",
		Summary:  "the attempt is checked only against the scheduler's bookkeeping, not at the side effect's target (job runners)",
		Protocol: model.Protocol{SchedulerCheck: true},
		Expect: Expectation{Violates: nonGuarantee | SetOf(Fencing),
			May: SetOf(LinearizableSink, ResourceIndependence)},
		Why: "The scheduler confirms the attempt, then the side effect is written to a target that checks " +
			"nothing; a takeover between the two lets the stale attempt's effect land.",
		Cite: "Job runners that keep the attempt in their own bookkeeping — e.g. Temporal, where the completion of an activity attempt that timed out is rejected by the server (its task token is stale) while the attempt's side effects have already happened; likewise a queue's visibility timeout redelivers a job whose first consumer may still be writing.",
	},
	{
		Name:     "dedup-before-fence",
		Summary:  "the idempotency record is checked before the fence, so a stale writer's replay of a committed result is answered OK",
		Protocol: model.Protocol{DedupBeforeFence: true},
		Expect: Expectation{Violates: nonGuarantee | SetOf(Fencing),
			May: SetOf(LinearizableSink, FenceBeforeGrant)},
		Why: "It keeps the data safe — a stale writer can only replay the exact result already stored, " +
			"so idempotent-result holds — and answers retries cheaply; it gives up fencing as an " +
			"observable guarantee: a stale writer is told OK after the takeover.",
		Cite: "A common idempotent-receiver design (e.g. an idempotency-key table consulted first, as in payment APIs' idempotency keys): a retry is answered from the stored response before any other check.",
	},
}

// All returns every built-in variant: the contract's catalogue, then the
// real-world behaviours.
func All() []Variant {
	return append(append([]Variant(nil), Variants...), RealWorld...)
}

// LookupVariant returns the variant with the given name among vs.
func LookupVariant(vs []Variant, name string) (Variant, error) {
	for _, v := range vs {
		if v.Name == name {
			return v, nil
		}
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return Variant{}, fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(names, ", "))
}

// Headline is the invariant a variant's counterexample is about: the first
// it must violate beyond plain fencing's non-guarantee, or that non-guarantee
// itself for the reference; "" for a variant expected to hold everything.
func (v Variant) Headline() string {
	if ids := (v.Expect.Violates &^ nonGuarantee).IDs(); len(ids) > 0 {
		return ids[0]
	}
	if ids := v.Expect.Violates.IDs(); len(ids) > 0 {
		return ids[0]
	}
	return ""
}
