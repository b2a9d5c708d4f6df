package checker

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// stopRank orders why searches ended, for a merge: the most telling wins.
var stopRank = map[string]int{StopComplete: 0, StopDepth: 1, StopMaxStates: 2, StopCancelled: 3, StopViolation: 4}

// MergeResults merges the results of the jobs of one split search (see
// Shard), as returned by BFS or read back from JSON, into the result of
// the whole search: the union of the verdicts, for each invariant the
// shortest counterexample over the jobs (the first job's on a tie), and
// the counts added up. Levels above the split depth are every job's; below
// it they are added up, and so are States, Transitions, Unreduced and Subsumed,
// which count the states several jobs searched once per job: upper bounds
// of the distinct states. Elapsed is the longest job's; the merged search
// is complete when every job is. Counterexample and Shortest[].Run are
// set only when the jobs' results have them (not after JSON).
func MergeResults(rs []BFSResult) BFSResult {
	var m BFSResult
	m.Stopped = StopComplete
	m.Shards = len(rs)
	shortest := map[string]Shortest{}
	bestCx := -1
	var omission float64
	for i, r := range rs {
		m.Violated |= r.Violated | spec.SetOf(r.ViolatedIDs...)
		if stopRank[r.Stopped] > stopRank[m.Stopped] {
			m.Stopped = r.Stopped
		}
		m.States += r.States
		m.Transitions += r.Transitions
		m.Reached.Merge(r.Reached)
		m.Unreduced += r.Unreduced
		m.Subsumed += r.Subsumed
		m.MaxDepth = max(m.MaxDepth, r.MaxDepth)
		for d, n := range r.Levels {
			if d >= len(m.Levels) {
				m.Levels = append(m.Levels, 0)
			}
			if i == 0 || r.Shard.N < 2 || d > r.Shard.Depth {
				m.Levels[d] += n
			}
		}
		m.Elapsed = max(m.Elapsed, r.Elapsed)
		m.StoredBytes += r.StoredBytes
		m.FrontierBytes = max(m.FrontierBytes, r.FrontierBytes)
		m.PeakHeapBytes = max(m.PeakHeapBytes, r.PeakHeapBytes)
		m.HashCompact = m.HashCompact || r.HashCompact
		m.Reductions = r.Reductions // the same in every job: model.Applies of the same options
		omission += r.OmissionBound
		m.Shard = Shard{N: r.Shard.N, Depth: r.Shard.Depth}
		if len(r.Trace) > 0 && (bestCx < 0 || len(r.Trace) < len(rs[bestCx].Trace)) {
			bestCx = i
		}
		for _, s := range r.Shortest {
			if old, ok := shortest[s.Invariant]; !ok || s.Length < old.Length {
				shortest[s.Invariant] = s
			}
		}
	}
	if bestCx >= 0 {
		r := rs[bestCx]
		m.Violation = r.Violation | spec.SetOf(r.ViolationIDs...)
		m.ViolationIDs, m.Trace, m.Counterexample = m.Violation.IDs(), r.Trace, r.Counterexample
	}
	for _, inv := range spec.Invariants {
		if s, ok := shortest[inv.ID]; ok {
			m.Shortest = append(m.Shortest, s)
		}
	}
	m.Complete = m.Stopped == StopComplete
	m.ViolatedIDs = m.Violated.IDs()
	m.OmissionBound = min(1, omission)
	if m.States > 0 {
		m.Reduction = float64(m.Unreduced) / float64(m.States)
		m.BytesPerState = float64(m.StoredBytes) / float64(m.States)
	}
	m.Rate = float64(m.States) / max(m.Elapsed.Seconds(), 1e-9)
	return m
}

// ReplayTrace re-executes a trace from a result (BFSResult.Trace or
// Shortest.Trace, after JSON) on m and returns the run with its history.
func ReplayTrace(m *model.Machine, trace []string) (*model.Run, spec.Set, error) {
	acts := make([]model.Action, len(trace))
	for i, t := range trace {
		a, err := model.ParseAction(t)
		if err != nil {
			return nil, 0, err
		}
		acts[i] = a
	}
	return Replay(m, acts)
}
