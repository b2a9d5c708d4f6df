package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// HolderClockNoFence is Kubernetes client-go's leader election: the holder
// judges expiry on its own clock and the target checks no token.
var HolderClockNoFence = variant(spec.Variant{
	Name:    "holder-clock-no-fence",
	Summary: "the holder judges expiry on its own clock and the target checks no token (Kubernetes client-go leader election)",
	Design: func() model.Design {
		d := HolderClock.Design
		d.Check = ok // the target checks no token
		return d
	}(),
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant)},
	Why: "The holder stops writing when its own clock says the lease is over, but a write it sent " +
		"just before (or a clock that jumped back) lands after another holder took over: without a " +
		"token at the target nothing rejects it.",
	Cite: "Kubernetes client-go, tools/leaderelection: \"This implementation does not guarantee that only one client is acting as a leader (a.k.a. fencing)\"; clients act only on timestamps captured on their own clock, and the leader keeps acting until its renew deadline passes on that clock.",
})
