package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// HolderClock's holder judges its lease's expiry on its own clock and
// writes only while it believes the lease valid; the sink still fences.
var HolderClock = variant(spec.Variant{
	Name:    "holder-clock",
	Summary: "the holder judges expiry on its own clock and writes only while it believes the lease valid",
	Design: model.Design{
		OnReply:  holderTimer,
		MayWrite: func(u model.Regs) bool { return u.T > 0 },
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee},
	Why: "The holder's own check stops most late writes but cannot stop one already in flight or one " +
		"sent after its clock jumped back: what keeps the data safe is the sink's fence, and absolute " +
		"validity stays out of reach. (Without the fence, see holder-clock-no-fence.)",
})

// HolderClockNoFence is Kubernetes client-go's leader election: the holder
// judges expiry on its own clock and the target checks no token.
var HolderClockNoFence = variant(spec.Variant{
	Name:    "holder-clock-no-fence",
	Summary: "the holder judges expiry on its own clock and the target checks no token (Kubernetes client-go leader election)",
	Design: model.Design{
		OnReply:  holderTimer,
		MayWrite: func(u model.Regs) bool { return u.T > 0 },
		Check:    ok,
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant)},
	Why: "The holder stops writing when its own clock says the lease is over, but a write it sent " +
		"just before (or a clock that jumped back) lands after another holder took over: without a " +
		"token at the target nothing rejects it.",
	Cite: "Kubernetes client-go, tools/leaderelection: \"This implementation does not guarantee that only one client is acting as a leader (a.k.a. fencing)\"; clients act only on timestamps captured on their own clock, and the leader keeps acting until its renew deadline passes on that clock.",
})
