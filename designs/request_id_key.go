package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RequestIDKey keys results by the write attempt.
var RequestIDKey = variant(spec.Variant{
	Name:    "request-id-key",
	Summary: "the result's idempotency key is a per-attempt request id, not the task's identity",
	Design:  model.Design{Key: func(_ model.Msg, attempt uint8) uint8 { return attempt }},
	Expect:  spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.IdempotentResult)},
	Needs:   model.SceneTakeover,
	Why: "Two attempts at the same task store two different results: the key must contain the " +
		"business task's identity.",
})
