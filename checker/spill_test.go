package checker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// wideConfig has levels of several batches (up to 8,918 states), so that a
// search can stop in the middle of one (53k states, 22 levels).
var wideConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 1, InFlight: 1, Drops: 1}

// searchCase is a search to run two ways (spilled or not, interrupted or not).
type searchCase struct {
	name string
	m    *model.Machine
	opt  BFSOptions
}

// searchCases are searches of the config c: exhaustive, stopping at a
// violation, hash-compact, a shard's share.
func searchCases(t *testing.T, c model.Config) []searchCase {
	t.Helper()
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	ref, gbfm := newMachine(t, c, model.Design{}), newMachine(t, c, gbf.Design)
	sym := model.SymWorkers
	return []searchCase{
		{"reference, exhaustive", ref, BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: sym}},
		{"grant-before-fence, exhaustive", gbfm, BFSOptions{Variant: gbf.Name, Exhaustive: true, Symmetry: sym}},
		{"grant-before-fence, stop at fence-before-grant", gbfm, BFSOptions{Variant: gbf.Name, Stop: spec.SetOf(spec.FenceBeforeGrant), Symmetry: sym}},
		{"grant-before-fence, hash compact", gbfm, BFSOptions{Variant: gbf.Name, Exhaustive: true, Symmetry: sym, HashCompact: true}},
		{"grant-before-fence, shard 1/3", gbfm, BFSOptions{Variant: gbf.Name, Exhaustive: true, Symmetry: sym, Shard: Shard{I: 1, N: 3, Depth: 5}}},
		// Subsumed states are marked from the level's file when it is on disk.
		{"reference, every reduction", ref, BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: sym, Reduce: model.Reductions}},
	}
}

// sameSearch fails unless a search's result is another's (the same search
// run another way) in everything but timing and memory.
func sameSearch(t *testing.T, what string, want, got BFSResult) {
	t.Helper()
	if got.Err != nil {
		t.Fatalf("%s: %v", what, got.Err)
	}
	sameResult(t, what, want, got)
	if want.MaxDepth != got.MaxDepth || want.Complete != got.Complete || !reflect.DeepEqual(want.Reached, got.Reached) ||
		!slices.Equal(want.ViolatedIDs, got.ViolatedIDs) || !slices.Equal(want.Trace, got.Trace) ||
		want.HashCompact != got.HashCompact || want.CompactedAt != got.CompactedAt || want.DenseAt != got.DenseAt || want.LayeredAt != got.LayeredAt ||
		want.OmissionBound != got.OmissionBound || !maps.Equal(want.Violations, got.Violations) {
		t.Fatalf("%s: results differ:\n%+v\n%+v", what, want, got)
	}
	for i := range want.Shortest {
		if want.Shortest[i].Invariant != got.Shortest[i].Invariant || want.Shortest[i].Length != got.Shortest[i].Length {
			t.Fatalf("%s: shortest %+v, want %+v", what, got.Shortest[i], want.Shortest[i])
		}
	}
}

// sum is the number of states in levels.
func sum(levels []uint64) uint64 {
	var n uint64
	for _, l := range levels {
		n += l
	}
	return n
}

// emptyDir fails unless dir holds nothing.
func emptyDir(t *testing.T, what, dir string) {
	t.Helper()
	if files, err := os.ReadDir(dir); err != nil || len(files) > 0 {
		t.Fatalf("%s: %d files left in %s (%v)", what, len(files), dir, err)
	}
}

// TestBFSSpillSameResult: a search that keeps its levels on disk (Spill)
// finds what one in memory finds: states, levels, verdicts, shortest
// counterexamples (rebuilt from parent links read back from disk), a
// shard's share, with the full blocks of links out of memory; its files
// are gone at the end, and so is the temporary directory it makes when
// given none.
func TestBFSSpillSameResult(t *testing.T) {
	ctx := context.Background()
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	cases := append(searchCases(t, wideConfig), searchCase{"grant-before-fence, stop at fencing", newMachine(t, baseConfig, gbf.Design),
		BFSOptions{Stop: spec.SetOf(spec.Fencing), Symmetry: model.SymWorkers}},
		faultsCase(t)) // levels of several batches, whose subsumed states are marked a batch at a time from the level's file
	var linksOnDisk uint64
	for _, tc := range cases {
		want := BFS(ctx, tc.m, tc.opt)
		if tc.opt.Reduce != 0 && want.Subsumed == 0 {
			t.Fatalf("%s: no state subsumed", tc.name)
		}
		opt := tc.opt
		opt.Spill, opt.SpillDir = true, t.TempDir()
		got := BFS(ctx, tc.m, opt)
		sameSearch(t, tc.name+", spilled", want, got)
		if want.SpilledBytes != 0 || got.SpilledBytes == 0 || got.Checkpoint != "" {
			t.Fatalf("%s: %d bytes spilled in memory, %d on disk", tc.name, want.SpilledBytes, got.SpilledBytes)
		}
		onDisk := want.States / pathChunk * linkBlock // the full blocks of parent links
		if want.StoredBytes-got.StoredBytes != onDisk {
			t.Fatalf("%s: %d bytes stored in memory, %d spilled, want %d less (the parent links' full blocks)", tc.name,
				want.StoredBytes, got.StoredBytes, onDisk)
		}
		linksOnDisk += onDisk
		emptyDir(t, tc.name, opt.SpillDir)
	}
	if linksOnDisk == 0 {
		t.Fatal("no search had a full block of parent links to put on disk")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tc := cases[0]
	opt := tc.opt
	opt.Spill = true
	sameSearch(t, "spilled to a temporary directory", BFS(ctx, tc.m, tc.opt), BFS(ctx, tc.m, opt))
	emptyDir(t, "spilled to a temporary directory", tmp)
}

// TestBFSSpillAtBudget: a hash-compact search whose frontier does not fit
// in its memory budget sends its levels to disk when it meets the budget,
// and goes on to the end within it, with the in-memory search's result.
func TestBFSSpillAtBudget(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true, SpillDir: t.TempDir()}
	runtime.GC() // what earlier tests left is not this search's
	want := BFS(ctx, m, opt)
	opt.MaxMemory = want.PeakHeapBytes * 4 / 5 // spilled from the start, its peak is about 2/3
	runtime.GC()
	got := BFS(ctx, m, opt)
	t.Logf("peak heap %.1f MiB in memory; at a budget of %.1f MiB %.1f MiB, %.1f MiB spilled", mib(want.PeakHeapBytes),
		mib(opt.MaxMemory), mib(got.PeakHeapBytes), mib(got.SpilledBytes))
	sameSearch(t, "spilled at the budget", want, got)
	if got.SpilledBytes == 0 {
		t.Fatal("nothing spilled at the budget")
	}
	emptyDir(t, "spilled at the budget", opt.SpillDir)
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// TestPathStoreOnDisk: parent links sent to disk part way read back as
// they were written, a link at a time and a block (or its start) at a
// time, encoded as the file and a checkpoint hold them, leave memory
// block by block, and a file that cannot be read is an error, not a panic.
func TestPathStoreOnDisk(t *testing.T) {
	dir := t.TempDir()
	var p pathStore
	link := func(i int) (uint32, uint16) { return uint32(i * 7), uint16(i % 5000) }
	const n = 5*pathChunk + 123
	for i := range n {
		if i == 3*pathChunk+pathChunk/2 {
			if err := p.toDisk(dir); err != nil {
				t.Fatal(err)
			}
		}
		p.add(link(i))
	}
	if p.err != nil || p.bytes() != 6*pathChunk { // the partial block alone
		t.Fatalf("%d bytes of links in memory (%v)", p.bytes(), p.err)
	}
	for i := range n {
		if gp, ga := p.get(uint32(i)); gp != uint32(i*7) || ga != uint16(i%5000) {
			t.Fatalf("link %d: %d %d", i, gp, ga)
		}
	}
	var want []byte // the blocks, encoded as the file holds them
	for c := range n / pathChunk {
		for j := range pathChunk {
			par, _ := link(c*pathChunk + j)
			want = binary.LittleEndian.AppendUint32(want, par)
		}
		for j := range pathChunk {
			_, act := link(c*pathChunk + j)
			want = binary.LittleEndian.AppendUint16(want, act)
		}
		for _, m := range []int{pathChunk, 1000} { // whole, and a part of each
			got := p.appendBlock(nil, c, m)
			w := want[len(want)-linkBlock:]
			if !bytes.Equal(got[:4*m], w[:4*m]) || !bytes.Equal(got[4*m:], w[4*pathChunk:4*pathChunk+2*m]) {
				t.Fatalf("block %d, its first %d links, differ", c, m)
			}
		}
	}
	name := p.file.Name()
	p.file.Close()
	p.get(1)
	if p.err == nil {
		t.Fatal("a link read from a closed file: no error")
	}
	p.close()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("%s left: %v", name, err)
	}
}

// TestBFSLinksFileLost: a search whose parent links file can no longer be
// written, or read for its counterexample, stops with StopError naming
// it, and leaves no file.
func TestBFSLinksFileLost(t *testing.T) {
	ldn, err := spec.LookupVariant(designs.All(), "lock-delay-no-fence")
	if err != nil {
		t.Fatal(err)
	}
	// Each search stores enough links for what the test loses: more than
	// two blocks for the first, to depth 18 (155,223 states; 91,917 to its
	// usual 16), more than one for the second, without dead-delivered
	// (99,687 states to its violation, without symmetry, the block written
	// before its last level: the links are lost when the counterexample is
	// read back).
	deeper := faultsCase(t)
	deeper.opt.MaxDepth = 18
	for _, tc := range []searchCase{deeper, {"lock-delay-no-fence, stop at fencing", newMachine(t, faultsConfig, ldn.Design),
		BFSOptions{Variant: ldn.Name, Stop: spec.SetOf(spec.Fencing), Reduce: model.Reductions &^ model.ReduceDeadDelivered}}} {
		opt := tc.opt
		opt.Spill, opt.SpillDir, opt.ProgressEvery = true, t.TempDir(), time.Nanosecond
		want := BFS(context.Background(), tc.m, opt)
		if want.States <= pathChunk {
			t.Fatalf("%s: %d states, no block of links on disk", tc.name, want.States)
		}
		b := newBFS(tc.m, opt)
		lost := func(p BFSProgress) bool { // a block written before; for a violation, none written after
			if tc.opt.Stop != 0 {
				return p.Depth == want.MaxDepth
			}
			return b.paths.n > 2*pathChunk
		}
		b.opt.Progress = func(p BFSProgress) { // in the search's leading goroutine, while no link is written
			if b.paths.file != nil && lost(p) {
				b.paths.file.Close()
			}
		}
		r := b.run(context.Background())
		if r.Stopped != StopError || r.Err == nil || !strings.Contains(r.Err.Error(), "parent links file") || r.Counterexample != nil {
			t.Fatalf("%s: %s after %d states: %v", tc.name, r.Stopped, r.States, r.Err)
		}
		if tc.opt.Stop != 0 && !strings.Contains(r.Err.Error(), ": read ") {
			t.Fatalf("%s: %v: the links were lost before the counterexample was read back (find a search whose last level writes no block)", tc.name, r.Err)
		}
		emptyDir(t, tc.name, opt.SpillDir)
		t.Logf("%s: %s after %d states: %v", tc.name, r.Stopped, r.States, r.Err)
	}
}

// TestBFSSpillDirMadeIsRemoved: a spill directory the search made
// (BFSOptions.SpillDir did not exist) is removed with its files when the
// search ends; one that was there is left.
func TestBFSSpillDirMadeIsRemoved(t *testing.T) {
	m := newMachine(t, smallConfig, model.Design{})
	parent := t.TempDir()
	made := filepath.Join(parent, "made")
	if r := BFS(context.Background(), m, BFSOptions{Spill: true, SpillDir: made}); !r.Complete || r.SpilledBytes == 0 {
		t.Fatalf("%s, %d bytes spilled (%v)", r.Stopped, r.SpilledBytes, r.Err)
	}
	if _, err := os.Stat(made); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the spill directory the search made is still there: %v", err)
	}
	if r := BFS(context.Background(), m, BFSOptions{Spill: true, SpillDir: parent}); !r.Complete {
		t.Fatalf("%s (%v)", r.Stopped, r.Err)
	}
	if _, err := os.Stat(parent); err != nil {
		t.Fatalf("the spill directory given was removed: %v", err)
	}
}
