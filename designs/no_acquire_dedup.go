package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// NoAcquireDedup keeps no record of request id -> grant.
var NoAcquireDedup = variant(spec.Variant{
	Name:    "no-acquire-dedup",
	Summary: "acquire keeps no record of request id -> grant, so a retry after a lost grant allocates again",
	Design:  model.Design{Answers: func(model.Dedup, model.Msg) uint8 { return 0 }}, // every request asks anew
	Expect:  spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.AcquireIdempotent)},
	Needs:   model.SceneLostGrant,
	Unobservable: "the first grant's reply is lost, so the history shows one grant for the request: " +
		"only the model sees the two grants behind it",
	Why: "When the grant's reply is lost and the worker retries, the coordinator allocates a second " +
		"grant for the same request, fencing out the first.",
})
