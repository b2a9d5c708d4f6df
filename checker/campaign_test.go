package checker

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
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
		if miss := r.Vacuous(); miss != 0 {
			t.Errorf("%s: no run of the default campaign reached %s, which the verdict depends on", r.Variant.Name, miss)
		}
		for _, f := range r.Findings {
			t.Logf("%-20s %-22s first at run %4d (%v), shrunk to %d ops", r.Variant.Name, f.Invariant, f.FirstRun,
				f.After.Round(1e6), len(f.Run.History("", 0, nil, "").Ops()))
			if _, judged := Lenient(f.Run.M, f.Run.Actions); !Violations(f.Run, judged).Has(f.Invariant) {
				t.Errorf("%s: the %s counterexample does not reproduce", r.Variant.Name, f.Invariant)
			}
			// The run the finding names is the one shrunk to it (the
			// note named the first violating run, often another).
			if f.WithoutDups {
				continue
			}
			run, _, _ := safeRandomRun(f.Run.M, RunSeed(opt.Seed, f.Shrunk), opt.Steps, 0)
			if got := Shrink(f.Run.M, run.Actions, f.Invariant); !slices.Equal(got.Actions, f.Run.Actions) {
				t.Errorf("%s: run %d shrunk for %s is not the counterexample", r.Variant.Name, f.Shrunk, f.Invariant)
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

// TestCampaignOneResource: with one resource a global fence is a
// per-resource fence, so global-fence cannot break resource-independence;
// the campaign no longer demands it there (spec.Variant.ExpectAt), and
// still finds the variant's other expected violation.
func TestCampaignOneResource(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "global-fence")
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultCampaign()
	opt.Config.Resources, opt.Runs = 1, 500
	results, err := Campaign(context.Background(), []spec.Variant{v}, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if !r.Expected() || r.Violated.Has(spec.ResourceIndependence) || !r.Violated.Has(spec.AbsoluteValidity) {
		t.Fatalf("one resource: expected %v, violated %v: %s", r.Expected(), r.Violated.IDs(), r.Problem())
	}
	if two := v.ExpectAt(DefaultCampaign().Config); !two.Violates.Has(spec.ResourceIndependence) {
		t.Fatal("two resources: resource-independence not demanded")
	}
}

// TestCampaignSkipsWhatItCannotBuild: a design whose own limit rules out the
// campaign's config (request-id-key keys results by attempt: three workers
// with four operations each overflow its sink's table) is not searched, and
// says why; the others are searched as usual.
func TestCampaignSkipsWhatItCannotBuild(t *testing.T) {
	var vs []spec.Variant
	for _, name := range []string{"request-id-key", "reference"} {
		v, err := spec.LookupVariant(designs.All(), name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	opt := DefaultCampaign()
	opt.Config.Workers, opt.Runs = 3, 50
	results, err := Campaign(context.Background(), vs, opt)
	if err != nil {
		t.Fatal(err)
	}
	skipped, ref := results[0], results[1]
	if skipped.NotSearched == nil || skipped.Runs != 0 || skipped.Expected() ||
		!strings.HasPrefix(skipped.Problem(), "not searched: config:") {
		t.Errorf("request-id-key: not searched %v, runs %d, expected %v, problem %q",
			skipped.NotSearched, skipped.Runs, skipped.Expected(), skipped.Problem())
	}
	if ref.NotSearched != nil || ref.Runs != opt.Runs {
		t.Errorf("reference: not searched %v, runs %d of %d", ref.NotSearched, ref.Runs, opt.Runs)
	}
}

// TestShrinkDeliversForTheHistory: a renew the coordinator accepted at the
// deadline, whose ok is still in flight, shows only on the states. Shrink
// delivers the shrunk run's messages, and the renew's ok then shows the
// violation in the history too: the counterexample is one explore check
// can see, and stays 1-minimal for that evidence.
func TestShrinkDeliversForTheHistory(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "renew-at-deadline")
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.Machine(DefaultCampaign().Config)
	if err != nil {
		t.Fatal(err)
	}
	var acts []model.Action
	for _, s := range []string{"acquire w=0 r=0 c=0", "deliver acquire-req w=0 r=0 inc=1 req=1 live",
		"deliver advance-req w=0 r=0 req=1", "deliver advance-rep w=0 r=0 tok=1 req=1",
		"deliver acquire-rep w=0 r=0 inc=1 tok=1 req=1 g=1 code=1 live", "tick", "tick", "tick",
		"renew w=0 c=0", "deliver renew-req w=0 r=0 inc=1 tok=1 g=1 live"} {
		a, err := model.ParseAction(s)
		if err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	run, judged := Lenient(m, acts)
	if len(run.Actions) != len(acts) || !judged.Has(spec.RenewValidity) || HistoryViolations(run).Has(spec.RenewValidity) {
		t.Fatalf("the trace: %d of %d actions ran, states %v, history %v", len(run.Actions), len(acts), judged.IDs(), HistoryViolations(run).IDs())
	}
	got := Shrink(m, acts, spec.RenewValidity)
	if !HistoryViolations(got).Has(spec.RenewValidity) {
		t.Fatalf("the shrunk run's history does not show renew-validity: %v", got.Actions)
	}
	for i := range got.Actions {
		rest := append(append([]model.Action(nil), got.Actions[:i]...), got.Actions[i+1:]...)
		if _, ok := Shows(m, rest, spec.RenewValidity, true); ok {
			t.Errorf("not 1-minimal: without %s the history still shows it", got.Actions[i])
		}
	}
}

// TestCampaignCounterexampleWithoutDuplicates: failover-ttl-reset's runs
// that show renew-validity in their history all hold a duplicate, which
// makes a history untrusted (HistoryViolations); the campaign takes the
// first such run without its duplicates, whose history shows it, so its
// counterexample is one explore check can see.
func TestCampaignCounterexampleWithoutDuplicates(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "failover-ttl-reset")
	if err != nil {
		t.Fatal(err)
	}
	results, err := Campaign(context.Background(), []spec.Variant{v}, DefaultCampaign())
	if err != nil {
		t.Fatal(err)
	}
	f := results[0].Finding(spec.RenewValidity)
	if f == nil || !HistoryViolations(f.Run).Has(spec.RenewValidity) || f.Run.State.Dups != 0 || !f.WithoutDups {
		t.Fatalf("renew-validity: finding %v, not one whose history shows it without a duplicate", f != nil)
	}
}
