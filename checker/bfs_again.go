package checker

import (
	"context"
	"time"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Again is the second search of a BFS whose reductions take some steps
// as none (model.ReduceDeadDelivered: its depths count no delivery of a
// dead reply) and that found a violation: the same search without them,
// to the length of the longest counterexample it found. Its verdicts and
// shortest counterexamples are a full search's, and the result reports
// them in place of the first search's; the other figures stay the first
// search's.
type Again struct {
	// Depth bounds the search (MaxDepth): the length of the longest
	// counterexample the first search found, or the first search's
	// MaxDepth if that is less.
	Depth int `json:"depth"`
	// Stopped, States, Transitions and Elapsed are its BFSResult's.
	Stopped     string        `json:"stopped"`
	States      uint64        `json:"states"`
	Transitions uint64        `json:"transitions"`
	Elapsed     time.Duration `json:"elapsed"`
	// Replaced tells whether its verdicts replaced the first search's: it
	// searched to Depth, or stopped at a violation. If not (it stopped
	// early: the time, the memory budget, a state limit), the result keeps
	// the first search's verdicts, whose counterexamples are runs of the
	// machine but not known to be the shortest.
	Replaced bool `json:"replaced"`
}

// searchAgain searches again without ReduceDeadDelivered, to the length
// of the longest counterexample res (found with it) holds, and puts that
// search's verdicts in res. Every invariant violated within a depth is
// violated by a run of res no longer as a run of the search (the
// reduction's depths are no larger), whose run of the machine is at most
// that long, so the second search finds every such invariant, and its
// shortest counterexample, as a full search does.
func searchAgain(ctx context.Context, m *model.Machine, opt BFSOptions, res BFSResult) BFSResult {
	n := 0
	for _, s := range res.Shortest {
		n = max(n, s.Length)
	}
	o := opt
	o.Reduce &^= model.ReduceDeadDelivered
	o.MaxDepth = n
	if opt.MaxDepth > 0 {
		o.MaxDepth = min(n, opt.MaxDepth)
	}
	// Unsplit: a job's share of the levels differs without the reduction.
	o.Shard, o.Checkpoint, o.Resume = Shard{}, "", ""
	if ctx.Err() != nil { // the first search was cancelled: so is this one, before it begins
		res.Again = &Again{Depth: o.MaxDepth, Stopped: StopCancelled}
		return res
	}
	again := newBFS(m, o).run(ctx)
	a := &Again{Depth: o.MaxDepth, Stopped: again.Stopped, States: again.States, Transitions: again.Transitions,
		Elapsed: again.Elapsed}
	res.Again = a
	switch again.Stopped {
	case StopViolation:
	case StopDepth, StopComplete:
		if res.Stopped == StopViolation {
			return res // only a missed state (hash compaction) could do this: keep what was found
		}
	default:
		return res
	}
	a.Replaced = true
	res.Violated, res.ViolatedIDs, res.Shortest = again.Violated, again.ViolatedIDs, again.Shortest
	res.Violation, res.ViolationIDs, res.Counterexample, res.Trace = again.Violation, again.ViolationIDs,
		again.Counterexample, again.Trace
	if again.Stopped == StopViolation && res.Stopped != StopViolation {
		// The first search stopped early, before the violation the second found.
		res.Stopped, res.Complete, res.Projection, res.Within = StopViolation, false, nil, nil
	}
	if w := res.Within; w != nil {
		w.Violated = 0
		for _, s := range again.Shortest {
			if s.Length <= w.Depth {
				w.Violated |= spec.SetOf(s.Invariant)
			}
		}
		w.ViolatedIDs = w.Violated.IDs()
	}
	return res
}
