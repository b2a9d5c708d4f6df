package checker

import (
	"errors"
	"fmt"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// A Fault is a step at which a design's decision failed: it returned
// what its documentation does not allow (model.DesignFault) or panicked.
// A search that meets one stops there and reports it rather than a
// verdict: the state the step would leave is none the model defines.
type Fault struct {
	// Cause is the DesignFault, or what the step panicked with.
	Cause string `json:"cause"`
	// Actions is the run up to and including the step that failed (a
	// breadth-first search gives that step alone, at Depth).
	Actions []string `json:"actions"`
	Depth   int      `json:"depth,omitempty"`
}

func (f *Fault) Error() string { return f.Cause }

// faultOf is the Fault of what panicked with r after the actions before:
// taking action a, or (not taking) choosing the next one (Enabled).
func faultOf(r any, before []string, a model.Action, taking bool) *Fault {
	var df *model.DesignFault
	cause := fmt.Sprintf("a step panicked: %v (a decision of the design's, or the model on what one returned)", r)
	if err, ok := r.(error); ok && errors.As(err, &df) {
		cause = df.Error()
	}
	if taking {
		before = append(before, a.String())
	}
	return &Fault{Cause: cause, Actions: before}
}

// safeRandomRun is RandomRun, with the Fault its walk met, if any (the
// run is then nil).
func safeRandomRun(m *model.Machine, seed uint64, steps int, stop spec.Set) (run *model.Run, judged spec.Set, fault *Fault) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*Fault)
			if !ok {
				panic(r)
			}
			run, judged, fault = nil, 0, f
		}
	}()
	run, judged = RandomRun(m, seed, steps, stop)
	return run, judged, nil
}
