package checker

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// reductionCases are the bounds the reductions are compared on, for every
// design: its own case (variantCase, which reaches its bug), the same with
// a message loss and a duplication (dead replies to lose and duplicate),
// with a partially synchronous network and bounded pauses (where pauses
// are not reduced), and with ttl 2 and a loss under the asynchronous
// network (requests three ages old for the ages reduction) — each to a
// depth bound, which the reductions keep.
func reductionCases(v spec.Variant) []struct {
	c     model.Config
	depth int
} {
	c, depth := variantCase(v)
	faults := c
	faults.Drops, faults.Dups = 1, 1
	timed := c
	timed.Delay, timed.Pause, timed.TTL = 1, 1, max(c.TTL, 2)
	aged := c
	aged.TTL, aged.Drops = max(c.TTL, 2), 1
	return []struct {
		c     model.Config
		depth int
	}{{c, depth}, {faults, depth - 4}, {timed, depth - 4}, {aged, depth - 3}}
}

// testGoroutines is the goroutines of the searches that compare verdicts
// (reduced against full, one resource against two): one. They are small,
// where a second goroutine costs more CPU than it saves (measured on
// TestReductionsSound alone: 113 s of CPU on two, 79 s on one), and go
// test runs two packages at once; the result does not depend on it
// (TestBFSMatchesPlainSearch and the other tests that vary Goroutines).
const testGoroutines = 1

// TestReductionsSound compares, for every built-in design (and fromSend) on the bounds of
// reductionCases, the search with every reduction (and on the design's own
// case with each alone) with the full search: the same invariants violated, the same shortest
// counterexample length for each, no more states (but with dead-delivered,
// which reaches further within a depth), and every reduced counterexample
// replays on the full machine. The verdicts of dead-delivered are those of
// its second search (checker's searchAgain): without it, this test fails.
func TestReductionsSound(t *testing.T) {
	reductions := []model.Reduction{model.ReducePauses, model.ReduceDeadReplies, model.ReduceReads, model.ReduceTimers, model.ReduceBudgets, model.ReduceAges,
		model.ReduceDeadDelivered, model.Reductions}
	var full, reduced uint64
	// fromSend(1) too: the only design of these that sets OnSend and
	// OnCrash (its reads are kept: a read's send changes its registers).
	for _, v := range append(designs.All(), fromSend(1)) {
		for i, k := range reductionCases(v) {
			m := newMachine(t, k.c, v.Design)
			opt := BFSOptions{Exhaustive: true, MaxDepth: k.depth, Symmetry: model.SymWorkers | model.SymResources, Goroutines: testGoroutines}
			want := BFS(context.Background(), m, opt)
			full += want.States
			for _, r := range reductions {
				if i > 0 && r != model.Reductions {
					continue // each reduction alone on the design's own case
				}
				opt.Reduce = r
				got := BFS(context.Background(), m, opt)
				name := fmt.Sprintf("%s %+v depth %d reduce %d", v.Name, k.c, k.depth, r)
				agreeWithFull(t, name, m, got, want)
				// Bounded by depth, dead-delivered searches further (its
				// depths count no delivery of a dead reply), so it may store more.
				if got.States > want.States && r&model.ReduceDeadDelivered == 0 {
					t.Fatalf("%s: %d states, full search %d", name, got.States, want.States)
				}
				if r == model.Reductions {
					reduced += got.States
				}
			}
		}
	}
	t.Logf("%d states in full searches, %d reduced (%.2fx)", full, reduced, float64(full)/float64(reduced))
}

// agreeWithFull fails the test unless got, a reduced search of m, has the
// verdicts of want, its full search: both stopped alike, the same
// invariants violated, the same shortest counterexample length for each,
// and reduced counterexamples that replay on m.
func agreeWithFull(t *testing.T, name string, m *model.Machine, got, want BFSResult) {
	t.Helper()
	if got.Complete != want.Complete || got.Violated != want.Violated || len(got.Shortest) != len(want.Shortest) {
		t.Fatalf("%s: %s, violated %v; full search %s, %v", name, got.Stopped, got.ViolatedIDs, want.Stopped, want.ViolatedIDs)
	}
	for i, s := range got.Shortest {
		if s.Length != want.Shortest[i].Length {
			t.Fatalf("%s: shortest %s %d actions, full search %d", name, s.Invariant, s.Length, want.Shortest[i].Length)
		}
		if _, judged, err := Replay(m, s.Run.Actions); err != nil || !judged.Has(s.Invariant) {
			t.Fatalf("%s: the counterexample of %s does not replay: %v", name, s.Invariant, err)
		}
	}
}

// TestReductionsSoundComplete compares complete searches (no depth bound)
// of the reference with faults of every kind, the reduced against the
// full one: the same verdicts and shortest lengths, fewer states.
func TestReductionsSoundComplete(t *testing.T) {
	for _, c := range []model.Config{
		{Workers: 2, Resources: 1, Replicas: 2, TTL: 1, Ops: 1, Grants: 2, InFlight: 1, Dups: 1},
		{Workers: 2, Resources: 2, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Drops: 1, Skew: 1},
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 2, InFlight: 2, Delay: 1, Pause: 1, SinkRestarts: 1},
	} {
		m := newMachine(t, c, model.Design{})
		opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers | model.SymResources, Goroutines: testGoroutines}
		want := BFS(context.Background(), m, opt)
		opt.Reduce = model.Reductions
		got := BFS(context.Background(), m, opt)
		if !want.Complete {
			t.Fatalf("%+v: the full search stopped: %s", c, want.Stopped)
		}
		agreeWithFull(t, fmt.Sprintf("%+v", c), m, got, want)
		if got.States >= want.States {
			t.Fatalf("%+v: reduced %d states, full %d: nothing reduced", c, got.States, want.States)
		}
		t.Logf("%+v: %d states, reduced %d", c, want.States, got.States)
	}
}

// TestForgeryGuessesNoToken: a coordinator restart that loses a grant in
// progress makes the sink's fence skip a number, so a token counted from
// the grants alone (grants × resources + 1, the forged token before) is one
// a later grant carries. A search of {workers 2, ttl 2, ops 3, grants 3,
// inFlight 2} with every fault kind found the reference "violating"
// fencing with that guess: the worker holding the first grant forged
// token 4, the sink advanced its fence to 4 for the third grant, and took
// the forged write before the grant was made, which the judge, seeing no
// grant with token 4, took for the first grant's stale write. No fence can
// tell a guessed token from the holder's, so the forged token is now
// Machine.MaxToken+1, above every token the run can grant
// (TestTokensWithinMaxToken). The same run, forging that token instead,
// has the sink reject the write and no violation.
func TestForgeryGuessesNoToken(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 3, InFlight: 2, Drops: 1, Dups: 1,
		Crashes: 1, Restarts: 1, Forgeries: 1}
	m := newMachine(t, c, model.Design{})
	forged := fmt.Sprintf("tok=%d", m.MaxToken()+1)
	trace := []string{"acquire w=0 r=0 c=0", "deliver acquire-req w=0 r=0 inc=1 req=1 live", "restart c=0", "tick", "tick",
		"retry w=0 c=0", "deliver acquire-req w=0 r=0 inc=1 req=1 live", "deliver advance-req w=0 r=0 req=1",
		"deliver advance-req w=0 r=0 req=2", "deliver advance-rep w=0 r=0 tok=1 req=1",
		"deliver advance-rep w=0 r=0 tok=2 req=2", "tick", "tick", "acquire w=1 r=0 c=0",
		"deliver acquire-req w=1 r=0 inc=1 req=1 live", "deliver acquire-rep w=0 r=0 inc=1 tok=2 req=1 g=1 code=1 live",
		"forge w=0 " + forged, "deliver advance-req w=0 r=0 req=3", "deliver advance-rep w=0 r=0 tok=3 req=3",
		"deliver acquire-rep w=1 r=0 inc=1 tok=3 req=1 g=2 code=1 live", "release w=1 c=0",
		"deliver release-req w=1 r=0 inc=1 tok=3 g=2 live", "deliver release-rep w=1 r=0 inc=1 code=1 live",
		"acquire w=1 r=0 c=0", "deliver acquire-req w=1 r=0 inc=1 req=2 live", "deliver advance-req w=0 r=0 req=4",
		"deliver write-req w=0 r=0 inc=1 " + forged + " g=1 pw=1 pt=" + strings.TrimPrefix(forged, "tok=") + " live"}
	acts := make([]model.Action, len(trace))
	for i, s := range trace {
		a, err := model.ParseAction(s)
		if err != nil {
			t.Fatal(err)
		}
		acts[i] = a
	}
	run, judged, err := Replay(m, acts)
	if err != nil {
		t.Fatal(err)
	}
	if fence := run.State.Sink.Fence[0]; fence != 4 {
		t.Fatalf("the fence is %d, not the third grant's 4: the trace no longer skips a number", fence)
	}
	if got := run.State.Sink.NResults; got != 0 {
		t.Errorf("the forged write was accepted (%d results)", got)
	}
	if judged.Has(spec.Fencing) {
		t.Errorf("a forgery judged a stale write: %v", judged.IDs())
	}
}

// TestReducedStateCount pins the states, transitions and subsumed states
// of one reduced search. The soundness tests above would still pass if a
// reduction stopped finding the states it leaves out, only with more
// states: without the lookups among a chunk's successors this bound has
// 142,931 states; without marking the subsumed states of each level
// before expanding it, 233,163 states and 930,126 transitions; without
// dead-delivered, 131,547 states and 430,604 transitions; with it, before
// a reply was dead as soon as its worker took another (exact Live flags),
// 81,453 and 286,053; before it delivered the coordinator's and the
// sink's dead advance messages too, 65,870 and 232,286; before the network
// stopped losing the advance a coordinator waits on (a model change, not
// a reduction), 43,018 and 141,048; before a worker's Holding byte (a
// held write, which this bound's asynchronous network has none of) changed
// the encoding that orders a state's orbit, so which member is stored and
// which states a stored one subsumes, 33,715 and 114,203 (the unreduced
// search is the same). A count that rises means a reduction
// lost reach; one that falls must first be shown sound by
// TestReductionsSound, then written here.
func TestReducedStateCount(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2, Drops: 1}
	m := newMachine(t, c, model.Design{})
	for _, goroutines := range []int{1, 2} {
		r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Goroutines: goroutines,
			Symmetry: model.SymWorkers | model.SymResources, Reduce: model.Reductions})
		if r.States != 33622 || r.Transitions != 114190 || r.Subsumed != 7267 || r.Stopped != StopComplete {
			t.Errorf("%d goroutines: %d states, %d transitions, %d subsumed, %s; want 33622, 114190, 7267, complete",
				goroutines, r.States, r.Transitions, r.Subsumed, r.Stopped)
		}
	}
}

var reduceSoak = flag.Int("reduce.soak", 2, "TestReductionsSoundRandom: random bounds per design")
var reduceSeed = flag.Uint64("reduce.seed", 1, "TestReductionsSoundRandom: the bounds' seed")

// TestReductionsSoundRandom compares the reduced search with the full one,
// as TestReductionsSound does, on bounds drawn at random (seeded) rather
// than chosen: for every built-in design, -reduce.soak bounds of two or
// three workers, one or two resources, ttl 1 to 3, one or two operations,
// grants and messages in flight, each fault kind, clock skew, a sink
// restart, a second replica, a delay bound and a pause bound each with some
// chance. Both searches run to the end (no depth bound; a bound whose full
// search stores more than 20,000 states is drawn again), with every
// reduction, and again with one reduction alone, drawn too: the same
// invariants violated and the same shortest counterexample length for
// each, and every reduced counterexample replays on the machine.
//
//	go test ./checker -run TestReductionsSoundRandom -reduce.soak=40 -reduce.seed=7 -v
func TestReductionsSoundRandom(t *testing.T) {
	singles := []model.Reduction{model.ReducePauses, model.ReduceDeadReplies, model.ReduceReads, model.ReduceTimers,
		model.ReduceBudgets, model.ReduceAges, model.ReduceDeadDelivered}
	rng := rand.New(rand.NewPCG(*reduceSeed, 0x4ed))
	coin := func(p int) int { // 1 with chance 1/p
		if rng.IntN(p) == 0 {
			return 1
		}
		return 0
	}
	var compared, redrawn int
	var full, reduced uint64
	for _, v := range designs.All() {
		for k := 0; k < *reduceSoak; {
			c := model.Config{Workers: 2 + coin(6), Resources: 1 + coin(4), Replicas: 1 + coin(6), TTL: 1 + rng.IntN(3),
				Ops: 1 + coin(2), Grants: 1 + coin(2), InFlight: 1 + coin(2),
				Drops: coin(4), Dups: coin(4), Crashes: coin(4), Restarts: coin(4), Forgeries: coin(4),
				Skew: coin(5), SinkRestarts: coin(5), Delay: coin(4) * (1 + rng.IntN(2)), Pause: coin(5)}
			single := singles[rng.IntN(len(singles))]
			m, err := model.New(c, v.Design)
			if err != nil {
				redrawn++
				continue // a bound the design cannot be built at
			}
			opt := BFSOptions{Exhaustive: true, MaxStates: 20000, Symmetry: model.SymWorkers | model.SymResources, Goroutines: testGoroutines}
			want := BFS(context.Background(), m, opt)
			if !want.Complete {
				redrawn++
				continue
			}
			k++
			full += want.States
			for _, r := range []model.Reduction{model.Reductions, single} {
				opt.Reduce = r
				got := BFS(context.Background(), m, opt)
				agreeWithFull(t, fmt.Sprintf("%s %+v reduce %d", v.Name, c, r), m, got, want)
				if r == model.Reductions {
					reduced += got.States
				}
				compared++
			}
		}
	}
	t.Logf("%d searches compared with their full search (%d bounds drawn again); %d states in full searches, %d with every reduction",
		compared, redrawn, full, reduced)
}
