package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// WorkerClock judges expiry by the time the worker reports.
var WorkerClock = variant(spec.Variant{
	Name:    "worker-clock",
	Summary: "lease expiry is judged by the time the worker reports, not the coordinator's monotonic clock",
	Design: model.Design{
		ReportsTime: true,
		Valid:       func(l model.Lease, req model.Msg) bool { return l.Holder != 0 && model.Reported(req) < int(l.Left) },
		Deadline: func(_ model.Lease, req model.Msg, ttl int) int8 {
			return model.Clamp(model.Reported(req) + ttl)
		},
		Renew: func(l model.Lease, req model.Msg) uint8 {
			switch {
			case !model.RefOwns(l, req):
				return model.RepNotHolder
			case model.Reported(req) >= int(l.Left):
				return model.RepExpired
			}
			return model.RepOK
		},
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.ExclusiveLease), May: spec.SetOf(spec.RenewValidity)},
	Needs:  model.SceneTakeover,
	Why: "A worker whose clock runs ahead makes the holder's lease look expired early: the coordinator " +
		"grants the lease again while the holder's lease is still valid.",
})
