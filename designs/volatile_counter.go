package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// VolatileCounter takes tokens from an in-memory counter.
var VolatileCounter = variant(spec.Variant{
	Name:    "volatile-counter",
	Summary: "tokens come from the coordinator's in-memory counter, which restarts at zero with the coordinator",
	Design: model.Design{
		Tokens:  model.CounterFirst,
		Advance: func(_, to uint8) uint8 { return to }, // the sink takes the coordinator's word
		Restart: func(co model.Coordinator, ttl int) model.Coordinator {
			co = model.RefRestart(co, ttl)
			co.Counter = [model.MaxResources]uint8{}
			return co
		},
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.TokenMonotonic),
		May: spec.SetOf(spec.Fencing, spec.FenceBeforeGrant, spec.ExclusiveLease, spec.ResourceIndependence, spec.LinearizableSink)},
	Needs: model.SceneRestart,
	Why: "After a restart the coordinator hands out numbers it already used: tokens are no longer " +
		"monotonic, and a stale holder's token can equal the fence again.",
})
