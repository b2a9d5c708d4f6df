package model

// Protocol holds the protocol's decision points. The zero value is the
// reference protocol of the source article; a variant is the reference with
// one (or a few) of these switched, never a copy of the model.
type Protocol struct {
	// GrantBeforeFence: the coordinator hands out the new token (from its own
	// durable counter) before the sink's fence is advanced; the advance
	// reaches the sink later, as a separate message.
	GrantBeforeFence bool `json:"grantBeforeFence,omitempty"`
	// VolatileCounter: tokens come from the coordinator's in-memory counter,
	// which restarts at zero with the coordinator; the sink's fence is set to
	// the token the coordinator hands out.
	VolatileCounter bool `json:"volatileCounter,omitempty"`
	// WorkerClock: lease deadlines and expiry are judged by the time the
	// worker reports in its request, not by the coordinator's own clock.
	WorkerClock bool `json:"workerClock,omitempty"`
	// RenewFromSendTime: a renew's new deadline counts from the time the
	// worker says it sent the renew, not from when the coordinator got it.
	RenewFromSendTime bool `json:"renewFromSendTime,omitempty"`
	// RenewTokenOnly: renew checks the token but not the owner incarnation.
	RenewTokenOnly bool `json:"renewTokenOnly,omitempty"`
	// RenewAtDeadline: a renew arriving exactly at the deadline is accepted.
	RenewAtDeadline bool `json:"renewAtDeadline,omitempty"`
	// CheckThenWrite: the sink reads the fence and writes the result in two
	// separate steps; other steps can run between them.
	CheckThenWrite bool `json:"checkThenWrite,omitempty"`
	// AcceptHigherToken: the sink accepts any token at least its fence (and
	// raises the fence to it), so a worker can supply a bigger number.
	AcceptHigherToken bool `json:"acceptHigherToken,omitempty"`
	// GlobalFence: one fence is shared by all resources.
	GlobalFence bool `json:"globalFence,omitempty"`
	// RequestIDKey: a result's idempotency key is the write attempt's own
	// request id, not the task's identity.
	RequestIDKey bool `json:"requestIdKey,omitempty"`
	// NoAcquireDedup: acquire keeps no record of request id -> grant, so a
	// retry after a lost grant allocates again.
	NoAcquireDedup bool `json:"noAcquireDedup,omitempty"`
	// SinkDeadline: the sink also stores the lease deadline (sent with each
	// advance and renew) and rejects writes that arrive at or after it.
	SinkDeadline bool `json:"sinkDeadline,omitempty"`

	// FailoverResetsTTL: when a coordinator restarts, every lease's
	// remaining time restarts at the full ttl (etcd, ZooKeeper and Consul
	// document this for leader failover).
	FailoverResetsTTL bool `json:"failoverResetsTtl,omitempty"`
	// NoFence: the write target checks no token at all: only the lease's
	// TTL stands between a stale holder and the data (a lock service with
	// no fencing token, such as Redlock).
	NoFence bool `json:"noFence,omitempty"`
	// HolderClock: the holder judges its lease's expiry on its own clock
	// and writes only while it believes the lease valid (Kubernetes
	// client-go leader election).
	HolderClock bool `json:"holderClock,omitempty"`
	// SchedulerCheck: the attempt's token is checked against the
	// scheduler's (coordinator's) own bookkeeping, and the side effect is
	// then written to a target that checks nothing (the job-runner pattern).
	SchedulerCheck bool `json:"schedulerCheck,omitempty"`
	// DedupBeforeFence: the sink looks up the result id before the fence, so
	// a stale writer's replay of an already committed result is answered OK.
	DedupBeforeFence bool `json:"dedupBeforeFence,omitempty"`
}
