package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// GlobalFence shares one fence among all resources.
var GlobalFence = variant(spec.Variant{
	Name:    "global-fence",
	Summary: "one fence shared by all resources",
	Design:  model.Design{FenceOf: func(uint8) uint8 { return 0 }},
	Expect:  spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.ResourceIndependence), May: spec.SetOf(spec.LinearizableSink)},
	Needs:   model.SceneTakeover,
	Why: "A takeover of an unrelated task advances the shared fence and invalidates the current " +
		"holder of this task: each resource needs its own generation.",
})
