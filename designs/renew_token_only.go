package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RenewTokenOnly's renew checks the worker and its token, not its
// incarnation.
var RenewTokenOnly = variant(spec.Variant{
	Name:    "renew-token-only",
	Summary: "renew checks the token but not the owner incarnation",
	Design: model.Design{
		Renew: func(l model.Lease, req model.Msg) uint8 {
			switch {
			case l.Holder != req.Worker+1 || l.Token != req.Token: // no incarnation check
				return model.RepNotHolder
			case l.Left <= 0:
				return model.RepExpired
			}
			return model.RepOK
		},
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.RenewValidity)},
	Needs:  model.SceneCrash,
	Why: "A restarted worker (a new incarnation) that recovered the token from its journal renews the " +
		"lease of its previous incarnation, whose in-flight work it knows nothing about.",
})
