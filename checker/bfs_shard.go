package checker

import (
	"fmt"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// stopRank orders why searches ended, for a merge: the most telling wins,
// and every early stop outranks an end, so that a merge of jobs of which
// one stopped early is never complete (an end it does not know, read from
// JSON, counts as an error).
func stopRank(stopped string) int {
	switch stopped {
	case StopComplete:
		return 0
	case StopDepth:
		return 1
	case StopMaxStates:
		return 2
	case StopMemory:
		return 3
	case StopCancelled:
		return 4
	case StopViolation:
		return 6
	}
	return 5 // StopError, or unknown
}

// MergeResults merges the results of the jobs of one split search (see
// Shard), as returned by BFS or read back from JSON, into the result of
// the whole search: the union of the verdicts, for each invariant the
// shortest counterexample over the jobs (the first job's on a tie), and
// the counts added up. Levels above the split depth are every job's; below
// it they are added up, and so are States, Transitions, Unreduced, Subsumed
// and Violations, which count the states several jobs searched once per job:
// upper bounds (Violations is nil when a job's is unknown). Elapsed is the longest job's; the merged search
// is complete when every job is; when one stopped early, Projection sums
// the jobs' totals, projected for those that stopped early. Counterexample
// and Shortest[].Run are set only when the jobs' results have them (not
// after JSON). Again sums the jobs' second searches (see mergeAgain).
func MergeResults(rs []BFSResult) BFSResult {
	var m BFSResult
	m.Stopped = StopComplete
	m.Shards = len(rs)
	shortest := map[string]Shortest{}
	countsKnown := true
	bestCx := -1
	var omission float64
	for i, r := range rs {
		m.Violated |= r.Violated | spec.SetOf(r.ViolatedIDs...)
		if stopRank(r.Stopped) > stopRank(m.Stopped) {
			m.Stopped = r.Stopped
		}
		m.States += r.States
		m.Transitions += r.Transitions
		if countsKnown && r.Violations == nil && r.Violated|spec.SetOf(r.ViolatedIDs...) != 0 {
			countsKnown = false // a job resumed from a checkpoint that had not counted them
		}
		for id, n := range r.Violations {
			if m.Violations == nil {
				m.Violations = map[string]uint64{}
			}
			m.Violations[id] += n
		}
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
	if !countsKnown {
		m.Violations = nil
	}
	m.Again = mergeAgain(rs)
	m.Complete = m.Stopped == StopComplete
	if stoppedEarly(m.Stopped) {
		m.Projection = mergeProjections(rs)
	}
	m.ViolatedIDs = m.Violated.IDs()
	m.OmissionBound = min(1, omission)
	if m.States > 0 {
		m.Reduction = float64(m.Unreduced) / float64(m.States)
		m.BytesPerState = float64(m.StoredBytes) / float64(m.States)
	}
	m.Rate = float64(m.States) / max(m.Elapsed.Seconds(), 1e-9)
	return m
}

// mergeAgain merges the second searches of the jobs that searched again
// (nil if none did): the deepest bound, the counts added up and the
// longest time. The merged verdicts replaced the first searches' only if
// every job's did: a job whose second search stopped early kept its first
// search's counterexamples, which are not known to be the shortest, and
// the merged ones may be those; the ending is then the worst of such a
// job's, else the worst of all.
func mergeAgain(rs []BFSResult) *Again {
	var m *Again
	for _, r := range rs {
		a := r.Again
		if a == nil {
			continue
		}
		if m == nil {
			m = &Again{Stopped: a.Stopped, Replaced: true}
		}
		m.Depth = max(m.Depth, a.Depth)
		m.States += a.States
		m.Transitions += a.Transitions
		m.Elapsed = max(m.Elapsed, a.Elapsed)
		switch {
		case m.Replaced && !a.Replaced:
			m.Stopped, m.Replaced = a.Stopped, false
		case m.Replaced == a.Replaced && stopRank(a.Stopped) > stopRank(m.Stopped):
			m.Stopped = a.Stopped
		}
	}
	return m
}

// stoppedEarly tells whether a search that ended so stopped before it
// searched every state it was to search, without a violation.
func stoppedEarly(stopped string) bool {
	return stopRank(stopped) > stopRank(StopDepth) && stopped != StopViolation
}

// mergeProjections projects the total of a split search of which some job
// stopped early: the sum over the jobs of their totals, a job's own
// projection for one that stopped early (the jobs' states counted once per
// job, as MergeResults counts them). It is none when a job that stopped
// early has none.
func mergeProjections(rs []BFSResult) *Projection {
	p := Projection{Made: true}
	for _, r := range rs {
		q := r.Projection
		switch {
		case q == nil && stoppedEarly(r.Stopped):
			return &Projection{Why: fmt.Sprintf("job %d/%d stopped early (%s) with no projection", r.Shard.I, r.Shard.N, r.Stopped)}
		case q == nil: // the job ended: its total is its states
			q = &Projection{Made: true, States: r.States, StatesHigh: r.States, Depth: r.MaxDepth, DepthHigh: r.MaxDepth}
		}
		if !q.Made {
			return &Projection{Why: fmt.Sprintf("job %d/%d: %s", r.Shard.I, r.Shard.N, q.Why)}
		}
		p.States, p.StatesHigh = p.States+q.States, p.StatesHigh+q.StatesHigh
		p.Depth, p.DepthHigh = max(p.Depth, q.Depth), max(p.DepthHigh, q.DepthHigh)
	}
	return &p
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
