package checker

import (
	"context"
	"github.com/fencecheck/fencecheck/designs"
	"testing"

	"github.com/fencecheck/fencecheck/spec"
)

// TestCampaignFindsEveryExpectedViolation runs the default campaign: every
// variant's verdict must be the expected one, and every counterexample must
// reproduce its violation.
func TestCampaignFindsEveryExpectedViolation(t *testing.T) {
	opt := DefaultCampaign() // the full budget even with -short: scheduler-only-check needs it
	results, err := Campaign(context.Background(), designs.All(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Expected() {
			t.Errorf("%s: %s", r.Variant.Name, r.Problem())
		}
		for _, f := range r.Findings {
			t.Logf("%-20s %-22s first at run %4d (%v), shrunk to %d ops", r.Variant.Name, f.Invariant, f.FirstRun,
				f.After.Round(1e6), len(f.Run.History("", 0, nil, "").Ops()))
			if _, judged := Lenient(f.Run.M, f.Run.Actions); !Violations(f.Run, judged).Has(f.Invariant) {
				t.Errorf("%s: the %s counterexample does not reproduce", r.Variant.Name, f.Invariant)
			}
		}
	}
}

// TestCampaignCatchesMislabelledVariant: a variant whose expectation is wrong
// makes the campaign's verdict unexpected.
func TestCampaignCatchesMislabelledVariant(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "global-fence")
	if err != nil {
		t.Fatal(err)
	}
	v.Name = "global-fence-mislabelled"
	v.Expect = spec.Expectation{Violates: spec.SetOf(spec.AbsoluteValidity)} // claims it is safe
	opt := DefaultCampaign()
	opt.Runs = 1000
	results, err := Campaign(context.Background(), []spec.Variant{v}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Expected() {
		t.Fatal("a mislabelled variant got an expected verdict")
	}
	if !results[0].Violated.Has(spec.ResourceIndependence) {
		t.Fatalf("violated %v, want resource-independence among them", results[0].Violated.IDs())
	}
}
