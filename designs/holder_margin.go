package designs

import (
	"fmt"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// HolderMargin is a holder that stops writing margin ticks before its
// lease's deadline on its own clock, writing to a target that checks no
// token: the margin is what stands between clock skew and a stale write.
func HolderMargin(margin int) spec.Variant {
	return swept(spec.Variant{
		Name:    "holder-margin",
		Summary: fmt.Sprintf("the holder stops writing %d tick(s) before its deadline on its own clock; the target checks no token", margin),
		Design: model.Design{
			OnReply:  holderTimer,
			MayWrite: func(u model.Regs) bool { return int(u.T) > margin },
			Check:    ok,
		},
		Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
			May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant)},
		Why: "A margin covers clock skew only if messages are delivered in bounded time: in an " +
			"asynchronous network a write sent inside the margin can still land after a takeover, so " +
			"without a fence no margin is safe (the search finds it for every margin and skew).",
		Cite: "Kubernetes client-go leader election: RenewDeadline < LeaseDuration is the margin, and the package documents that it tolerates clock skew only up to their ratio and does not fence.",
		Params: []spec.Param{{Name: "margin", Min: 0, Max: 60, Default: defaultMargin,
			Doc: "ticks before its deadline (on its own clock) at which the holder stops writing"}},
		At: func(vals []int) spec.Variant { return HolderMargin(vals[0]) },
	}, margin == defaultMargin)
}

// defaultMargin is the catalogue's holder-margin.
const defaultMargin = 1
