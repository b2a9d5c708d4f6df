package checker

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

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

// TestBFSDenseTables: a hash-compact search whose tables fill to 7/8
// before they double (what densify sets at the memory budget) stores the
// states, levels, verdicts and counterexamples of one whose tables double
// at 3/4 (to depth 12: 53,835 states, each part's tables half the size),
// in tables of the least dense size, and misses a state with a
// larger bound (its entries keep fewer bits); stopped at a depth and
// resumed from its checkpoint, it ends as it did uninterrupted, bound and
// all, which it would not if its tables came back doubling at 3/4.
func TestBFSDenseTables(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true, MaxDepth: 12}
	dense := func(opt BFSOptions) (BFSResult, *stateSet) {
		b := newBFS(m, opt)
		b.seen.setDense(true)
		return b.run(ctx), b.seen
	}
	b := newBFS(m, opt)
	want, wantSet := b.run(ctx), b.seen
	got, gotSet := dense(opt)
	want.OmissionBound = got.OmissionBound
	sameSearch(t, "dense tables", want, got)
	var smaller int
	for i, p := range gotSet.parts {
		q := wantSet.parts[i]
		if !p.dense || q.dense || len(p.table) != 1<<compactBits(p.n, true) || len(q.table) != 1<<compactBits(q.n, false) {
			t.Fatalf("part %d: %d states in %d slots (dense %v), %d in %d (dense %v)", i, p.n, len(p.table), p.dense,
				q.n, len(q.table), q.dense)
		}
		if len(p.table) < len(q.table) {
			smaller++
		}
	}
	if smaller == 0 || got.OmissionBound <= b.omission {
		t.Fatalf("dense: %d tables smaller; omission bound %g, %g doubling at 3/4", smaller, got.OmissionBound, b.omission)
	}
	t.Logf("%d states: %d of %d tables half the size; omission bound %.3g, %.3g at 3/4", got.States, smaller, setParts,
		got.OmissionBound, b.omission)

	dir := t.TempDir()
	opt.Checkpoint, opt.MaxDepth = dir, 8
	if r, _ := dense(opt); r.Stopped != StopDepth {
		t.Fatalf("depth %d: %s %v", opt.MaxDepth, r.Stopped, r.Err)
	}
	opt.Checkpoint, opt.MaxDepth, opt.Resume = "", 12, dir
	sameSearch(t, "dense, resumed", got, BFS(ctx, m, opt))
}

// TestBFSLayers: a search whose parts' tables, when full, are kept and
// followed by smaller ones (layers, visited.layer) finds what a search
// without them does (states, levels, transitions, verdicts and
// counterexamples), with a larger omission bound. Stopped in the middle
// of its widest level, after a layer was begun in it, and resumed from
// its checkpoint, it ends as it did uninterrupted, bit for bit.
func TestBFSLayers(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true, MaxDepth: 12}
	layered := func(ctx context.Context, opt BFSOptions) (BFSResult, *bfs) {
		b := newBFS(m, opt)
		for i := range b.seen.parts {
			b.seen.parts[i] = newTable(true, 10, nil) // 896 states at 7/8, then layers of 448
			b.seen.parts[i].layer = 9
		}
		b.seen.setDense(true)
		return b.run(ctx), b
	}
	want := BFS(ctx, m, opt)
	got, whole := layered(ctx, opt)
	omission := got.OmissionBound
	got.OmissionBound = want.OmissionBound
	sameSearch(t, "layers", want, got)
	got.OmissionBound = omission
	for i, p := range whole.seen.parts {
		if len(p.older) < 2 || p.layer != 9 || 64-p.shift != 9 {
			t.Fatalf("part %d: %d tables, the last of 2^%d slots", i, len(p.older)+1, 64-p.shift)
		}
	}
	if omission <= want.OmissionBound {
		t.Fatalf("omission bound %g with layers, %g without", omission, want.OmissionBound)
	}
	t.Logf("%d states in %d tables a part; omission bound %.3g, %.3g without layers", got.States, len(whole.seen.parts[0].older)+1,
		omission, want.OmissionBound)

	depth := widestLevel(t, want)
	stop, cancel := context.WithCancel(ctx)
	opt.Checkpoint, opt.CheckpointEvery, opt.ProgressEvery = t.TempDir(), time.Hour, time.Nanosecond // saved as it stops, not as the level starts
	opt.Progress = func(p BFSProgress) {
		if p.Depth == depth && p.Expanded > batchChunks*chunkStates { // in the second batch: the first is merged
			cancel()
		}
	}
	first, b := layered(stop, opt)
	cancel()
	begun := false // a layer begun in the level, after the checkpoint's mark
	for i, p := range b.seen.parts {
		begun = begun || len(p.older)+1 > int(b.disk.mark.tables[i])
	}
	if first.Stopped != StopCancelled || first.CheckpointDepth != depth || !begun {
		t.Fatalf("%s at depth %d, checkpoint at %d; a layer begun since the level started: %v", first.Stopped,
			first.MaxDepth, first.CheckpointDepth, begun)
	}
	opt.Progress, opt.Resume = nil, opt.Checkpoint
	resumed := newBFS(m, opt)
	sameSearch(t, "layers, resumed", got, resumed.run(ctx))
	tables := func(p *visited) (ts []string) { // each table's entries and slots
		for _, u := range append(slices.Clone(p.older), p) {
			ts = append(ts, fmt.Sprintf("%d/%d", u.n, len(u.table)))
		}
		return append(ts, fmt.Sprintf("layer %d", p.layer))
	}
	for i, p := range resumed.seen.parts {
		if got, want := tables(p), tables(whole.seen.parts[i]); !slices.Equal(got, want) {
			t.Fatalf("part %d resumed: tables %v, uninterrupted %v", i, got, want)
		}
	}
}

// TestDensifyAtBudget: at its memory budget a hash-compact search whose
// tables would double in the next batch lets them all fill to 7/8, and
// goes on; it does not while no table would double, where that does not
// fit the budget either, once they are dense, or in exact mode.
func TestDensifyAtBudget(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	rng := rand.New(rand.NewPCG(5, 6))
	for _, compact := range []bool{false, true} {
		b := newBFS(m, BFSOptions{HashCompact: compact})
		fill := func(n uint64) { // states until the parts hold n between them
			for b.seen.len() < n {
				k := binary.LittleEndian.AppendUint64(nil, rng.Uint64())
				b.seen.insert(k, hashKey(k))
			}
		}
		fill(setParts * 1000) // tables of 4096 slots: the next batch's share (1025) fits below 3/4
		b.opt.MaxMemory = b.batchGrowth(batchChunks) + 1
		if b.densify(batchChunks) || b.denseAt != 0 {
			t.Fatalf("compact %v: densified with no table about to double", compact)
		}
		fill(setParts * 2400) // the share would take each past 3/4, not past 7/8
		if b.batchGrowth(batchChunks) < setParts*2*4096*8 {
			t.Fatalf("compact %v: the tables' doubling is not in the growth", compact)
		}
		b.mem.heap, b.opt.MaxMemory = 1<<30, 1<<30+b.batchGrowth(batchChunks)-setParts*2*4096*8 // not even for the rest
		if b.densify(batchChunks) || b.denseAt != 0 || b.seen.parts[0].dense {
			t.Fatalf("compact %v: densified where dense tables do not fit either", compact)
		}
		b.opt.MaxMemory++ // room for all but the doubling
		if got := b.densify(batchChunks); got != compact || (b.denseAt == b.seen.len()) != compact {
			t.Fatalf("compact %v: densify %v, dense at %d of %d states", compact, got, b.denseAt, b.seen.len())
		}
		for i, p := range b.seen.parts {
			if p.dense != compact {
				t.Fatalf("compact %v: part %d dense %v", compact, i, p.dense)
			}
		}
		if compact && b.densify(batchChunks) {
			t.Fatal("densified twice")
		}
	}
}

// TestLayerAtBudget: at its memory budget a hash-compact search whose
// tables would grow in the next batch, where doubling them does not fit,
// sets every part's next table (a layer) to the largest size at which all
// fit: the tables' own, then half of it, and so on; it makes the tables
// dense; where none fits, it leaves every part as it was, dense or not. It
// never layers in exact mode, nor when a part due to grow holds maxLayers
// tables; a part that holds them and is not due is left to double.
func TestLayerAtBudget(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	rng := rand.New(rand.NewPCG(7, 8))
	if b := newBFS(m, BFSOptions{}); b.layer(batchChunks) {
		t.Fatal("layered an exact search")
	}
	b := newBFS(m, BFSOptions{HashCompact: true})
	b.seen.setDense(true)
	for b.seen.len() < setParts*13330 { // tables of 2^14 slots; the next batch's share takes some past 7/8
		k := binary.LittleEndian.AppendUint64(nil, rng.Uint64())
		b.seen.insert(k, hashKey(k))
	}
	fresh := b.batchFresh()
	var grow, still []*visited
	for _, p := range b.seen.parts {
		if 64-p.shift != 14 {
			t.Fatalf("a table of 2^%d slots", 64-p.shift)
		}
		if grows(p, fresh) {
			grow = append(grow, p)
		} else {
			still = append(still, p)
		}
	}
	if len(grow) == 0 || len(still) == 0 {
		t.Fatalf("%d of %d parts would grow", len(grow), setParts)
	}
	if g := b.seen.growth(fresh); g != uint64(len(grow))*8<<15+uint64(len(still))*8<<14 {
		t.Fatalf("the tables' growth %d: not %d doubling and %d more to double", g, len(grow), len(still))
	}
	b.mem.heap = 1 << 30
	other := b.batchGrowth(batchChunks) - b.seen.growth(fresh)
	reset := func(dense bool) {
		for _, p := range b.seen.parts {
			p.layer, p.older = 0, nil
		}
		b.seen.setDense(dense)
		b.denseAt, b.layeredAt = 0, 0
	}
	for _, k := range []uint{14, 13, minTableBits} {
		reset(k != 13) // densified too
		b.opt.MaxMemory = b.mem.heap + other + setParts*8<<k + 1
		if !b.layer(batchChunks) || b.layeredAt != b.seen.len() || !b.seen.dense() {
			t.Fatalf("2^%d slots fit: layered at %d of %d states, dense %v", k, b.layeredAt, b.seen.len(), b.seen.dense())
		}
		for i, p := range b.seen.parts {
			if p.layer != k {
				t.Fatalf("2^%d slots fit: part %d's next table of 2^%d slots", k, i, p.layer)
			}
		}
		if k == 13 && b.denseAt != b.seen.len() {
			t.Fatalf("made dense at %d of %d states", b.denseAt, b.seen.len())
		}
	}
	for _, dense := range []bool{false, true} {
		reset(dense)
		b.opt.MaxMemory = b.mem.heap + other + setParts*8<<minTableBits // not even the least
		if b.layer(batchChunks) || b.layeredAt != 0 || b.seen.dense() != dense || slices.ContainsFunc(b.seen.parts[:], func(p *visited) bool { return p.layer != 0 }) {
			t.Fatalf("dense %v: layered where nothing fits (dense %v)", dense, b.seen.dense())
		}
	}
	full := func(p *visited) { // maxLayers tables
		for range maxLayers - 1 {
			p.older = append(p.older, newTable(true, minTableBits, nil))
		}
	}
	reset(true)
	b.opt.MaxMemory = b.mem.heap + other + setParts*8<<14 + 1
	full(still[0])
	if !b.layer(batchChunks) || still[0].layer != 0 {
		t.Fatalf("a part of %d tables not due to grow: its next of 2^%d slots", maxLayers, still[0].layer)
	}
	reset(true)
	full(grow[0])
	if b.layer(batchChunks) {
		t.Fatalf("layered with a part of %d tables due to grow", maxLayers)
	}
}

// TestBFSProgressAtBudget: with a memory budget, progress reports carry
// the heap sampled and the budget, and what the search did at the budget
// as it did it: the levels on disk, and the switch to hash compaction,
// each reported from then on with the result's figure.
func TestBFSProgressAtBudget(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers}
	opt.MaxMemory = BFS(context.Background(), m, opt).PeakHeapBytes / 3 // as in TestBFSCompactAtBudget
	opt.CompactAtBudget, opt.ProgressEvery = true, time.Nanosecond
	var reports, onDisk, compacted int
	var at uint64
	opt.Progress = func(p BFSProgress) {
		reports++
		if p.MaxMemory != opt.MaxMemory || p.Heap == 0 || onDisk > 0 && !p.OnDisk || compacted > 0 && p.CompactedAt != at ||
			p.CompactedAt > 0 && !p.OnDisk {
			t.Fatalf("report %d: %+v", reports, p)
		}
		if p.OnDisk {
			onDisk++
		}
		if p.CompactedAt > 0 {
			compacted++
			at = p.CompactedAt
		}
	}
	opt.SpillDir = t.TempDir()
	r := BFS(context.Background(), m, opt)
	if r.CompactedAt == 0 || compacted == 0 || at != r.CompactedAt || onDisk < compacted || r.SpilledBytes == 0 {
		t.Fatalf("compacted at %d; %d reports, %d with the levels on disk, %d after the switch at %d", r.CompactedAt,
			reports, onDisk, compacted, at)
	}
}
