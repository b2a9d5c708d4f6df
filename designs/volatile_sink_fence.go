package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// VolatileSinkFence keeps the sink's fences in memory: a sink restart
// forgets them (its results are durable).
var VolatileSinkFence = variant(spec.Variant{
	Name:    "volatile-sink-fence",
	Summary: "the sink keeps its fences in memory, so a sink restart resets them to zero",
	Design: model.Design{SinkRestart: func(s model.Sink) model.Sink {
		s.Fence = [model.MaxResources]uint8{}
		return s
	}},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.TokenMonotonic),
		May: spec.SetOf(spec.Fencing, spec.FenceBeforeGrant, spec.ExclusiveLease, spec.ResourceIndependence, spec.LinearizableSink)},
	Needs: model.SceneSinkRestart,
	Why: "Tokens come from the sink's fence: after a restart the sink counts from zero again and the " +
		"coordinator grants numbers it granted before. The article: \"a real service must persist the " +
		"target's fence\".",
})
