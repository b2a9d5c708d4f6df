package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// GrantBeforeFence hands out the token before the sink's fence moves.
var GrantBeforeFence = variant(spec.Variant{
	Name:    "grant-before-fence",
	Summary: "the coordinator hands out the new token before the sink's fence is advanced",
	Design:  model.Design{Tokens: model.GrantThenFence},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing, spec.FenceBeforeGrant),
		May: spec.SetOf(spec.ResourceIndependence, spec.LinearizableSink)},
	Why: "Between the grant and the advance the sink still holds the old fence: the new holder is " +
		"rejected and the old holder's write is accepted after the takeover.",
})
