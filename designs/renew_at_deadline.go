package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RenewAtDeadline accepts a renew that arrives exactly at the deadline.
var RenewAtDeadline = variant(spec.Variant{
	Name:    "renew-at-deadline",
	Summary: "a renew exactly at the deadline is accepted",
	Design: model.Design{
		Renew: func(l model.Lease, req model.Msg) uint8 {
			switch {
			case !model.RefOwns(l, req):
				return model.RepNotHolder
			case l.Left < 0: // now <= deadline, not now < deadline
				return model.RepExpired
			}
			return model.RepOK
		},
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.RenewValidity), May: spec.SetOf(spec.ExclusiveLease)},
	Needs:  model.SceneRenewAtDeadline,
	Why: "At the deadline the lease has expired (now < deadline is false): accepting the renew revives " +
		"an expired lease, which the article forbids. If a takeover has already begun (the coordinator " +
		"asked the sink to advance for the next holder), the revived lease and the new grant are valid " +
		"at once.",
})
