package designs

import "github.com/fencecheck/fencecheck/spec"

// Reference is the source article's protocol: every decision the
// reference's own (model.Ref*).
var Reference = variant(spec.Variant{
	Name:    "reference",
	Summary: "none: the protocol of the source article",
	Expect:  spec.Expectation{Violates: spec.NonGuarantee},
	Why: "The sink's fence is advanced before each grant and checked atomically with the write, so a " +
		"stale holder's write is rejected once a newer grant exists. A stale write between expiry and " +
		"takeover still lands: fencing does not give absolute lease validity (the article says so). " +
		"A coordinator restart loses the lease table with the clock that measured it, and grants " +
		"nothing for one ttl (a grace period).",
})
