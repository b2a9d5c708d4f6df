package checker

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// smallConfig is searched in milliseconds (5,562 states, 16 levels); its
// levels fit in one batch.
var smallConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Drops: 1, Dups: 1}

// TestBFSResumeEveryLevel: a search stopped at each level in turn (by its
// depth bound, at level 0 by its state bound), then resumed from its checkpoint without the bound, ends
// with the uninterrupted search's result; so does one resumed again and
// again, one level at a time, from the checkpoint it rewrites.
func TestBFSResumeEveryLevel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range searchCases(t, smallConfig) {
		want := BFS(ctx, tc.m, tc.opt)
		if len(want.Shortest) == 0 && tc.opt.Variant != "reference" {
			t.Fatalf("%s: no violation to find again", tc.name)
		}
		for d := 0; d <= want.MaxDepth+1; d++ {
			dir := t.TempDir()
			opt := tc.opt
			opt.Checkpoint, opt.MaxDepth = dir, d
			if d == 0 {
				opt.MaxStates = 1
			}
			first := BFS(ctx, tc.m, opt)
			if first.Err != nil || first.Checkpoint != filepath.Join(dir, CheckpointFile) {
				t.Fatalf("%s, depth %d: %v, checkpoint %q", tc.name, d, first.Err, first.Checkpoint)
			}
			opt.MaxDepth, opt.MaxStates, opt.Resume = 0, 0, dir
			got := BFS(ctx, tc.m, opt)
			sameSearch(t, tc.name+", resumed", want, got)
			if got.Resumed == "" || got.ResumedDepth != first.CheckpointDepth || first.Stopped != StopViolation && first.CheckpointDepth != min(d, want.MaxDepth+1) {
				t.Fatalf("%s: stopped at depth %d (%s), checkpoint of depth %d, resumed at %d", tc.name, d, first.Stopped,
					first.CheckpointDepth, got.ResumedDepth)
			}
		}
		dir := t.TempDir()
		opt := tc.opt
		opt.Checkpoint = dir
		var got BFSResult
		for d := 1; d <= want.MaxDepth+2 && got.Stopped != want.Stopped; d++ {
			opt.MaxDepth = d
			if got = BFS(ctx, tc.m, opt); got.Err != nil {
				t.Fatalf("%s, step %d: %v", tc.name, d, got.Err)
			}
			opt.Resume = dir
		}
		sameSearch(t, tc.name+", resumed level by level", want, got)
	}
}

// TestBFSResumeMidLevel: a search cancelled in the middle of a level, or
// stopped there by a violation, leaves the checkpoint of the level's start
// (the states stored since are left out); resumed, it ends as the
// uninterrupted search, exact, hash-compact, or with its levels on disk.
func TestBFSResumeMidLevel(t *testing.T) {
	ctx := context.Background()
	resume := func(t *testing.T, name string, want BFSResult, m *model.Machine, opt BFSOptions, first BFSResult) {
		t.Helper()
		if first.Err != nil || first.States == sum(first.Levels) {
			t.Fatalf("%s: %s with %d states, levels %v (%v): not in the middle of a level", name, first.Stopped,
				first.States, first.Levels, first.Err)
		}
		opt.Progress, opt.Resume = nil, opt.Checkpoint
		got := BFS(ctx, m, opt)
		sameSearch(t, name+", resumed", want, got)
		if opt.Spill != (got.SpilledBytes > 0) {
			t.Fatalf("%s: spill %v, %d bytes spilled", name, opt.Spill, got.SpilledBytes)
		}
	}
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, baseConfig, gbf.Design)
	var cases []searchCase
	for _, tc := range searchCases(t, wideConfig) {
		if tc.opt.Stop == 0 && tc.opt.Reduce == 0 { // its violation is found in a level of one batch; its levels are narrow
			cases = append(cases, tc)
		}
	}
	for _, tc := range append(cases, faultsCase(t),
		searchCase{"grant-before-fence, stop at fencing", m, BFSOptions{Variant: gbf.Name, Stop: spec.SetOf(spec.Fencing), Symmetry: model.SymWorkers}},
		searchCase{"grant-before-fence, stop at fencing, hash compact", m, BFSOptions{Variant: gbf.Name, Stop: spec.SetOf(spec.Fencing),
			Symmetry: model.SymWorkers, HashCompact: true}}) {
		want := BFS(ctx, tc.m, tc.opt)
		for _, spill := range []bool{false, true} {
			opt := tc.opt
			opt.Spill, opt.SpillDir = spill, t.TempDir()
			name := tc.name + ", spill " + strconv.FormatBool(spill)
			if tc.opt.Stop != 0 {
				opt.Checkpoint = t.TempDir()
				resume(t, name, want, tc.m, opt, BFS(ctx, tc.m, opt))
				continue
			}
			depth := widestLevel(t, want)
			stop, cancel := context.WithCancel(ctx)
			opt.Checkpoint, opt.ProgressEvery = t.TempDir(), time.Nanosecond
			opt.Progress = func(p BFSProgress) {
				if p.Depth == depth && p.Expanded > batchChunks*chunkStates { // in the second batch: the first is merged
					cancel()
				}
			}
			first := BFS(stop, tc.m, opt)
			cancel()
			if first.Stopped != StopCancelled || first.CheckpointDepth != depth {
				t.Fatalf("%s: %s, checkpoint of depth %d, want cancelled in level %d", name, first.Stopped, first.CheckpointDepth, depth)
			}
			resume(t, name, want, tc.m, opt, first)
		}
	}
}

// widestLevel returns the widest level a search expanded (below the split
// of a shard, above its depth bound), checking that it spans several
// batches.
func widestLevel(t *testing.T, r BFSResult) int {
	widest := 0
	for d, n := range r.Levels {
		if r.Stopped == StopDepth && d == len(r.Levels)-1 {
			break
		}
		if n > r.Levels[widest] && (r.Shard.N < 2 || d > r.Shard.Depth) {
			widest = d
		}
	}
	if r.Levels[widest] <= batchChunks*chunkStates+chunkStates {
		t.Fatalf("levels %v: none of several batches", r.Levels)
	}
	return widest
}

// TestBFSResumeAfterMemoryStop: a search that meets its memory budget (of
// one byte: at once) spills its next level, switches to hash compaction if
// allowed, stops, and leaves its checkpoint so (here, resumed from depth
// 6 into another directory); resumed from there with no budget it
// completes, with the uninterrupted search's states and verdicts, hash
// compact from the switch on. A search from the start stopped so resumes
// too.
func TestBFSResumeAfterMemoryStop(t *testing.T) {
	ctx := context.Background()
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, smallConfig, gbf.Design)
	opt := BFSOptions{Variant: gbf.Name, Exhaustive: true, Symmetry: model.SymWorkers}
	want := BFS(ctx, m, opt)
	for _, compact := range []bool{false, true} {
		dir := t.TempDir()
		opt := opt
		opt.Checkpoint, opt.MaxDepth = dir, 6
		six := BFS(ctx, m, opt)
		if six.Stopped != StopDepth {
			t.Fatalf("depth 6: %s %v", six.Stopped, six.Err)
		}
		opt.MaxDepth, opt.Resume, opt.MaxMemory, opt.CompactAtBudget = 0, dir, 1, compact
		dir = t.TempDir()
		opt.Checkpoint, opt.CheckpointEvery = dir, time.Hour // not as the level starts: as the search ends
		stopped := BFS(ctx, m, opt)
		if stopped.Stopped != StopMemory || stopped.CheckpointDepth != 6 || stopped.HashCompact != compact ||
			compact && stopped.CompactedAt != sum(want.Levels[:7]) {
			t.Fatalf("budget of 1 byte, compact %v: %s, checkpoint of depth %d, hash-compact %v, compacted at %d (%v)",
				compact, stopped.Stopped, stopped.CheckpointDepth, stopped.HashCompact, stopped.CompactedAt, stopped.Err)
		}
		// Resumed and stopped at the budget as level 6 began, it proves
		// what the search to depth 6 proves (TestStoppedSearchProvesItsLevels).
		if w := stopped.Within; w == nil || w.Depth != 6 || w.States != six.States || w.Transitions != six.Transitions ||
			w.Unreduced != six.Unreduced || w.Violated != six.Violated || !reflect.DeepEqual(w.Reached, six.Reached) ||
			w.OmissionBound != six.OmissionBound {
			t.Fatalf("budget of 1 byte, compact %v: within %+v; the search to depth 6: %d states, %d transitions", compact,
				stopped.Within, six.States, six.Transitions)
		}
		opt.MaxMemory, opt.Resume = 0, dir
		got := BFS(ctx, m, opt)
		w := want
		if compact {
			w.HashCompact, w.CompactedAt, w.OmissionBound = true, stopped.CompactedAt, got.OmissionBound
		}
		sameSearch(t, "resumed after the memory budget", w, got)
		if got.SpilledBytes == 0 || got.OmissionBound > 0 != compact {
			t.Fatalf("resumed: %d bytes spilled, omission bound %g", got.SpilledBytes, got.OmissionBound)
		}
	}
	dir := t.TempDir()
	opt.Checkpoint, opt.MaxMemory, opt.CheckpointEvery = dir, 1, 0
	if r := BFS(ctx, m, opt); r.Stopped != StopMemory || r.CheckpointDepth != 0 {
		t.Fatalf("from the start at a budget of 1 byte: %s, checkpoint of depth %d (%v)", r.Stopped, r.CheckpointDepth, r.Err)
	}
	opt.Resume, opt.MaxMemory = dir, 0
	sameSearch(t, "resumed after the memory budget at level 0", want, BFS(ctx, m, opt))
}

// TestBFSResumeRefusesAnotherSearch: a checkpoint resumes only the search
// it is of; the error names the file and the field that differs. A
// directory that holds a checkpoint is not overwritten by a new search;
// one with none cannot be resumed.
func TestBFSResumeRefusesAnotherSearch(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, smallConfig, model.Design{})
	opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, MaxDepth: 5}
	dir := t.TempDir()
	opt.Checkpoint = dir
	if r := BFS(ctx, m, opt); r.Err != nil {
		t.Fatal(r.Err)
	}
	file := filepath.Join(dir, CheckpointFile)
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	ttl := smallConfig
	ttl.TTL = 2
	for _, c := range []struct {
		field string
		m     *model.Machine
		edit  func(*BFSOptions)
	}{
		{"variant", m, func(o *BFSOptions) { o.Variant = "other" }},
		{"config.ttl", newMachine(t, ttl, model.Design{}), func(*BFSOptions) {}},
		{"symmetry", m, func(o *BFSOptions) { o.Symmetry = 0 }},
		{"reduce", m, func(o *BFSOptions) { o.Reduce = model.Reductions }},
		{"mode", m, func(o *BFSOptions) { o.HashCompact = true }},
		{"stop", m, func(o *BFSOptions) { o.Exhaustive = false }},
		{"shard", m, func(o *BFSOptions) { o.Shard = Shard{I: 0, N: 2, Depth: 2} }},
		{"depth", m, func(o *BFSOptions) { o.MaxDepth = 3 }},
		{"model", newMachine(t, smallConfig, gbf.Design), func(*BFSOptions) {}},
	} {
		o := opt
		o.Resume, o.Checkpoint = dir, ""
		c.edit(&o)
		r := BFS(ctx, c.m, o)
		var ce *CheckpointError
		if r.Stopped != StopError || !errors.As(r.Err, &ce) || ce.Field != c.field || ce.File != file || r.States != 0 {
			t.Errorf("%s differs: stopped %s, %d states, error %v", c.field, r.Stopped, r.States, r.Err)
		}
	}
	o := opt
	r := BFS(ctx, m, o)
	var ce *CheckpointError
	if r.Stopped != StopError || !errors.As(r.Err, &ce) || ce.File != file || !strings.Contains(ce.Msg, "already there") {
		t.Errorf("a new search into a directory with a checkpoint: %s, %v", r.Stopped, r.Err)
	}
	o.Checkpoint, o.Resume = "", t.TempDir()
	if r := BFS(ctx, m, o); r.Stopped != StopError || !errors.As(r.Err, &ce) || !strings.Contains(ce.Msg, "no checkpoint") {
		t.Errorf("resuming from an empty directory: %s, %v", r.Stopped, r.Err)
	}
}

// TestBFSCheckpointCorrupt: a checkpoint with any byte flipped, cut short
// anywhere or grown is refused with an error naming the file, never a
// panic or a wrong search; the same file intact resumes.
func TestBFSCheckpointCorrupt(t *testing.T) {
	ctx := context.Background()
	for _, compact := range []bool{false, true} {
		m := newMachine(t, smallConfig, model.Design{})
		opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, MaxDepth: 9, HashCompact: compact}
		dir := t.TempDir()
		opt.Checkpoint = dir
		BFS(ctx, m, opt)
		file := filepath.Join(dir, CheckpointFile)
		good, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		opt.Checkpoint, opt.Resume, opt.MaxDepth = "", dir, 0
		try := func(what string, data []byte) {
			t.Helper()
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r := BFS(ctx, m, opt)
			var ce *CheckpointError
			if r.Stopped != StopError || !errors.As(r.Err, &ce) || ce.File != file || r.States != 0 ||
				!strings.Contains(ce.Msg, "corrupt") && !strings.Contains(ce.Msg, "truncated") &&
					ce.Msg != "not a fencecheck BFS checkpoint" && ce.Field != "version" {
				t.Fatalf("compact %v, %s: stopped %s, error %v", compact, what, r.Stopped, r.Err)
			}
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(good))))
		positions := []int{0, len(checkpointMagic), len(checkpointMagic) + 5, 40, len(good) - 1, len(good) - len(checkpointEnd) - 2}
		for range 100 {
			positions = append(positions, rng.IntN(len(good)))
		}
		for _, i := range positions {
			bad := slices.Clone(good)
			bad[i] ^= 1 << rng.IntN(8)
			try("byte "+strconv.Itoa(i)+" flipped", bad)
		}
		cuts := []int{0, 1, len(checkpointMagic), 100, len(good) / 2, len(good) - 1}
		for range 30 {
			cuts = append(cuts, rng.IntN(len(good)))
		}
		for _, n := range cuts {
			try("cut to "+strconv.Itoa(n)+" bytes", good[:n])
		}
		try("grown", append(slices.Clone(good), 0))
		if err := os.WriteFile(file, good, 0o644); err != nil {
			t.Fatal(err)
		}
		if r := BFS(ctx, m, opt); r.Err != nil || !r.Complete {
			t.Fatalf("the intact checkpoint: %s, %v", r.Stopped, r.Err)
		}
		t.Logf("hash-compact %v: a checkpoint of %d bytes (depth 9), %d flips and %d cuts refused", compact, len(good), len(positions), len(cuts))
	}
}

// TestBFSResumeVersion3: checkpoints of format versions 3 and 4, which had
// one table a part (and no dense tables in 3) and are otherwise version
// 5, resume, without the violations counted (version 6 on); versions 2 and
// 7 are refused by number.
func TestBFSResumeVersion3(t *testing.T) {
	ctx := context.Background()
	c := smallConfig
	c.Ops, c.Grants = 2, 2 // a takeover: violations to count
	m := newMachine(t, c, model.Design{})
	opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true}
	want := BFS(ctx, m, opt)
	dir := t.TempDir()
	opt.Checkpoint, opt.MaxDepth = dir, 9
	BFS(ctx, m, opt)
	file := filepath.Join(dir, CheckpointFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opt.Checkpoint, opt.MaxDepth, opt.Resume = "", 0, dir
	head := len(checkpointMagic) + 8 + int(binary.LittleEndian.Uint32(data[len(checkpointMagic)+4:]))
	// Version 4: each part's count of tables (1) and next layer (0) out.
	var old []byte
	at := head + 4
	old = append(old, data[:at]...)
	for range setParts {
		if tables, layer := binary.LittleEndian.Uint64(data[at:]), binary.LittleEndian.Uint64(data[at+8:]); tables != 1 || layer != 0 {
			t.Fatalf("%d tables, a layer of 2^%d slots", tables, layer)
		}
		n := binary.LittleEndian.Uint64(data[at+16:])
		old = append(old, data[at+16:at+32+16*int(n)]...)
		at += 32 + 16*int(n)
	}
	data = append(old, data[at:]...)
	old4 := want
	old4.Violations = nil // not in a checkpoint before version 6
	if want.Violations == nil {
		t.Fatal("the search counts no violation: nothing to lose")
	}
	for _, v := range []uint32{2, 3, 4, 7} {
		binary.LittleEndian.PutUint32(data[len(checkpointMagic):], v)
		for _, sum := range []int{head, len(data) - len(checkpointEnd) - 4} { // the header's CRC, the whole's
			binary.LittleEndian.PutUint32(data[sum:], crc32.Checksum(data[:sum], castagnoli))
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got := BFS(ctx, m, opt)
		var ce *CheckpointError
		switch {
		case v == 3 || v == 4:
			sameSearch(t, "version "+strconv.Itoa(int(v)), old4, got)
		case !errors.As(got.Err, &ce) || ce.Field != "version" || !strings.Contains(ce.Msg, "version "+strconv.Itoa(int(v))):
			t.Fatalf("version %d: %s, %v", v, got.Stopped, got.Err)
		}
	}
}

// TestBFSCheckpointNotWritten: a checkpoint that cannot be written (its
// temporary file's name taken by a directory) does not throw the search's
// result away. As the search ends, the violation found, the complete
// search's verdict, stand, with the error in Err and no checkpoint. At a
// level's start, the search stops there (StopError) naming the file,
// with the last checkpoint written, from which it resumes to the
// uninterrupted search's result.
func TestBFSCheckpointNotWritten(t *testing.T) {
	ctx := context.Background()
	block := func(dir string) { // the next save cannot create its temporary file
		if err := os.MkdirAll(filepath.Join(dir, CheckpointFile+".tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range searchCases(t, smallConfig)[:3] { // exhaustive, with violations, stopping at one
		want := BFS(ctx, tc.m, tc.opt)
		dir := t.TempDir()
		block(dir)
		opt := tc.opt
		opt.Checkpoint, opt.CheckpointEvery = dir, time.Hour // saved only at the end
		got := BFS(ctx, tc.m, opt)
		if got.Err == nil || !strings.Contains(got.Err.Error(), filepath.Join(dir, CheckpointFile)) || got.Checkpoint != "" {
			t.Fatalf("%s, the last checkpoint not written: stopped %s, checkpoint %q, error %v", tc.name, got.Stopped, got.Checkpoint, got.Err)
		}
		got.Err = nil
		sameSearch(t, tc.name+", the last checkpoint not written", want, got)
		if want.Stopped == StopViolation && got.Counterexample == nil {
			t.Fatalf("%s: no counterexample", tc.name)
		}
		if want.MaxDepth < 6 {
			continue // no level 4 to stop at
		}

		dir = t.TempDir()
		opt.Checkpoint, opt.CheckpointEvery, opt.ProgressEvery = dir, 0, time.Nanosecond
		opt.Progress = func(p BFSProgress) {
			if p.Depth == 4 {
				block(dir)
			}
		}
		got = BFS(ctx, tc.m, opt)
		file := filepath.Join(dir, CheckpointFile)
		if got.Stopped != StopError || got.Complete || got.Err == nil || !strings.Contains(got.Err.Error(), file) ||
			got.Checkpoint != file || got.CheckpointDepth != 3 || got.MaxDepth != 4 {
			t.Fatalf("%s, a level's checkpoint not written: stopped %s at depth %d, checkpoint %q of depth %d, error %v",
				tc.name, got.Stopped, got.MaxDepth, got.Checkpoint, got.CheckpointDepth, got.Err)
		}
		if err := os.Remove(file + ".tmp"); err != nil { // the disk has room again
			t.Fatal(err)
		}
		opt.Progress, opt.Resume = nil, dir
		sameSearch(t, tc.name+", resumed from the last checkpoint written", want, BFS(ctx, tc.m, opt))
	}
}

// TestBFSCheckpointLock: a search holds its checkpoint directory's lock
// while it runs and removes it at the end; a second search into the
// directory meanwhile is refused naming the lock, and so is one while a
// live process's lock is there; a lock of a process gone, or an empty
// one left long ago, is taken over.
func TestBFSCheckpointLock(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, smallConfig, model.Design{})
	opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, MaxDepth: 6}
	dir := t.TempDir()
	lock := filepath.Join(dir, LockFile)
	refused := func(what string, r BFSResult) {
		t.Helper()
		var ce *CheckpointError
		if r.Stopped != StopError || !errors.As(r.Err, &ce) || ce.File != lock || !strings.Contains(ce.Msg, "another search") {
			t.Fatalf("%s: stopped %s, error %v", what, r.Stopped, r.Err)
		}
	}
	first := opt
	first.Checkpoint, first.ProgressEvery = dir, time.Nanosecond
	var second BFSResult
	first.Progress = func(p BFSProgress) { // in the first search's leading goroutine: it runs
		if p.Depth == 3 {
			o := opt
			o.Checkpoint = dir
			second = BFS(ctx, m, o)
		}
	}
	if r := BFS(ctx, m, first); r.Err != nil || r.Stopped != StopDepth {
		t.Fatalf("the first search: %s, %v", r.Stopped, r.Err)
	}
	refused("a second search into the directory", second)
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the lock left after the search: %v", err)
	}

	host, _ := os.Hostname()
	opt.Checkpoint, opt.Resume = dir, dir // it goes on there
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())+" "+host+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused("a live process's lock", BFS(ctx, m, opt))
	gone := exec.Command(os.Args[0], "-test.run=^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, []byte(strconv.Itoa(gone.Process.Pid)+" "+host+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt.MaxDepth = 7
	if r := BFS(ctx, m, opt); r.Err != nil || r.CheckpointDepth != 7 {
		t.Fatalf("a gone process's lock: %s, checkpoint of depth %d, %v", r.Stopped, r.CheckpointDepth, r.Err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opt.MaxDepth = 8
	refused("an empty lock just made", BFS(ctx, m, opt))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if r := BFS(ctx, m, opt); r.Err != nil || r.CheckpointDepth != 8 {
		t.Fatalf("an empty lock of long ago: %s, checkpoint of depth %d, %v", r.Stopped, r.CheckpointDepth, r.Err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("the lock left after the search: %v", err)
	}
}

// TestBFSResumeAnotherProgram: a checkpoint resumes only with the program
// that made it: one of another build (programHash stands for it), or of
// an older build that did not record it, is refused naming the file.
func TestBFSResumeAnotherProgram(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, smallConfig, model.Design{})
	this := programHash
	defer func() { programHash = this }()
	for _, made := range []string{"0123456789abcdef", ""} {
		programHash = func() string { return made }
		dir := t.TempDir()
		opt := BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, MaxDepth: 5, Checkpoint: dir}
		if r := BFS(ctx, m, opt); r.Err != nil {
			t.Fatal(r.Err)
		}
		programHash = this
		opt.MaxDepth, opt.Resume = 0, dir
		r := BFS(ctx, m, opt)
		var ce *CheckpointError
		if r.Stopped != StopError || !errors.As(r.Err, &ce) || ce.Field != "program" || ce.File != filepath.Join(dir, CheckpointFile) ||
			!strings.Contains(ce.Msg, "build of the program") || r.States != 0 {
			t.Fatalf("made by %q: stopped %s, %d states, %v", made, r.Stopped, r.States, r.Err)
		}
	}
	if h := this(); len(h) != 16 || strings.HasPrefix(h, "unknown") {
		t.Fatalf("the program's hash: %q", h)
	}
}

// probeConfig is the bounds a probe found a design changed deeper than
// the model's fingerprint resumed with: no-acquire-dedup made the
// checkpoint, the reference design (its fix) resumed it.
var probeConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 1, Grants: 3, InFlight: 3, Crashes: 1,
	Forgeries: 1, Skew: 2, SinkRestarts: 1}

// TestBFSResumeDeeperDesignChange: a checkpoint of a design resumed with
// another that differs deeper than the model's fingerprint sees is
// refused when the other is another build of the program (programHash
// stands for it), as a changed design is; within one build (a library's
// two designs) it never panics replaying the paths it stored: the action
// index of a state with fewer enabled is an error naming the checkpoint;
// and a path's index out of range, from no checkpoint, is an error of
// the links.
func TestBFSResumeDeeperDesignChange(t *testing.T) {
	ctx := context.Background()
	nad, err := spec.LookupVariant(designs.All(), "no-acquire-dedup")
	if err != nil {
		t.Fatal(err)
	}
	made, fixed := newMachine(t, probeConfig, nad.Design), newMachine(t, probeConfig, model.Design{})
	if fingerprint(made) != fingerprint(fixed) {
		t.Fatal("the designs differ within the fingerprint's two steps: not the case to test")
	}
	opt := BFSOptions{Variant: nad.Name, Symmetry: model.SymWorkers | model.SymResources, Reduce: model.Reductions}
	for _, n := range []uint64{5000, 20000} {
		dir := t.TempDir()
		o := opt
		o.Checkpoint, o.MaxStates = dir, n
		if r := BFS(ctx, made, o); r.Stopped != StopMaxStates || r.Err != nil {
			t.Fatalf("%d states: %s, %v", n, r.Stopped, r.Err)
		}
		o.MaxStates, o.Resume = 0, dir
		this := programHash // the fix is another build of the program: refused
		programHash = func() string { return "the fixed build" }
		r := BFS(ctx, fixed, o)
		programHash = this
		var ce *CheckpointError
		if !errors.As(r.Err, &ce) || ce.Field != "program" || r.States != 0 {
			t.Fatalf("%d states, resumed by another build: %s, %v", n, r.Stopped, r.Err)
		}
		r = BFS(ctx, fixed, o) // the same build (the test's): panicked in rebuild before
		if r.Err != nil && (!errors.As(r.Err, &ce) || ce.Field != "model" || ce.File != filepath.Join(dir, CheckpointFile)) {
			t.Fatalf("%d states: %s, %v", n, r.Stopped, r.Err)
		}
		t.Logf("checkpoint at %d states resumed with the fixed design: %s, %v", n, r.Stopped, r.Err)
	}

	m := newMachine(t, smallConfig, model.Design{})
	b := newBFS(m, BFSOptions{Variant: "reference", Exhaustive: true, Symmetry: model.SymWorkers, MaxDepth: 3})
	if r := b.run(ctx); r.Err != nil {
		t.Fatal(r.Err)
	}
	if run, _ := b.rebuild(edge{parent: 1, act: 999, ok: true}, ^spec.Set(0)); run != nil || b.disk.err == nil ||
		!strings.Contains(b.disk.err.Error(), "action 999 of a state with") {
		t.Fatalf("a path's index out of range: %v, %v", run, b.disk.err)
	}
}

// TestBFSResumeKeepsLinksOnDisk: a search that kept its levels on disk
// kept its parent links there too, to stay within its budget; resumed, it
// reads them back to disk as it reads them, not into memory, where they
// would leave it less of its budget than the uninterrupted search had
// (which then stopped short of it at the same budget). The resumed search
// ends as the uninterrupted one, its counterexamples read from the file.
// A checkpoint kept in memory goes to disk so too when it is as large as
// the budget of the search resumed from it, which would meet its budget
// as it began; its exact visited set then turns hash-compact as it is
// read, as the search would turn it at its budget.
func TestBFSResumeKeepsLinksOnDisk(t *testing.T) {
	ctx := context.Background()
	tc := faultsCase(t)
	want := BFS(ctx, tc.m, tc.opt)
	for _, spilled := range []bool{true, false} {
		dir := t.TempDir()
		opt := tc.opt
		opt.Spill, opt.Checkpoint, opt.MaxDepth = spilled, dir, 15
		if r := BFS(ctx, tc.m, opt); r.Stopped != StopDepth || r.States <= pathChunk {
			t.Fatalf("to depth 15: %s, %d states (want a full block of links) %v", r.Stopped, r.States, r.Err)
		}
		opt.Spill, opt.Checkpoint, opt.Resume, opt.MaxDepth, opt.SpillDir = false, "", dir, tc.opt.MaxDepth, t.TempDir()
		if !spilled {
			st, err := os.Stat(filepath.Join(dir, CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			opt.MaxMemory, opt.CompactAtBudget = uint64(st.Size())/2, true
		}
		b := newBFS(tc.m, opt)
		if err := b.begin(); err != nil {
			t.Fatal(err)
		}
		if b.paths.file == nil || b.paths.bytes() > linkBlock || b.paths.n != int(b.seen.len()) || b.disk.cur == nil {
			t.Fatalf("resumed (spilled %v): links file %v, %d bytes of links in memory, %d links for %d states, frontier on disk %v",
				spilled, b.paths.file != nil, b.paths.bytes(), b.paths.n, b.seen.len(), b.disk.cur != nil)
		}
		if compacted := b.opt.HashCompact && b.compactedAt == b.seen.len() && b.seen.parts[0].compact; compacted == spilled {
			t.Fatalf("resumed (spilled %v): the exact visited set turned hash-compact as it was read: %v (at %d of %d states)",
				spilled, compacted, b.compactedAt, b.seen.len())
		}
		b.paths.close()
		b.disk.close()
		if !spilled {
			continue // at a budget that binds, the search goes on as its heap lets it
		}
		sameSearch(t, "resumed with its links on disk", want, BFS(ctx, tc.m, opt))
		// A resumed search that stops at once, at a state bound its
		// checkpoint has passed, still reports the heap its reading took.
		opt.MaxStates = 1
		if r := BFS(ctx, tc.m, opt); r.Stopped != StopMaxStates || r.PeakHeapBytes == 0 {
			t.Fatalf("resumed past its state bound: %s, peak heap %d", r.Stopped, r.PeakHeapBytes)
		}
	}
}
