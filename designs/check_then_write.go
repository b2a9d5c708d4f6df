package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// CheckThenWrite checks the fence and writes in two separate steps.
var CheckThenWrite = variant(spec.Variant{
	Name:    "check-then-write",
	Summary: "the sink reads the fence and writes the result in two separate steps",
	Design:  model.Design{Commit: ok}, // the commit checks nothing
	// The stale write shows as fencing when the new grant was observed
	// before the write's invoke, and may show only as linearizable-sink
	// when the two overlap: either is the flaw, and the campaign must find
	// at least one (AnyOf).
	Expect: spec.Expectation{Violates: spec.NonGuarantee, AnyOf: spec.SetOf(spec.Fencing, spec.LinearizableSink)},
	Why: "A takeover can happen between the read of the fence and the write: the stale write passed " +
		"the check against the old fence and lands after the new holder got its token.",
})
