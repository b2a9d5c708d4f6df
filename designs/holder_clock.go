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
