package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// FailoverTTLReset keeps the lease table across a restart and restarts every
// valid lease's TTL in full, with no grace period.
var FailoverTTLReset = variant(spec.Variant{
	Name:    "failover-ttl-reset",
	Summary: "a coordinator failover restarts every lease's TTL in full (etcd, ZooKeeper, Consul)",
	Design: model.Design{Restart: func(co model.Coordinator, ttl int) model.Coordinator {
		for r := range co.Lease {
			if l := &co.Lease[r]; l.Holder != 0 && l.Left > 0 {
				l.Left = model.Clamp(ttl)
			}
		}
		return co
	}},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.RenewValidity)},
	Needs:  model.SceneRestart,
	Why: "Leases only get longer, so exclusivity holds; but a holder whose deadline has passed can " +
		"still renew after a failover, and a takeover waits up to a full TTL more.",
	Cite: "etcd: a lessor promoted to primary refreshes every lease with its original TTL (server/lease/lessor.go, Promote; etcd-io/etcd#9496, #17642). ZooKeeper: a new leader rebuilds its session tracker from each session's timeout, so every expiry restarts (SessionTrackerImpl). Consul: \"the TTL represents a lower-bound ... This enables us to reset the TTL on a leader failover\" (hashicorp/consul#524; agent/consul/session_ttl.go, initializeSessionTimers).",
})
