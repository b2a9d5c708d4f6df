package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// SchedulerOnlyCheck checks the attempt against the scheduler's own
// bookkeeping; the target then writes whatever it is sent.
var SchedulerOnlyCheck = variant(spec.Variant{
	Name:    "scheduler-only-check",
	Summary: "the attempt is checked only against the scheduler's bookkeeping, not at the side effect's target (job runners)",
	Design: model.Design{
		Check: func(v model.SinkView, w model.Msg) uint8 {
			if model.RefOwns(v.Lease, w) && v.Lease.Left > 0 {
				return model.RepOK
			}
			return model.RepFenced
		},
		Commit: ok, // the target checks nothing
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.LinearizableSink, spec.ResourceIndependence)},
	Why: "The scheduler confirms the attempt, then the side effect is written to a target that checks " +
		"nothing; a takeover between the two lets the stale attempt's effect land.",
	Cite: "Job runners that keep the attempt in their own bookkeeping — e.g. Temporal, where the completion of an activity attempt that timed out is rejected by the server (its task token is stale) while the attempt's side effects have already happened; likewise a queue's visibility timeout redelivers a job whose first consumer may still be writing.",
})
