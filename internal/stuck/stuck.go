// Package stuck holds, for the tests of the progress check (checker's and
// explore's), designs that cannot always commit, safe at the bounds those
// tests use: their sinks reject writes a correct design takes.
package stuck

import "github.com/fencecheck/fencecheck/model"

// RejectAll is a design whose sink rejects every write: it commits from
// no state, the initial one included. It is safe only at bounds where no
// write reaches the sink (one operation per worker): a write of the
// fence's own token rejected as fenced violates resource-independence.
var RejectAll = model.Design{Check: func(model.SinkView, model.Msg) uint8 { return model.RepFenced }}

// FirstGrantOnly is a design whose sink takes writes of the first grant
// only: from the initial state it commits, but a takeover before the
// first write lands makes the task uncommittable.
var FirstGrantOnly = model.Design{Check: func(v model.SinkView, w model.Msg) uint8 {
	if v.Fence > 1 {
		return model.RepFenced
	}
	return model.RefCheck(v, w)
}}

// OnlyWhenHeld is a design whose writes commit only when their worker
// pauses between its check and its send (a held write, with a delay of at
// least 1): the sink takes a write only once its own timer, armed at each
// advance for ttl+3 ticks, has run out, and a worker decides to write only
// while its own timer, armed at the grant's reply for ttl ticks, runs.
// Without a pause every write reaches the sink too early.
var OnlyWhenHeld = model.Design{
	OnReply: func(u model.Regs, op uint8, rep model.Msg, ttl int) model.Regs {
		if op == model.OpAcquire && rep.Code == model.RepOK {
			u.T = model.Clamp(ttl)
		}
		return u
	},
	MayWrite:  func(u model.Regs) bool { return u.T > 0 },
	OnAdvance: func(u model.Regs, ttl int) model.Regs { u.T = model.Clamp(ttl + 3); return u },
	Check: func(v model.SinkView, w model.Msg) uint8 {
		if w.Token != v.Fence {
			return model.RepFenced
		}
		if v.U.T >= 0 {
			return model.RepExpired
		}
		return model.RepOK
	},
}
