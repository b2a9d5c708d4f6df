package spec

import (
	"time"
)

// Violation is one invariant violated by a history.
type Violation struct {
	Invariant string `json:"invariant"`
	Resource  string `json:"resource,omitempty"`
	Message   string `json:"message"`
	// Events are the indexes (0-based, header excluded) of the events that
	// show the violation.
	Events []int `json:"events"`
}

// Report is the verdict on one history.
type Report struct {
	// OK is true when no invariant is violated.
	OK bool `json:"ok"`
	// Events counts the event lines; Operations counts completed or open
	// invocations.
	Events     int         `json:"events"`
	Operations int         `json:"operations"`
	Violations []Violation `json:"violations"`
	// Omitted counts the violations left out of Violations: Check lists at
	// most MaxPerResource per invariant and resource.
	Omitted int `json:"omitted,omitempty"`
	// Unknown lists the invariants whose check ran out of budget (the
	// porcupine timeout): no verdict, rather than a wrong one.
	Unknown []string `json:"unknown,omitempty"`
}

// Options tune a history check.
type Options struct {
	// Timeout bounds porcupine's search per resource; 0 means no bound.
	// Never set it inside a property test: verdicts would depend on load.
	Timeout time.Duration
}
