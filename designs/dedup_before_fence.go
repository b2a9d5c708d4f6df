package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// DedupBeforeFence answers a replay from the idempotency record before it
// looks at the token.
var DedupBeforeFence = variant(spec.Variant{
	Name:    "dedup-before-fence",
	Summary: "the idempotency record is checked before the fence, so a stale writer's replay of a committed result is answered OK",
	Design:  model.Design{ReplayFirst: true},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.LinearizableSink, spec.FenceBeforeGrant)},
	Why: "It keeps the data safe — a stale writer can only replay the exact result already stored, " +
		"so idempotent-result holds — and answers retries cheaply; it gives up fencing as an " +
		"observable guarantee: a stale writer is told OK after the takeover.",
	Cite: "A common idempotent-receiver design (e.g. an idempotency-key table consulted first, as in payment APIs' idempotency keys): a retry is answered from the stored response before any other check.",
})
