package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestSearchAgainReportsTheShortest: a search with dead-delivered that
// finds a violation searches again without it (BFSResult.Again) and
// reports that search's verdicts and counterexample, the shortest a search
// without dead-delivered finds, which replays; each job of a split search
// searches again unsplit, so the jobs and their merge have the unsplit
// search's shortest lengths (searching again split, job 0 of 3 reports a
// counterexample of absolute-validity one action longer); when the second
// search is cancelled, the first one's counterexample stands, a run of the
// machine no shorter; and a search that finds no violation searches once.
func TestSearchAgainReportsTheShortest(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "check-then-write")
	if err != nil {
		t.Fatal(err)
	}
	c, depth := variantCase(v)
	m := newMachine(t, c, v.Design)
	opt := BFSOptions{MaxDepth: depth, Symmetry: model.SymWorkers, Reduce: model.Reductions, Stop: spec.SetOf(spec.Fencing)}
	without := opt
	without.Reduce &^= model.ReduceDeadDelivered
	want := BFS(context.Background(), m, without)
	if want.Stopped != StopViolation || want.Again != nil {
		t.Fatalf("without dead-delivered: stopped %s, again %+v", want.Stopped, want.Again)
	}
	wantLen := map[string]int{}
	for _, s := range want.Shortest {
		wantLen[s.Invariant] = s.Length
	}
	got := BFS(context.Background(), m, opt)
	a := got.Again
	if got.Stopped != StopViolation || a == nil || !a.Replaced || a.Stopped != StopViolation || a.Depth < len(want.Trace) {
		t.Fatalf("stopped %s, again %+v", got.Stopped, a)
	}
	if len(got.Trace) != len(want.Trace) || got.Violated != want.Violated || len(got.Shortest) != len(want.Shortest) {
		t.Fatalf("counterexample of %d actions, violated %v; without dead-delivered %d, %v",
			len(got.Trace), got.ViolatedIDs, len(want.Trace), want.ViolatedIDs)
	}
	for _, s := range got.Shortest {
		if s.Length != wantLen[s.Invariant] {
			t.Fatalf("shortest %s %d, without dead-delivered %d", s.Invariant, s.Length, wantLen[s.Invariant])
		}
	}
	if _, judged, err := Replay(m, got.Counterexample.Actions); err != nil || !judged.Has(spec.Fencing) {
		t.Fatalf("the counterexample does not replay: %v", err)
	}

	// The jobs of a split search: each one's second search is unsplit, so
	// its shortest counterexamples are the unsplit search's, and so are
	// those of their merge.
	var jobs []BFSResult
	for i := range 3 {
		job := opt
		job.Shard = Shard{I: i, N: 3, Depth: 3}
		r := BFS(context.Background(), m, job)
		if r.Again == nil || !r.Again.Replaced {
			t.Fatalf("job %d/3: stopped %s, again %+v", i, r.Stopped, r.Again)
		}
		for _, s := range r.Shortest {
			if n, ok := wantLen[s.Invariant]; ok && s.Length != n {
				t.Fatalf("job %d/3: shortest %s %d, the unsplit search's %d", i, s.Invariant, s.Length, n)
			}
		}
		jobs = append(jobs, r)
	}
	merged := MergeResults(jobs)
	for _, s := range merged.Shortest {
		if n, ok := wantLen[s.Invariant]; ok && s.Length != n {
			t.Fatalf("merged: shortest %s %d, the unsplit search's %d", s.Invariant, s.Length, n)
		}
	}
	if len(merged.Trace) != len(want.Trace) {
		t.Fatalf("merged: a counterexample of %d actions, the unsplit search's %d", len(merged.Trace), len(want.Trace))
	}
	var againStates uint64
	for _, j := range jobs {
		againStates += j.Again.States
	}
	if a := merged.Again; a == nil || !a.Replaced || a.States != againStates || a.Stopped != StopViolation {
		t.Fatalf("merged: again %+v, want the jobs' second searches (%d states), replaced", a, againStates)
	}
	// One job's second search stopped early: the merge's counterexamples
	// may be its first search's, so the merge says they are not known to be
	// the shortest, with that job's ending.
	jobs[1].Again = &Again{Depth: jobs[1].Again.Depth, Stopped: StopMemory, States: 7}
	if a := MergeResults(jobs).Again; a == nil || a.Replaced || a.Stopped != StopMemory {
		t.Fatalf("merged with a job's second search stopped by memory: again %+v, want not replaced, stopped memory", a)
	}
	jobs[1].Again = nil // a job that found nothing does not search again
	if a := MergeResults(jobs).Again; a == nil || !a.Replaced {
		t.Fatalf("merged with a job that did not search again: again %+v, want replaced", a)
	}

	// Cancelled once the second search begins (its progress is reported
	// from depth 0 again): the first one's counterexample stands.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cut := opt
	deepest := 0
	cut.ProgressEvery = 1
	cut.Progress = func(p BFSProgress) {
		if p.Depth < deepest {
			cancel()
		}
		deepest = max(deepest, p.Depth)
	}
	got = BFS(ctx, m, cut)
	first := got
	if a := got.Again; a == nil || a.Replaced || a.Stopped != StopCancelled {
		t.Fatalf("cancelled in the second search: again %+v, want it stopped cancelled", a)
	}
	if got.Stopped != StopViolation || got.Counterexample == nil || len(got.Trace) < len(want.Trace) {
		t.Fatalf("cancelled: stopped %s, counterexample of %d actions (the shortest has %d)", got.Stopped, len(got.Trace), len(want.Trace))
	}
	if _, judged, err := Replay(m, got.Counterexample.Actions); err != nil || !judged.Has(spec.Fencing) {
		t.Fatalf("cancelled: the first search's counterexample does not replay: %v", err)
	}

	// Cancelled before the second search began: it is not run.
	done, stop := context.WithCancel(context.Background())
	stop()
	if r := searchAgain(done, m, opt, first); r.Again == nil || r.Again.Replaced || r.Again.States != 0 ||
		r.Again.Stopped != StopCancelled || len(r.Trace) != len(first.Trace) {
		t.Fatalf("cancelled before the second search: again %+v", r.Again)
	}

	shallow := opt
	shallow.MaxDepth = 3
	if r := BFS(context.Background(), m, shallow); r.Stopped != StopDepth || len(r.Shortest) != 0 || r.Again != nil {
		t.Fatalf("no violation within depth 3: stopped %s, %d shortest, again %+v", r.Stopped, len(r.Shortest), r.Again)
	}
}

// TestStoppedSearchViolatesAsTheFullSearch: what a search with
// dead-delivered stopped early says its levels violate (Within.Violated)
// is what a search without it violates within that depth, for every
// built-in design with a loss and a duplication, stopped by MaxStates in
// the level where it first finds a violation and in the one after.
func TestStoppedSearchViolatesAsTheFullSearch(t *testing.T) {
	checked := 0
	for _, v := range designs.All() {
		for _, inFlight := range []int{1, 2} {
			c, depth := variantCase(v)
			c.Drops, c.Dups, c.InFlight = 1, 1, inFlight
			m := newMachine(t, c, v.Design)
			opt := BFSOptions{Exhaustive: true, MaxDepth: depth, Symmetry: model.SymWorkers, Reduce: model.Reductions}
			whole := BFS(context.Background(), m, opt)
			first := -1 // the level whose expansion first violates an invariant
			for _, s := range whole.Shortest {
				if first < 0 || s.Length-1 < first {
					first = s.Length - 1
				}
			}
			if first < 0 {
				continue
			}
			for _, level := range []int{first, first + 1} {
				if level+1 >= len(whole.Levels) {
					continue
				}
				capped := opt
				for _, n := range whole.Levels[:level+1] {
					capped.MaxStates += n
				}
				capped.MaxStates++ // stopped as the level after begins
				got := BFS(context.Background(), m, capped)
				w := got.Within
				if got.Stopped != StopMaxStates || w == nil {
					t.Fatalf("%s: stopped %s, within %+v", v.Name, got.Stopped, w)
				}
				full := opt
				full.MaxDepth, full.Reduce = w.Depth, model.Reductions&^model.ReduceDeadDelivered
				want := BFS(context.Background(), m, full)
				if w.Violated != want.Violated {
					t.Fatalf("%s, within depth %d: violated %v; without dead-delivered %v", v.Name, w.Depth, w.ViolatedIDs, want.ViolatedIDs)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no design violated an invariant: the test checks nothing")
	}
	t.Logf("%d stopped searches checked", checked)
}

// TestSearchAgainJudgesWithinItsDepth: when the second search replaces
// the verdicts of a search that stopped early, what the levels it expanded
// violate (Within.Violated) becomes what the second search violates within
// their depth: the invariants whose shortest counterexample is no longer.
func TestSearchAgainJudgesWithinItsDepth(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "check-then-write")
	if err != nil {
		t.Fatal(err)
	}
	c, depth := variantCase(v)
	m := newMachine(t, c, v.Design)
	opt := BFSOptions{Exhaustive: true, MaxDepth: depth, Symmetry: model.SymWorkers, Reduce: model.Reductions}
	whole := BFS(context.Background(), m, opt)
	if whole.Again == nil || !whole.Again.Replaced || len(whole.Shortest) < 2 {
		t.Fatalf("again %+v, %d shortest: want several invariants violated", whole.Again, len(whole.Shortest))
	}
	for _, s := range whole.Shortest {
		// As if the first search had stopped early and said its levels
		// to s.Length violate every invariant.
		first := whole
		first.Stopped, first.Again = StopMaxStates, nil
		first.Within = &Within{Depth: s.Length, Violated: allInvariants, ViolatedIDs: allInvariants.IDs()}
		got := searchAgain(context.Background(), m, opt, first)
		var want spec.Set
		for _, x := range whole.Shortest {
			if x.Length <= s.Length {
				want |= spec.SetOf(x.Invariant)
			}
		}
		if w := got.Within; w.Violated != want || !w.Violated.Has(s.Invariant) {
			t.Fatalf("within depth %d: violated %v, want %v", s.Length, w.ViolatedIDs, want.IDs())
		}
	}
}
