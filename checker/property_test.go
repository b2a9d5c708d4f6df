package checker

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/fencecheck/fencecheck/designs"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// maxSteps is the length of one rapid run (it ends earlier at a violation).
// rapid's integers lean towards small values, so a drawn length would make
// most runs too short to hand a lease over.
const maxSteps = 150

// property is the randomized search as a rapid property: rapid draws the
// actions of a run of m, the run is judged on every state and its history
// is checked with the invariants and porcupine; it fails when an invariant
// outside allowed is violated, with the run's history logged, its header
// naming variant (m's design) so that explore replay re-executes it. last
// receives every failing run, so after rapid.Check it holds the shrunk one.
func property(m *model.Machine, variant string, allowed spec.Set, last **model.Run) func(*rapid.T) {
	return func(rt *rapid.T) {
		run, judged := Walk(m, maxSteps, func(n int) int {
			return int(rapid.Uint32().Draw(rt, "choice") % uint32(n))
		}, ^allowed)
		if bad := Violations(run, judged) &^ allowed; bad != 0 {
			if last != nil {
				*last = run
			}
			rt.Logf("history (%d actions; save it and run explore replay FILE):\n%s", len(run.Actions),
				encode(run.History(variant, 0, bad.IDs(), "a failing rapid run")))
			rt.Fatalf("violates %v", bad.IDs()) // deterministic message: rapid shrinks towards it
		}
	}
}

func encode(h *history.History) string {
	var b bytes.Buffer
	_ = history.Encode(&b, h)
	return b.String()
}

// TestReferenceProtocolHolds hunts counterexamples to the reference protocol
// at the default config: nothing but the documented non-guarantee
// (absolute-validity) may be violated. Scale it with -rapid.checks=N.
func TestReferenceProtocolHolds(t *testing.T) {
	m, err := model.New(model.DefaultConfig(), model.Design{})
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, property(m, "reference", spec.SetOf(spec.AbsoluteValidity), nil))
}

// recorder is a rapid.TB that records a failure instead of failing the
// test: it lets a test assert that a property fails.
type recorder struct {
	*testing.T
	failed   bool
	msg, log string // the last failure's message and the last history logged
}

func (r *recorder) Error(args ...any)                 { r.failed, r.msg = true, fmt.Sprint(args...) }
func (r *recorder) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Fail()                             { r.failed = true }
func (r *recorder) FailNow()                          { r.failed = true }
func (r *recorder) Failed() bool                      { return r.failed }
func (r *recorder) Logf(format string, args ...any) {
	if strings.HasPrefix(format, "history") { // the property's, not rapid's own
		r.log = fmt.Sprintf(format, args...)
	}
}
func (r *recorder) Log(...any) {}

// TestHarnessCatchesCheckThenWrite proves the harness can fail: with a sink
// whose fence check and write are two steps, the same property fails and
// rapid shrinks the run to a short history.
func TestHarnessCatchesCheckThenWrite(t *testing.T) {
	setFlag(t, "rapid.nofailfile", "true") // an expected failure leaves no fail file behind
	setFlag(t, "rapid.shrinktime", (5 * time.Second).String())
	setFlag(t, "rapid.seed", "1") // a fixed seed: this test must not depend on luck
	setFlag(t, "rapid.checks", "1000")
	m, err := model.New(model.DefaultConfig(), designs.CheckThenWrite.Design)
	if err != nil {
		t.Fatal(err)
	}
	var last *model.Run
	rec := &recorder{T: t}
	rapid.Check(rec, property(m, designs.CheckThenWrite.Name, spec.SetOf(spec.AbsoluteValidity), &last))
	if !rec.failed || last == nil {
		t.Fatal("the search did not catch the check-then-write sink")
	}
	inv := strings.TrimSuffix(strings.TrimPrefix(rec.msg[strings.Index(rec.msg, "violates [")+len("violates ["):], ""), "]")
	inv = strings.Fields(strings.SplitN(inv, "]", 2)[0])[0]
	min := Shrink(m, last.Actions, inv)
	ops := len(min.History("", 0, nil, "").Ops())
	t.Logf("caught %s; rapid shrank it to %d actions, 1-minimal: %d actions, %d operations, %d events:\n%s",
		inv, len(last.Actions), len(min.Actions), ops, len(min.Events), encode(min.History("", 0, nil, "")))
	if ops > 12 {
		t.Errorf("shrunk history has %d operations; want a short one", ops)
	}
	// The history logged replays (its header named no variant).
	_, logged, _ := strings.Cut(rec.log, "\n")
	h, err := history.ReadAll("logged", strings.NewReader(logged))
	if err != nil {
		t.Fatalf("the logged history: %v\n%s", err, rec.log)
	}
	if v, err := CheckHistory(h, spec.Options{}, designs.All()); err != nil || !v.Reproduced || !v.Violated().Has(inv) {
		t.Errorf("the logged history does not replay to %s: %v, reproduced %v", inv, err, err == nil && v.Reproduced)
	}
}

func setFlag(t *testing.T, name, value string) {
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("rapid has no flag %s", name)
	}
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// TestSameSeedSameHistory: a seed determines the run, byte for byte.
func TestSameSeedSameHistory(t *testing.T) {
	m, err := model.New(model.DefaultConfig(), model.Design{})
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 20; seed++ {
		a, _ := RandomRun(m, seed, 100, 0)
		b, _ := RandomRun(m, seed, 100, 0)
		ea, eb := encode(a.History("reference", seed, nil, "")), encode(b.History("reference", seed, nil, ""))
		if ea != eb {
			t.Fatalf("seed %d: two runs differ", seed)
		}
		if seed == 1 && len(a.Events) == 0 {
			t.Fatal("a 100-step run recorded no events")
		}
	}
	a, _ := RandomRun(m, 1, 100, 0)
	c, _ := RandomRun(m, 2, 100, 0)
	if encode(a.History("", 0, nil, "")) == encode(c.History("", 0, nil, "")) {
		t.Fatal("seeds 1 and 2 gave the same run: the seed is not used")
	}
}
