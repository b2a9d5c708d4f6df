package checker

import (
	"context"
	"flag"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/internal/simulation"
	"github.com/fencecheck/fencecheck/model"
)

var originDeep = flag.Bool("origin.deep", false, "measure where P1's states differ at level 15 instead of 12 (about 30 s, 3.5 GB)")

// TestStatesDifferInFlight measures where the states of P1 (workers 2,
// ttl 2, ops 4, grants 3, inFlight 3, every fault kind once) differ, to
// tell which kind of reduction could still shrink the search: it runs the
// reduced search with symmetry to a depth, rebuilds the deepest level's
// stored states, and counts them again with one part of the state erased.
// The ratio is the most any reduction that forgets that part (a cut like
// ReduceTimers', a simulation like ReduceBudgets') could merge at that
// level. The ghost the invariants are judged on merges almost nothing, and
// neither does any other part alone but the messages in flight: what is in
// flight, and above all which kinds of message, is where the states
// differ, which is what a partial-order reduction would address
// (TestPartialOrderBound bounds what it could gain). The test fails if
// erasing the ghost ever merges a quarter of a level, or erasing the
// network less than half: then the docs are wrong, and a reduction of
// the ghost may be worth building.
func TestStatesDifferInFlight(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Drops: 1, Dups: 1,
		Crashes: 1, Restarts: 1, Forgeries: 1}
	depth := 12
	if *originDeep {
		depth = 15
	}
	m := newMachine(t, c, model.Design{})
	b := newBFS(m, BFSOptions{Exhaustive: true, MaxDepth: depth, Reduce: model.Reductions, Symmetry: model.SymWorkers | model.SymResources})
	if res := b.run(context.Background()); res.Stopped != StopDepth {
		t.Fatalf("the search stopped: %s", res.Stopped)
	}
	var level []model.State
	for _, s := range storedStates(b) {
		if s.depth == depth {
			level = append(level, s.State)
		}
	}
	inFlight := func(f func(msg *model.Msg)) func(s *model.State) {
		return func(s *model.State) {
			for i := range s.Msgs[:s.NMsgs] {
				f(&s.Msgs[i])
			}
			slices.SortFunc(s.Msgs[:s.NMsgs], simulation.CompareMsgs)
		}
	}
	parts := []struct {
		part  string
		erase func(s *model.State)
	}{
		{"the ghost (the grants' truth, and the grant named by messages, workers and results)", func(s *model.State) {
			s.Ghost = [model.MaxResources]model.Ghost{}
			for i := range s.Workers {
				s.Workers[i].Grant = 0
			}
			for i := range s.Sink.Results {
				s.Sink.Results[i].Grant = 0
			}
			inFlight(func(msg *model.Msg) { msg.Grant = 0 })(s)
		}},
		{"the fault budgets spent", func(s *model.State) { s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged = 0, 0, 0, 0, 0 }},
		{"the design's registers", func(s *model.State) {
			for i := range s.Workers {
				s.Workers[i].U = model.Regs{}
			}
			for i := range s.Coord {
				s.Coord[i].U, s.Coord[i].RU = model.Regs{}, [model.MaxResources]model.Regs{}
			}
			s.Sink.U = [model.MaxResources]model.Regs{}
			inFlight(func(msg *model.Msg) { msg.U = 0 })(s)
		}},
		{"the sink's results", func(s *model.State) { s.Sink.Results, s.Sink.NResults = [model.MaxResults]model.Result{}, 0 }},
		{"the workers", func(s *model.State) { s.Workers = [model.MaxWorkers]model.Worker{} }},
		{"the ages of requests", inFlight(func(msg *model.Msg) { msg.Age = 0 })},
		{"what messages carry but their kind", inFlight(func(msg *model.Msg) { *msg = model.Msg{Kind: msg.Kind} })},
		{"the messages in flight", func(s *model.State) { s.Msgs, s.NMsgs = [model.MaxMsgs]model.Msg{}, 0 }},
	}
	merged := make([]float64, len(parts)) // the ghost first, the network last
	for i, e := range parts {
		seen := map[model.State]bool{}
		for _, s := range level {
			e.erase(&s)
			seen[s] = true
		}
		merged[i] = float64(len(level)) / float64(len(seen))
		t.Logf("level %d, %d states; without %s: %d, %.2fx fewer", depth, len(level), e.part, len(seen), merged[i])
	}
	if g := merged[0]; g >= 1.25 {
		t.Errorf("erasing the ghost merges %.2fx of a level: a reduction of the ghost may pay", g)
	}
	if n := merged[len(merged)-1]; n < 2 {
		t.Errorf("erasing the messages in flight merges only %.2fx of a level", n)
	}
}
