package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// ReleaseAdvancesFence advances the sink's fence when a lease is released.
var ReleaseAdvancesFence = variant(spec.Variant{
	Name:    "release-advances-fence",
	Summary: "an accepted release advances the sink's fence at once",
	Design:  model.Design{ReleaseAdvances: true},
	Expect:  spec.Expectation{Violates: spec.NonGuarantee},
	Why: "The released holder's late writes are rejected from the release on instead of from the next " +
		"takeover; expiry without a release still leaves the gap the reference has, so absolute " +
		"validity is still out of reach. The advance is a message like any other: one that the network " +
		"delays past the next grant fences the new holder too (safe, not live).",
})
