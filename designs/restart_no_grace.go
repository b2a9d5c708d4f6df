package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RestartNoGrace is the reference without its grace period: a restarted
// coordinator that forgot its leases grants at once.
var RestartNoGrace = variant(spec.Variant{
	Name:    "restart-no-grace",
	Summary: "a restarted coordinator forgets its leases and grants at once, with no grace period",
	Design: model.Design{Restart: func(co model.Coordinator, _ int) model.Coordinator {
		co.Lease = [model.MaxResources]model.Lease{}
		return co
	}},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.ExclusiveLease)},
	Needs:  model.SceneRestart | model.SceneTakeover,
	Why: "The lease table lived in memory and its clock with it: after the restart the coordinator " +
		"grants a lease that its holder still counts on, so two grants are valid at once. The fence " +
		"still protects the data (the new grant advances it); the lease itself is no longer exclusive. " +
		"The reference waits one ttl after a restart, by which time every lease granted before it has " +
		"expired.",
	Cite: "Chubby (Burrows, OSDI 2006, §2.9): a new master waits out a conservative lease timeout before it acts, so that no session the old master granted is still believed valid; Raft-based leases (etcd) likewise may not assume a lease granted by a previous leader has expired until its full TTL has passed.",
})
