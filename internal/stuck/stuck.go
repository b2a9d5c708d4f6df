// Package stuck holds, for the tests of the progress check (checker's and
// explore's), designs that are safe but cannot always commit: their sinks
// reject writes a correct design takes.
package stuck

import "github.com/fencecheck/fencecheck/model"

// RejectAll is a design that is safe because its sink rejects every
// write: it commits from no state, the initial one included.
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
