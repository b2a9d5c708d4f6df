// Package designs is fencecheck's catalogue of lease + fencing designs: the
// source article's reference protocol, every unsafe shortcut it warns
// against, the documented behaviour of real lease services, and designs
// people propose. Each is written with model.Design's public decisions
// exactly as a user writes their own, one small file each, and registered
// by name with the verdicts the searches must reach (docs/variants/ has a
// page for each).
package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// All returns every built-in design, in the catalogue's order: the
// explore contract's variants first, then the real-world behaviours and the
// proposed designs.
func All() []spec.Variant {
	return []spec.Variant{
		Reference, GrantBeforeFence, CheckThenWrite, VolatileCounter, WorkerClock, RenewTokenOnly,
		RenewAtDeadline, AcceptHigherToken, GlobalFence, RequestIDKey, NoAcquireDedup, SinkDeadline,
		FailoverTTLReset, HolderClock, HolderClockNoFence, TTLOnlyLock, SchedulerOnlyCheck, DedupBeforeFence,
		RestartNoGrace, RowVersionCAS, HolderMargin(1), ProducerEpochs, EtcdRevisions, RenewFromOldDeadline,
		LockDelayNoFence, TwoStepCommitCheck, ReleaseAdvancesFence, VolatileSinkFence,
	}
}

// splitBrain is what two primaries do to any design with one coordinator:
// each grants, renews and answers retries from its own table.
var splitBrain = spec.Expectation{May: spec.SetOf(spec.ExclusiveLease, spec.RenewValidity,
	spec.AcquireIdempotent, spec.TokenMonotonic, spec.Fencing, spec.FenceBeforeGrant,
	spec.ResourceIndependence, spec.LinearizableSink, spec.IdempotentResult)}

// variant fills in what every catalogue entry shares.
func variant(v spec.Variant) spec.Variant {
	if v.SplitBrain == (spec.Expectation{}) {
		v.SplitBrain = splitBrain
	}
	return v
}

// swept is a catalogue entry with parameters: at the catalogue's values
// (atDefault) its expectation stands; elsewhere its headline violations are
// only possible (explore sweep finds out which values are safe), so that a
// history of the variant at other values is judged without a verdict
// presumed.
func swept(v spec.Variant, atDefault bool) spec.Variant {
	v = variant(v)
	if !atDefault {
		extra := v.Expect.Violates&^spec.NonGuarantee | v.Expect.AnyOf
		v.Expect.Violates &^= extra
		v.Expect.May |= extra
		v.Expect.AnyOf = 0
	}
	return v
}

// ok is a decision that always lets a write through.
func ok(model.SinkView, model.Msg) uint8 { return model.RepOK }

// maxToken is the sink check of a max-token sink: any token at least the
// fence.
func maxToken(v model.SinkView, w model.Msg) uint8 {
	if w.Token >= v.Fence {
		return model.RepOK
	}
	return model.RepFenced
}

// raiseFence is a max-token sink's fence after it took write w.
func raiseFence(v model.SinkView, w model.Msg) (uint8, model.Regs) { return max(v.Fence, w.Token), v.U }

// holderTimer is a holder that counts its lease on its own clock from the
// reply of its acquire or renew, and forgets it when the lease is refused.
func holderTimer(u model.Regs, op uint8, rep model.Msg, ttl int) model.Regs {
	switch {
	case (op == model.OpAcquire || op == model.OpRenew) && rep.Code == model.RepOK:
		u.T = model.Clamp(ttl)
	case op == model.OpRelease && rep.Code == model.RepOK,
		rep.Code == model.RepExpired, rep.Code == model.RepNotHolder, rep.Code == model.RepFenced:
		u.T = 0
	}
	return u
}
