package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// ProducerEpochs's sink keeps, per producer (a worker), the highest epoch
// (the producer's incarnation) it has seen and rejects older epochs of that
// producer — Kafka's idempotent-producer fencing, applied to a lease whose
// holders are different producers. The epochs live in the sink's registers,
// four bits per worker (A: workers 1 and 2, B: workers 3 and 4), so the
// design tells workers apart.
var ProducerEpochs = variant(spec.Variant{
	Name:    "producer-epochs",
	Summary: "the sink fences each producer's older epochs (Kafka producer epochs), not other holders",
	Design:  model.Design{Asymmetric: true, Check: producerCheck, Accepted: producerAccepted},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant, spec.ResourceIndependence)},
	Why: "Producer epochs fence a zombie instance of the same producer (an older incarnation of a " +
		"worker), but a takeover hands the task to a different producer, whose epoch says nothing about " +
		"the old holder's: the old holder's stale write lands. And a grant that reaches a producer's " +
		"older incarnation (a request sent before it crashed) is refused at the sink although it is the " +
		"newest. Epochs must belong to the task (the transactional id), which makes them the fencing " +
		"token again.",
	Cite: "Kafka: the producer epoch, bumped by initTransactions for a transactional.id, fences older producer instances with that id (KIP-98); fencing across different ids is not what it does.",
})

// epoch is the highest epoch the sink saw from worker w, and the registers
// with it set to e.
func epoch(u model.Regs, w uint8) (uint8, func(e uint8) model.Regs) {
	reg, shift := &u.A, (w%2)*4
	if w >= 2 {
		reg = &u.B
	}
	return (*reg >> shift) & 0xf, func(e uint8) model.Regs {
		*reg = *reg&^(0xf<<shift) | (min(e, 15) << shift)
		return u
	}
}

func producerCheck(v model.SinkView, w model.Msg) uint8 {
	if e, _ := epoch(v.U, w.Worker); w.Inc < e {
		return model.RepFenced
	}
	return model.RepOK
}

func producerAccepted(v model.SinkView, w model.Msg) (uint8, model.Regs) {
	e, set := epoch(v.U, w.Worker)
	return v.Fence, set(max(e, w.Inc))
}
