package designs

import (
	"fmt"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RestartNoGrace is the reference without its grace period: a restarted
// coordinator that forgot its leases grants at once.
var RestartNoGrace = RestartGrace(0)

// RestartGrace is the reference with a grace period of grace ticks after a
// coordinator restart (the reference's is one ttl): a restarted
// coordinator that forgot its leases grants nothing until it has passed.
func RestartGrace(grace int) spec.Variant {
	summary := "a restarted coordinator forgets its leases and grants at once, with no grace period"
	if grace > 0 {
		summary = fmt.Sprintf("a restarted coordinator forgets its leases and grants nothing for %d tick(s)", grace)
	}
	return swept(spec.Variant{
		Name:    "restart-no-grace",
		Summary: summary,
		Design: model.Design{Restart: func(co model.Coordinator, _ int) model.Coordinator {
			co.Lease = [model.MaxResources]model.Lease{}
			co.U.T = model.Clamp(grace)
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
		Params: []spec.Param{{Name: "grace", Min: 0, Max: 60, Default: 0,
			Doc: "ticks after a restart during which the coordinator grants nothing"}},
		At: func(vals []int) spec.Variant { return RestartGrace(vals[0]) },
	}, grace == 0)
}
