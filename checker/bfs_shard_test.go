package checker

import (
	"strings"
	"testing"
)

// TestMergeOfJobsEndsAsTheirMostTellingEnd: a merge of jobs of which one
// stopped early is never complete, whatever stopped it (the memory budget
// included, and an end read from JSON that this version does not know),
// and a violation found by any job is the merge's end.
func TestMergeOfJobsEndsAsTheirMostTellingEnd(t *testing.T) {
	job := func(stopped string) BFSResult { return BFSResult{Stopped: stopped, States: 10} }
	for _, c := range []struct {
		ends []string
		want string
	}{
		{[]string{StopComplete, StopComplete}, StopComplete},
		{[]string{StopComplete, StopDepth}, StopDepth},
		{[]string{StopDepth, StopMaxStates}, StopMaxStates},
		{[]string{StopComplete, StopMemory}, StopMemory},
		{[]string{StopMemory, StopComplete}, StopMemory},
		{[]string{StopMaxStates, StopMemory, StopCancelled}, StopCancelled},
		{[]string{StopComplete, StopError}, StopError},
		{[]string{StopComplete, "exploded"}, "exploded"},
		{[]string{StopMemory, StopViolation, StopError}, StopViolation},
	} {
		var rs []BFSResult
		for _, e := range c.ends {
			rs = append(rs, job(e))
		}
		m := MergeResults(rs)
		if m.Stopped != c.want || m.Complete != (c.want == StopComplete) {
			t.Errorf("jobs that ended %v: merged %q (complete %v), want %q", c.ends, m.Stopped, m.Complete, c.want)
		}
		if early := c.want != StopComplete && c.want != StopDepth && c.want != StopViolation; (m.Projection != nil) != early {
			t.Errorf("jobs that ended %v: merged projection %+v, want one: %v", c.ends, m.Projection, early)
		}
	}
}

// TestMergedProjectionSumsTheJobs: the projection of a split search that
// stopped early is the sum of the jobs' totals, each job's own projection
// for one that stopped early and its states for one that ended; none when
// a job that stopped early has none.
func TestMergedProjectionSumsTheJobs(t *testing.T) {
	ended := BFSResult{Stopped: StopComplete, States: 100, MaxDepth: 12, Shard: Shard{I: 0, N: 3}}
	stopped := BFSResult{Stopped: StopMemory, States: 500, MaxDepth: 9, Shard: Shard{I: 1, N: 3},
		Projection: &Projection{Made: true, States: 2000, StatesHigh: 3000, Depth: 15, DepthHigh: 18}}
	cut := BFSResult{Stopped: StopCancelled, States: 400, MaxDepth: 9, Shard: Shard{I: 2, N: 3},
		Projection: &Projection{Made: true, States: 1000, StatesHigh: 1500, Depth: 14, DepthHigh: 20}}
	p := MergeResults([]BFSResult{ended, stopped, cut}).Projection
	if want := (Projection{Made: true, States: 3100, StatesHigh: 4600, Depth: 15, DepthHigh: 20}); p == nil || *p != want {
		t.Fatalf("merged projection %+v, want %+v", p, want)
	}
	cut.Projection = &Projection{Why: "fewer than 9 levels"}
	if p := MergeResults([]BFSResult{ended, stopped, cut}).Projection; p == nil || p.Made || !strings.Contains(p.Why, "job 2/3: fewer than 9 levels") {
		t.Fatalf("a job with no projection: merged %+v", p)
	}
	cut.Projection = nil // a result written before projections
	if p := MergeResults([]BFSResult{ended, stopped, cut}).Projection; p == nil || p.Made || !strings.Contains(p.Why, "job 2/3 stopped early") {
		t.Fatalf("a job that stopped early with no projection: merged %+v", p)
	}
}
