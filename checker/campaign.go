package checker

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// CampaignOptions set the budget of a campaign.
type CampaignOptions struct {
	Config model.Config
	Seed   uint64
	Runs   int // random runs per variant
	Steps  int // actions per run
	// Parallel is how many variants are searched at once (0: GOMAXPROCS).
	Parallel int
	// Progress, when set, is called from the searching goroutines after
	// every 100 runs and at the end of each variant's search.
	Progress func(variant string, done, total int)
}

// DefaultCampaign is the budget of `explore` with no flags.
func DefaultCampaign() CampaignOptions {
	return CampaignOptions{Config: model.DefaultConfig(), Seed: 1, Runs: 3000, Steps: 100}
}

// Finding is one invariant a variant was found to violate.
type Finding struct {
	Invariant string
	// Run is the shrunk (1-minimal) counterexample.
	Run *model.Run
	// FirstRun is the index of the first run that violated it, and After the
	// search time it took to get there.
	FirstRun int
	After    time.Duration
	// Shrunk is the index of the run Run was shrunk from: FirstRun, or a
	// later run whose history shows the violation where FirstRun's states
	// alone did; WithoutDups says that run's duplicated messages were left
	// out first.
	Shrunk      int
	WithoutDups bool
}

// VariantResult is the campaign's verdict on one variant.
type VariantResult struct {
	Variant spec.Variant
	// Expect is the variant's expectation under the campaign's config.
	Expect   spec.Expectation
	Violated spec.Set
	// Reached counts, per scene, the runs that reached it.
	Reached  Coverage
	Findings []Finding // in the order of spec.Invariants
	Runs     int
	Elapsed  time.Duration
	// NotSearched says why the variant was not searched (its machine
	// cannot be built at the campaign's config: a design's own limit),
	// or is nil. Such a result has no verdict.
	NotSearched error
	// Fault is the step of run FaultRun at which the design's decision
	// failed, which ended its search; nil when none did. Such a result
	// is not the expected one.
	Fault    *Fault
	FaultRun int
}

// Expected reports whether the verdict is the one the variant expects:
// every violation it demands found, none it does not allow. A verdict that
// rests on a scene no run reached stands all the same (the contract's), and
// Vacuous says so: an expected violation not found is then unexpected, for
// that reason (Problem). A variant not searched has no verdict, and none is
// the expected one.
func (r *VariantResult) Expected() bool {
	return r.NotSearched == nil && r.Fault == nil && r.Expect.Matches(r.Violated)
}

// Problem says how the verdict differs from the expected one, or "".
func (r *VariantResult) Problem() string {
	if r.NotSearched != nil {
		return "not searched: " + r.NotSearched.Error()
	}
	if r.Fault != nil {
		return fmt.Sprintf("%v, at step %d of run %d (explore search --variant %s finds it with its trace)",
			r.Fault.Cause, len(r.Fault.Actions), r.FaultRun, r.Variant.Name)
	}
	missed := r.Expect.Missed(r.Violated) // why it was missed follows it
	if miss := r.Vacuous(); miss != 0 && missed != "" {
		missed += fmt.Sprintf(" (none of the %d random runs reached %s, which the verdict depends on: that is why; more runs or steps may reach it)",
			r.Runs, miss)
	}
	return spec.JoinProblems(missed, r.Expect.Extra(r.Violated))
}

// Vacuous lists the scenes the variant's verdict depends on that no run
// reached: a verdict that rests on them means nothing.
func (r *VariantResult) Vacuous() model.Scene { return r.Reached.Missing(r.Variant.Scenes()) }

// Finding returns the finding for invariant id, or nil.
func (r *VariantResult) Finding(id string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].Invariant == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// Campaign searches every variant against every invariant: each variant gets
// the same seeded random runs, every run is judged on its states and its
// history is checked (invariants and porcupine), and the first run violating
// each invariant is shrunk to a 1-minimal counterexample. Results come back
// in the order of variants, the same for the same options whatever the
// parallelism. A variant whose machine cannot be built at opt.Config is not
// searched (VariantResult.NotSearched); the others are.
func Campaign(ctx context.Context, variants []spec.Variant, opt CampaignOptions) ([]VariantResult, error) {
	if err := opt.Config.Validate(); err != nil {
		return nil, err
	}
	par := opt.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	out := make([]VariantResult, len(variants))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, v := range variants {
		m, err := v.Machine(opt.Config)
		if err != nil {
			out[i] = VariantResult{Variant: v, Expect: v.ExpectAt(opt.Config), NotSearched: err}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = searchVariant(ctx, v, m, opt)
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}

func searchVariant(ctx context.Context, v spec.Variant, m *model.Machine, opt CampaignOptions) VariantResult {
	res := VariantResult{Variant: v, Expect: v.ExpectAt(opt.Config)}
	start := time.Now()
	first := map[string]Finding{}
	// The trace to shrink: the first run whose history shows the violation
	// (a counterexample a reader and explore check can see), else the first
	// run whose history shows it but is untrusted for a duplicate, without
	// its duplicates, when its history then shows it, else the first run
	// whose states do.
	traces := map[string][]model.Action{}
	from := map[string]int{}                 // the run of each trace
	untrusted := map[string][]model.Action{} // the first run whose history shows it, with a duplicate
	untrustedRun := map[string]int{}
	var seen spec.Set // violations some history showed
	for i := 0; i < opt.Runs; i++ {
		if letOthersRun(); ctx.Err() != nil {
			break
		}
		run, judged, fault := safeRandomRun(m, RunSeed(opt.Seed, i), opt.Steps, 0)
		if fault != nil {
			res.Fault, res.FaultRun, res.Runs = fault, i, i+1
			break
		}
		hist := HistoryViolations(run)
		viol := judged | hist
		for _, id := range (viol &^ res.Violated).IDs() {
			first[id] = Finding{Invariant: id, FirstRun: i, After: time.Since(start)}
			traces[id], from[id] = run.Actions, i
		}
		for _, id := range (hist &^ seen).IDs() {
			traces[id], from[id] = run.Actions, i
		}
		seen |= hist
		if run.State.Dups > 0 {
			for _, id := range (rawHistoryViolations(run) & viol).IDs() {
				if _, ok := untrusted[id]; !ok {
					untrusted[id], untrustedRun[id] = run.Actions, i
				}
			}
		}
		res.Violated |= viol
		res.Reached.Add(run.Scenes)
		res.Runs = i + 1
		if opt.Progress != nil && (i+1)%100 == 0 {
			opt.Progress(v.Name, i+1, opt.Runs)
		}
	}
	// A violation no run's trusted history showed, but one whose duplicates
	// made its history untrusted did, may show in that run without its
	// duplicates: that run is a counterexample explore check can see.
	for _, id := range (res.Violated &^ seen).IDs() {
		if acts, ok := untrusted[id]; ok {
			r, _ := Lenient(m, slices.DeleteFunc(slices.Clone(acts), func(a model.Action) bool { return a.Kind == model.Duplicate }))
			if HistoryViolations(r).Has(id) {
				traces[id], from[id] = r.Actions, untrustedRun[id]
				f := first[id]
				f.WithoutDups = true
				first[id] = f
			}
		}
	}
	for _, id := range res.Violated.IDs() {
		f := first[id]
		f.Run, f.Shrunk = Shrink(m, traces[id], id), from[id]
		res.Findings = append(res.Findings, f)
	}
	res.Elapsed = time.Since(start)
	if opt.Progress != nil {
		opt.Progress(v.Name, res.Runs, opt.Runs)
	}
	return res
}
