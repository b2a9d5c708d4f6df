package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// AcceptHigherToken's sink takes any token at least its fence.
var AcceptHigherToken = variant(spec.Variant{
	Name:    "accept-higher-token",
	Summary: "the sink accepts any token at least its fence, so a worker can supply a bigger number",
	Design:  model.Design{Check: maxToken, Accepted: raiseFence},
	Expect:  spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing), May: spec.SetOf(spec.ResourceIndependence, spec.LinearizableSink)},
	Needs:   model.SceneForgery | model.SceneTakeover,
	Unobservable: "the stale write carries a token the forger made up, bigger than any grant: by its number " +
		"it is the newest, so the history shows the sink out of its spec (linearizable-sink), not a stale " +
		"write; only the model knows the forger's own grant had been superseded",
	Why: "A worker that makes up a big number is accepted, after the takeover, and fences out the " +
		"rightful holder: tokens must come from the coordinator and be compared for equality.",
})
