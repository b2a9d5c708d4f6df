package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RenewFromOldDeadline extends a renewed lease from its old deadline
// rather than from the renew.
var RenewFromOldDeadline = variant(spec.Variant{
	Name:    "renew-from-old-deadline",
	Summary: "a renew extends the lease from its old deadline, not from the moment of the renew",
	Design: model.Design{Deadline: func(old model.Lease, _ model.Msg, ttl int) int8 {
		if old.Holder == 0 {
			return model.Clamp(ttl) // a grant
		}
		return model.Clamp(int(old.Left) + ttl)
	}},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.RenewValidity)},
	Needs:  model.SceneTakeover,
	Unobservable: "the shortest run ends with the late renew accepted by the coordinator but its reply " +
		"not yet back: the history shows the renew open (it may never have taken effect), only the model " +
		"sees it accepted",
	Why: "Each early renew banks the time left: the coordinator keeps a lease alive past the " +
		"deadline every renew promised (ttl from the renew), so a renew it accepts after that deadline " +
		"revives a lease the holder's contract says had ended, and a takeover waits longer than ttl.",
})
