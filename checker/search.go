package checker

import (
	"context"
	"math/rand/v2"
	"runtime"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// letOthersRun lets every other goroutine run, between two random runs:
// with one processor, a run's checks (spec.Check, porcupine: they start
// goroutines and wait for them) could pass it back and forth with those
// goroutines alone, so that the one that cancels the search's context at
// an interrupt never ran, and Ctrl-C went unheard for minutes (the
// scheduler's local queue held it, behind goroutines handed the
// processor directly).
func letOthersRun() { runtime.Gosched() }

// SearchOptions bound a randomized search.
type SearchOptions struct {
	Seed  uint64 // the search's seed; run i uses a seed derived from it
	Runs  int    // runs to try
	Steps int    // actions per run
	// Stop is the set of invariants whose violation ends the search (and is
	// shrunk). Zero means every invariant.
	Stop spec.Set
	// Shard, when Shard.N > 1, makes this search one of N independent jobs:
	// it tries only the runs i with i mod N == Shard.I. The jobs together
	// try exactly the unsplit search's runs; the violation with the least
	// run index over the jobs is the unsplit search's.
	Shard Shard
	// Progress, when set, is called after every run.
	Progress func(done int)
}

// Found is a violation found by a search, shrunk.
type Found struct {
	Invariant string
	Index     int    // the run's index in the search
	Seed      uint64 // the run's own seed
	Run       *model.Run
}

// RunSeed is the seed of run i of a search seeded with seed.
func RunSeed(seed uint64, i int) uint64 {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	return r.Uint64()
}

// RandomRun is one seeded random run: the same seed always gives the same
// run, byte for byte.
func RandomRun(m *model.Machine, seed uint64, steps int, stop spec.Set) (*model.Run, spec.Set) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	return Walk(m, steps, func(n int) int { return r.IntN(n) }, stop)
}

// Violations returns every invariant a run violates: judged on its states
// (judged, already known) and checked on its history with the invariants and
// porcupine. A history whose requests the network duplicated breaks the
// format's premise that an operation takes effect at most once (a late copy
// of a renew extends a lease after the renew's ok): from such a history only
// linearizable-sink is taken (sink operations are idempotent); the states
// judge the rest.
func Violations(run *model.Run, judged spec.Set) spec.Set {
	return judged | HistoryViolations(run)
}

// HistoryViolations is what a run's recorded history alone shows (with the
// rule for duplicated requests of Violations).
func HistoryViolations(run *model.Run) spec.Set {
	v := rawHistoryViolations(run)
	if run.State.Dups > 0 {
		v &= spec.SetOf(spec.LinearizableSink)
	}
	return v
}

// rawHistoryViolations is every invariant spec.Check finds in a run's
// history, duplicates or not. Check reads the events alone (and no header:
// a run is not partial), so the run's are lent, and the header's action
// trace, which Run.History spells out, is not written: it took a fifth of
// the default campaign's time.
func rawHistoryViolations(run *model.Run) spec.Set {
	var v spec.Set
	for _, x := range spec.Check(&history.History{Events: run.Events}, spec.Options{}).Violations {
		v |= spec.SetOf(x.Invariant)
	}
	return v
}

// SearchResult is the outcome of a randomized search: what it found and how
// far it got.
type SearchResult struct {
	// Found is the shrunk violation, nil when no run violated an invariant
	// in Stop.
	Found *Found
	// Runs is how many runs were done; Budget how many the search was to do
	// (with a Shard, this job's share of SearchOptions.Runs).
	Runs, Budget int
	// Complete reports that the search ended as asked: a violation was
	// found, or every run of the budget was done. It is false when ctx
	// ended the search first: Runs is then less than Budget, and the
	// absence of a violation proves nothing about the remaining runs.
	Complete bool
	// Reached counts, per scene, the runs that reached it.
	Reached Coverage
	// Fault is the step of run FaultRun at which the design's decision
	// failed, which ended the search (Complete, and no Found); nil when
	// none did.
	Fault    *Fault
	FaultRun int
}

// Search runs seeded random runs until one violates an invariant in
// opt.Stop, then shrinks it. It returns nil when the budget ends first, or
// ctx is done; RandomSearch tells the two apart.
func Search(ctx context.Context, m *model.Machine, opt SearchOptions) *Found {
	return RandomSearch(ctx, m, opt).Found
}

// RandomSearch is Search, reporting how many runs it did and whether it
// completed.
func RandomSearch(ctx context.Context, m *model.Machine, opt SearchOptions) SearchResult {
	stop := opt.Stop
	if stop == 0 {
		stop = ^spec.Set(0)
	}
	first, step := 0, 1
	if opt.Shard.N > 1 {
		first, step = opt.Shard.I, opt.Shard.N
	}
	res := SearchResult{}
	if opt.Runs > first {
		res.Budget = (opt.Runs - first + step - 1) / step
	}
	for i := first; i < opt.Runs; i += step {
		letOthersRun()
		if ctx.Err() != nil {
			return res
		}
		seed := RunSeed(opt.Seed, i)
		run, judged, fault := safeRandomRun(m, seed, opt.Steps, stop)
		if fault != nil {
			res.Fault, res.FaultRun, res.Complete = fault, i, true
			res.Runs++
			return res
		}
		v := Violations(run, judged) & stop
		res.Reached.Add(run.Scenes)
		if res.Runs++; opt.Progress != nil {
			opt.Progress(res.Runs)
		}
		if v == 0 {
			continue
		}
		inv := v.IDs()[0]
		res.Found = &Found{Invariant: inv, Index: i, Seed: seed, Run: Shrink(m, run.Actions, inv)}
		res.Complete = true
		return res
	}
	res.Complete = true
	return res
}
