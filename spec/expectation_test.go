package spec

import (
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// TestExpectationAnyOf: an expectation of "fencing or linearizable-sink"
// (AnyOf) is met by either alone, or both, and not by neither; the one not
// found is an expected verdict when the other was; Unexpected and Describe
// say it. (Before AnyOf, check-then-write demanded fencing and a campaign
// that found only linearizable-sink called the row UNEXPECTED.)
func TestExpectationAnyOf(t *testing.T) {
	e := Expectation{Violates: NonGuarantee, AnyOf: SetOf(Fencing, LinearizableSink)}
	for _, c := range []struct {
		violated Set
		matches  bool
	}{
		{NonGuarantee | SetOf(Fencing), true},
		{NonGuarantee | SetOf(LinearizableSink), true},
		{NonGuarantee | SetOf(Fencing, LinearizableSink), true},
		{NonGuarantee, false},
		{SetOf(Fencing), false},
		{NonGuarantee | SetOf(LinearizableSink, TokenMonotonic), false},
	} {
		if got := e.Matches(c.violated); got != c.matches {
			t.Errorf("Matches(%v) = %v, want %v", c.violated.IDs(), got, c.matches)
		}
		if got := e.Unexpected(c.violated) == ""; got != c.matches {
			t.Errorf("Unexpected(%v) = %q", c.violated.IDs(), e.Unexpected(c.violated))
		}
	}
	if found, ok := e.Verdict(Fencing, NonGuarantee|SetOf(LinearizableSink)); found || !ok {
		t.Errorf("fencing holding beside linearizable-sink: found %v, expected %v; want an expected hold", found, ok)
	}
	if found, ok := e.Verdict(Fencing, NonGuarantee); found || ok {
		t.Errorf("fencing holding with neither found: found %v, expected %v; want not expected", found, ok)
	}
	if m := e.Missing(NonGuarantee); m != SetOf(Fencing, LinearizableSink) {
		t.Errorf("Missing = %v, want both", m.IDs())
	}
	if p := e.Unexpected(NonGuarantee); !strings.Contains(p, "at least one of these violations, none found: fencing, linearizable-sink") {
		t.Errorf("Unexpected = %q", p)
	}
	if d := e.Describe(); d != "absolute-validity, and at least one of fencing, linearizable-sink" {
		t.Errorf("Describe = %q", d)
	}
	if d := (Expectation{}).Describe(); d != "nothing" {
		t.Errorf("Describe of none = %q", d)
	}
	if a := e.Allowed(); a != NonGuarantee|SetOf(Fencing, LinearizableSink) {
		t.Errorf("Allowed = %v", a.IDs())
	}
	// Without May, AnyOf's members are allowed all the same.
	bare := Expectation{AnyOf: SetOf(Fencing, LinearizableSink)}
	if !bare.Matches(SetOf(Fencing, LinearizableSink)) {
		t.Error("AnyOf without May: both found is not a match")
	}
	// The headline of a variant whose only demand beyond the non-guarantee
	// is AnyOf is AnyOf's first.
	if h := (Variant{Expect: e}).Headline(); h != Fencing {
		t.Errorf("Headline = %q, want fencing", h)
	}
	// One resource: an AnyOf with resource-independence is no longer
	// demanded, as resource-independence alone is not.
	ri := Variant{Expect: Expectation{AnyOf: SetOf(ResourceIndependence, LinearizableSink)}}
	if got := ri.ExpectAt(model.Config{Resources: 1, Replicas: 1}); got.AnyOf != 0 || got.May != SetOf(ResourceIndependence, LinearizableSink) {
		t.Errorf("ExpectAt one resource: %+v", got)
	}
}
