package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TwoStepCommitCheck is a correct two-step sink: the prepare checks the
// token and records it (register A), and the commit writes only if the
// prepared token still equals the fence — a conditional update at commit.
var TwoStepCommitCheck = variant(spec.Variant{
	Name:    "two-step-commit-check",
	Summary: "the sink prepares (checks the token, holds it) and commits only if the fence still equals the prepared token",
	Design: model.Design{
		Prepared: func(u model.Regs, w model.Msg) model.Regs { u.A = w.Token; return u },
		Commit: func(v model.SinkView, w model.Msg) uint8 {
			if v.U.A == w.Token && v.Fence == w.Token {
				return model.RepOK
			}
			return model.RepFenced
		},
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee, May: spec.SetOf(spec.ResourceIndependence)},
	Why: "Splitting a write is safe when the step that writes is itself conditional on the fence: a " +
		"takeover between prepare and commit moves the fence, and the commit refuses. (Another " +
		"writer's prepare may take the register over, refusing a rightful commit: safe, not live.)",
	Cite: "Two-phase commit participants that validate at commit (e.g. a prepared transaction whose commit re-checks its lock's epoch); the article: \"the target must support conditional update, a transaction, or an equivalent atomic check\".",
})
