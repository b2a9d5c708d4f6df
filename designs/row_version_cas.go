package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// RowVersionCAS's sink does compare-and-set on a row version instead of
// checking a token: a write carries the version the worker last read
// (register A, stamped on the request), and succeeds only if the row is
// still at it, which bumps the version.
var RowVersionCAS = variant(spec.Variant{
	Name:    "row-version-cas",
	Summary: "the sink does compare-and-set on a row version (optimistic concurrency) instead of checking the token",
	Design: model.Design{
		OnReply: func(u model.Regs, op uint8, rep model.Msg, _ int) model.Regs {
			if op == model.OpRead {
				u.A = rep.U // the version the worker read
			}
			return u
		},
		Stamp: func(u model.Regs, kind uint8) uint8 {
			if kind == model.WriteReq {
				return u.A
			}
			return 0
		},
		Check: func(v model.SinkView, w model.Msg) uint8 {
			if w.U == v.U.A {
				return model.RepOK
			}
			return model.RepFenced
		},
		Accepted: func(v model.SinkView, _ model.Msg) (uint8, model.Regs) {
			if v.U.A < 3 {
				v.U.A++ // versions past 3 change no verdict at these bounds
			}
			return v.Fence, v.U
		},
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.ResourceIndependence, spec.LinearizableSink, spec.FenceBeforeGrant)},
	Why: "Compare-and-set stops lost updates between writers that read the same version, not stale " +
		"holders: a holder that read the row before it paused still matches the version when it wakes " +
		"after the takeover, as long as the new holder has not written yet, and its write lands.",
	Cite: "Optimistic concurrency control on a version column (e.g. JPA @Version, DynamoDB conditional writes on a version attribute); Kleppmann, \"How to do distributed locking\" (2016), on why a check the target performs must be tied to the lock's token.",
})
