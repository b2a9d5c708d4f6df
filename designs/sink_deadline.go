package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// SinkDeadline's sink keeps the lease deadline it learns with each advance
// (its register timer) and rejects writes from the deadline on.
var SinkDeadline = variant(spec.Variant{
	Name:    "sink-deadline",
	Summary: "the sink also stores the lease deadline and rejects writes at or after it (clocks equal)",
	Design: model.Design{
		OnAdvance: func(u model.Regs, ttl int) model.Regs { u.T = model.Clamp(ttl); return u },
		Check: func(v model.SinkView, w model.Msg) uint8 {
			switch {
			case w.Token != v.Fence:
				return model.RepFenced
			case v.U.T <= 0:
				return model.RepExpired
			}
			return model.RepOK
		},
	},
	Expect: spec.Expectation{},
	Why: "The write target takes part in the deadline protocol: it learns each grant's deadline with " +
		"the advance and rejects a stale write from the deadline on, before any takeover, so it holds " +
		"absolute validity too (with equal clocks). It learns nothing of renewals, so a renewed " +
		"holder's writes are refused as expired from the grant's first deadline on: safe, not live.",
})
