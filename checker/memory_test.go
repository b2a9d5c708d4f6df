package checker

import (
	"context"
	"reflect"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// TestBFSMemoryBudget: a search that needs more than its memory budget
// stops cleanly with StopMemory, incomplete, with what it did, and the
// heap it sampled stays near the budget.
func TestBFSMemoryBudget(t *testing.T) {
	const budget = 64 << 20
	m := newMachine(t, model.DefaultConfig(), model.Design{})
	r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers | model.SymResources,
		MaxMemory: budget})
	if r.Stopped != StopMemory || r.Complete || r.States == 0 || r.Transitions == 0 || len(r.Levels) == 0 ||
		r.MaxDepth != len(r.Levels)-1 {
		t.Fatalf("budget %d: stopped %q, complete %v, %d states, %d transitions, levels %v", budget, r.Stopped,
			r.Complete, r.States, r.Transitions, r.Levels)
	}
	var sum uint64
	for _, n := range r.Levels {
		sum += n
	}
	if r.States < sum { // the levels done, and the part of the next one found
		t.Fatalf("%d states, fewer than the levels' %d", r.States, sum)
	}
	if r.PeakHeapBytes >= 3*budget+64<<20 {
		t.Fatalf("peak heap %d bytes for a budget of %d", r.PeakHeapBytes, budget)
	}
	t.Logf("stopped at %d states, depth %d, peak heap %.1f MiB (budget %d MiB), %s", r.States, r.MaxDepth,
		float64(r.PeakHeapBytes)/(1<<20), budget>>20, r.Elapsed)
}

// TestBFSMemoryBudgetGenerous: a budget the search stays within changes
// nothing.
func TestBFSMemoryBudgetGenerous(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers}
	free := BFS(context.Background(), m, opt)
	opt.MaxMemory = 8 << 30
	capped := BFS(context.Background(), m, opt)
	if !free.Complete || !capped.Complete || capped.Stopped != StopComplete {
		t.Fatalf("stopped %q without a budget, %q with 8 GiB", free.Stopped, capped.Stopped)
	}
	sameResult(t, "memory budget", free, capped)
	if !reflect.DeepEqual(free.Levels, capped.Levels) || free.Transitions != capped.Transitions {
		t.Fatalf("levels %v / %v, transitions %d / %d", free.Levels, capped.Levels, free.Transitions, capped.Transitions)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "100000": 100000, "512MiB": 512 << 20, "8GiB": 8 << 30,
		"2G": 2 << 30, "2g": 2 << 30, "1.5GiB": 3 << 29, "64mib": 64 << 20, "10KB": 10000, "3 MB": 3e6, "7B": 7,
		"1T": 1 << 40, " 4k ": 4096} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "bogus", "GiB", "8 GiBs", "1.2.3G", "-1", "99999999999999999999", "20000000T"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
	for _, n := range []uint64{0, 1000, 64 << 20, 8 << 30, 3 << 29} {
		if got, err := ParseSize(FormatSize(n)); err != nil || got != n {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, FormatSize(n), got, err)
		}
	}
	if s := FormatSize(12341792 << 10); s != "11.8GiB" {
		t.Errorf("FormatSize = %q", s)
	}
}

func TestMemoryBudgetFromMeminfoAndCgroup(t *testing.T) {
	meminfo := "MemTotal:       24683584 kB\nMemFree:        24406588 kB\nMemAvailable:   24264176 kB\n"
	for _, c := range []struct {
		meminfo, cgroup string
		want            uint64
	}{
		{meminfo, "", 24683584 << 10 / 2},
		{meminfo, "max\n", 24683584 << 10 / 2},
		{meminfo, "4294967296\n", 2 << 30},                     // a cgroup limit below the machine's memory
		{meminfo, "107374182400\n", 24683584 << 10 / 2},        // and one above
		{meminfo, "9223372036854771712\n", 24683584 << 10 / 2}, // cgroup v1: no limit
		{"", "1073741824", 512 << 20},
		{"", "", 4 << 30},
		{"MemFree: 12 kB\n", "garbage", 4 << 30},
		{"MemTotal: lots kB\n", "", 4 << 30},
	} {
		if got := memoryBudget(c.meminfo, c.cgroup); got != c.want {
			t.Errorf("memoryBudget(%q, %q) = %d, want %d", c.meminfo, c.cgroup, got, c.want)
		}
	}
	if b := DefaultMemoryBudget(); b < 64<<20 {
		t.Errorf("DefaultMemoryBudget() = %d", b)
	}
}

// TestBFSCompactAtBudget: an exact search given a third of the heap it needs
// (the frontier spilled to disk, the visited set still does not fit)
// switches to hash compaction at the budget and finishes with the exact
// search's states, levels, verdicts and shortest counterexamples; without
// CompactAtBudget the same budget stops it.
func TestBFSCompactAtBudget(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers}
	exact := BFS(context.Background(), m, opt)
	opt.MaxMemory = exact.PeakHeapBytes / 3 // the frontier goes to disk first: the visited set must not fit
	stopped := BFS(context.Background(), m, opt)
	if stopped.Stopped != StopMemory {
		t.Fatalf("exact search at a third of its peak heap (%d bytes): stopped %q, want memory", opt.MaxMemory, stopped.Stopped)
	}
	opt.CompactAtBudget = true
	switched := BFS(context.Background(), m, opt)
	if switched.Stopped != StopComplete || !switched.HashCompact || switched.CompactedAt == 0 || switched.CompactedAt >= switched.States {
		t.Fatalf("with CompactAtBudget: stopped %q, hash-compact %v, compacted at %d of %d states",
			switched.Stopped, switched.HashCompact, switched.CompactedAt, switched.States)
	}
	sameResult(t, "compact at budget", exact, switched)
	if !reflect.DeepEqual(exact.Levels, switched.Levels) || exact.Transitions != switched.Transitions {
		t.Fatalf("levels %v / %v, transitions %d / %d", exact.Levels, switched.Levels, exact.Transitions, switched.Transitions)
	}
	t.Logf("budget %d MiB: switched at %d of %d states, %d bytes spilled", opt.MaxMemory>>20, switched.CompactedAt, switched.States, switched.SpilledBytes)
	if switched.OmissionBound <= 0 {
		t.Errorf("a switched search reports omission bound %g", switched.OmissionBound)
	}
}
