package model

import "fmt"

// A DesignFault is a decision of a design that returned what its
// documentation does not allow: a reply code none of its own, results
// more than the sink's table holds. Next panics with it at the step where
// the decision was taken, and a search reports it as the design's fault,
// with the run that led there, not as a violation of an invariant (the
// state it would leave is none the framework defines).
type DesignFault struct {
	Decision string // the Design field, "Check"
	Detail   string // what it did, "returned reply code 42, want one of RepOK, RepFenced, RepExpired"
}

func (f *DesignFault) Error() string { return "design: " + f.Decision + " " + f.Detail }

// codeOf checks that decision returned one of the reply codes it may (a
// set of bits, 1<<code): a test of a bit, on the paths of every message.
func codeOf(decision string, code uint8, may uint16) uint8 {
	if code >= 16 || may>>code&1 == 0 {
		codeFault(decision, code, may)
	}
	return code
}

// codeFault panics with the DesignFault of a reply code not in may.
func codeFault(decision string, code uint8, may uint16) {
	var names []string
	for c := range 16 {
		switch {
		case may>>c&1 == 0:
		case c == 0:
			names = append(names, "0 (no answer)")
		default:
			names = append(names, "Rep"+repNames[c])
		}
	}
	panic(&DesignFault{Decision: decision, Detail: fmt.Sprintf("returned reply code %d, want one of %v", code, names)})
}

// The reply codes each decision may return.
const (
	answersCodes = 1 | 1<<RepOK | 1<<RepHeld
	renewCodes   = 1<<RepOK | 1<<RepNotHolder | 1<<RepExpired
	releaseCodes = 1<<RepOK | 1<<RepNotHolder
	checkCodes   = 1<<RepOK | 1<<RepFenced | 1<<RepExpired // Check's and Commit's
)

// repNames are the reply codes' Go names after "Rep".
var repNames = [...]string{RepOK: "OK", RepReplayed: "Replayed", RepHeld: "Held", RepExpired: "Expired",
	RepNotHolder: "NotHolder", RepFenced: "Fenced", RepConflict: "Conflict"}
