package checker

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// CheckpointFile is the name of the checkpoint in its directory
// (BFSOptions.Checkpoint, Resume).
const CheckpointFile = "bfs.checkpoint"

// LockFile is the name of the lock a search holds in its checkpoint
// directory while it runs (BFSOptions.Checkpoint): the process ID and host
// of the search, made with O_EXCL and removed when the search ends. A
// second search into the directory is refused while the first runs; a
// lock whose process is gone (on this host) is stale and taken over.
const LockFile = "bfs.checkpoint.lock"

// The checkpoint format (docs/exhaustive.md): the magic, the version
// (uint32), a JSON header (uint32 length, the bytes, their CRC-32C), the
// visited set, the parent links, the frontier, the CRC-32C of every byte
// before it and the end marker. Integers are little-endian.
const (
	checkpointMagic   = "fencecheck BFS checkpoint\n"
	checkpointVersion = 6 // 3 to 5 are read too: the same without the violations counted (and with one table a part in 3 and 4, none dense in 3)
	checkpointEnd     = "end of checkpoint\n"
	maxHeader         = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CheckpointError is a checkpoint that cannot be resumed: missing, not
// a checkpoint, corrupt or truncated, or of another search. Field names
// what differs or is wrong (variant, config.ttl, symmetry, mode, stop,
// shard, model, depth, version) when one thing is.
type CheckpointError struct {
	File  string // the checkpoint's path
	Field string // what differs or is wrong, or ""
	Msg   string // how, in words
}

// Error names the file, the field if any, and what is wrong.
func (e *CheckpointError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// mark is the search as a level starts: what a checkpoint saves, even
// once the level is under way (the states stored since are left out).
type mark struct {
	states           uint64
	arenas           [setParts]uint64 // each part's key arena size (exact mode)
	trans, unreduced uint64
	probes, subsumed uint64
	omission         float64
	bits             [setParts]uint8 // each part's newest table's size (log2), if hash-compact
	tables, layer    [setParts]uint8 // each part's number of tables, and its visited.layer
	dense            bool            // whether the tables were dense
	denseAt          uint64
	layeredAt        uint64
	reached          Coverage
	violated         spec.Set
	counts           [maxInvariants]uint64
	first            [maxInvariants]edge
	start, stride    uint32
	spilled          uint64
	elapsed          time.Duration
}

// ckHeader is a checkpoint's JSON header: the search it is of, and where
// that search was.
type ckHeader struct {
	Search ckSearch `json:"search"`
	Level  ckLevel  `json:"level"`
}

// ckSearch identifies a search: a checkpoint resumes only the same one.
type ckSearch struct {
	Variant  string       `json:"variant"`
	Config   model.Config `json:"config"`
	Symmetry string       `json:"symmetry"`
	// Reduce names the reductions of the steps that applied
	// (model.Applies; "" for none).
	Reduce string   `json:"reduce,omitempty"`
	Mode   string   `json:"mode"` // exact or hash-compact, as asked
	Stop   []string `json:"stop"` // the invariants whose violation stops it (none: exhaustive)
	Shard  Shard    `json:"shard"`
	// Program identifies the program that made the checkpoint
	// (programHash: a hash of its executable): a checkpoint resumes only
	// with the program that made it, since a design is code compiled into
	// it and changes in it beyond what Model sees. Empty in a checkpoint
	// of an older build, which did not record it.
	Program string `json:"program"`
	// Model is a fingerprint of the machine: the size of a state and the
	// keys of the states within two steps of the initial one.
	Model string `json:"model"`
}

// ckLevel is the search as the level Depth starts.
type ckLevel struct {
	Depth       int      `json:"depth"`
	Levels      []uint64 `json:"levels"`
	States      uint64   `json:"states"`
	Transitions uint64   `json:"transitions"`
	Unreduced   uint64   `json:"unreduced"`
	Violated    []string `json:"violated"`
	// Violations is BFSResult.Violations (version 6 on); ViolationsLost,
	// that the search resumed from a checkpoint without them, so that it
	// has none to report.
	Violations     map[string]uint64 `json:"violations,omitempty"`
	ViolationsLost bool              `json:"violationsLost,omitempty"`
	First          map[string]ckEdge `json:"first"` // each invariant's first violating transition
	Reached        Coverage          `json:"reached"`
	HashCompact    bool              `json:"hashCompact"` // how the visited set is stored
	CompactedAt    uint64            `json:"compactedAt"`
	// DenseAt is BFSResult.DenseAt; Dense tells that the visited set's
	// tables were let fill to 7/8 (stateSet.dense). Neither is in a
	// version-3 checkpoint, which had no dense table.
	DenseAt uint64 `json:"denseAt,omitempty"`
	Dense   bool   `json:"dense,omitempty"`
	// LayeredAt is BFSResult.LayeredAt (version 5 on).
	LayeredAt uint64 `json:"layeredAt,omitempty"`
	// Start is the discovery index of the level's first state, Stride the
	// step between two (a shard's share); Frontier the level's states.
	Start    uint32 `json:"start"`
	Stride   uint32 `json:"stride"`
	Frontier uint64 `json:"frontier"`
	// Spilled tells that the search keeps its levels on disk.
	Spilled      bool          `json:"spilled"`
	SpilledBytes uint64        `json:"spilledBytes"`
	Elapsed      time.Duration `json:"elapsed"`
	// Probes counts the lookups of ReduceBudgets and ReduceAges in the
	// visited set, which the omission bound of hash compaction counts too.
	Probes uint64 `json:"probes,omitempty"`
	// Omission is the omission bound of the search so far (hash
	// compaction; see BFSResult.OmissionBound).
	Omission float64 `json:"omission,omitempty"`
	// Subsumed counts the states of the levels before Depth that were
	// not expanded because a state stored no deeper simulates each.
	Subsumed uint64 `json:"subsumed,omitempty"`
}

type ckEdge struct {
	Parent uint32 `json:"parent"`
	Act    uint16 `json:"act"`
}

// mark notes the search as the level to expand starts (see mark).
func (b *bfs) mark() {
	mk := &b.disk.mark
	mk.states = b.seen.len()
	for i := range b.seen.arenas {
		mk.arenas[i] = b.seen.arenas[i].size
	}
	mk.trans, mk.unreduced, mk.reached, mk.violated, mk.first = b.trans, b.unreduced, b.reached, b.violated, b.first
	mk.counts = b.counts
	mk.probes, mk.subsumed, mk.omission = b.probes, b.subsumed, b.omission
	mk.dense, mk.denseAt, mk.layeredAt = b.seen.dense(), b.denseAt, b.layeredAt
	for i, p := range b.seen.parts {
		mk.bits[i] = 0
		if p.compact {
			mk.bits[i] = uint8(64 - p.shift)
		}
		mk.tables[i], mk.layer[i] = uint8(len(p.older)+1), uint8(p.layer)
	}
	mk.start, mk.stride = b.curStart, b.curStride
	if r := b.disk.cur; r != nil {
		mk.start, mk.stride = r.start, r.stride
	}
	mk.spilled = b.disk.spilled
	mk.elapsed = time.Since(b.start)
}

// begin checks that the checkpoint directory holds no other search's
// checkpoint, resumes the search from BFSOptions.Resume, and starts
// spilling with BFSOptions.Spill.
func (b *bfs) begin() error {
	d := &b.disk
	d.lastSave, d.savedDepth = b.start, -1
	dir := b.opt.Checkpoint
	if dir != "" || b.opt.Resume != "" {
		d.identity = b.identity()
	}
	same := dir != "" && b.opt.Resume != "" && sameDir(dir, b.opt.Resume)
	if b.opt.Resume != "" { // before lockDir makes a directory
		if _, err := os.Stat(filepath.Join(b.opt.Resume, CheckpointFile)); errors.Is(err, fs.ErrNotExist) {
			return noCheckpoint(b.opt.Resume)
		}
	}
	if dir != "" {
		if err := d.lockDir(dir); err != nil {
			return err
		}
	}
	if dir != "" && !same {
		path := filepath.Join(dir, CheckpointFile)
		if _, err := os.Stat(path); err == nil {
			return &CheckpointError{File: path, Msg: "a checkpoint is already there: resume it, or remove it to start again"}
		}
	}
	if b.opt.Resume != "" {
		if err := b.resume(); err != nil {
			return err
		}
		if same {
			d.file, d.savedDepth = d.resumed, b.depth
		}
	}
	if b.opt.Spill && d.next == nil {
		w, err := b.newLevel()
		if err != nil {
			return err
		}
		d.next = w
		return b.paths.toDisk(d.dir)
	}
	return nil
}

// sameDir reports whether two paths name the same directory.
func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// lockDir makes the checkpoint directory dir if need be and takes its
// lock (LockFile), or fails with a *CheckpointError naming the lock when
// another search holds it. A lock left by a process that is gone (on
// this host) is stale: it is removed and taken. disk.close removes the
// lock taken.
func (d *disk) lockDir(dir string) error {
	path := filepath.Join(dir, LockFile)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &CheckpointError{File: path, Msg: err.Error()}
	}
	host, _ := os.Hostname()
	for stale := false; ; stale = true {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%d %s\n", os.Getpid(), host)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				return &CheckpointError{File: path, Msg: err.Error()}
			}
			d.lock = path
			return nil
		}
		if !errors.Is(err, fs.ErrExist) || stale {
			return &CheckpointError{File: path, Msg: err.Error()}
		}
		if holder, live := lockHolder(path, host); live {
			return &CheckpointError{File: path, Msg: fmt.Sprintf("another search (%s) is using this checkpoint directory: "+
				"wait for it to end or give this one another directory (remove the lock only if no search is running)", holder)}
		}
		os.Remove(path) // its process is gone
	}
}

// lockHolder reads the lock at path: who holds it, in words, and whether
// that process may still run. A lock of another host, or one that cannot
// be read or understood, is taken to be held: only a process known gone
// frees it.
func lockHolder(path, host string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "a lock that cannot be read: " + err.Error(), !errors.Is(err, fs.ErrNotExist)
	}
	pidText, lockHost, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		if len(data) == 0 { // being written by the search that just made it, or left so by one killed then
			st, err := os.Stat(path)
			return "a search starting", err == nil && time.Since(st.ModTime()) < time.Minute
		}
		return fmt.Sprintf("a lock of unknown form %q", data), true
	}
	who := fmt.Sprintf("process %d on %s", pid, cmp.Or(lockHost, "an unnamed host"))
	if lockHost != host {
		return who, true
	}
	return who, processRuns(pid)
}

// processRuns reports whether the process pid may still run: false only
// when it is known gone.
func processRuns(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false // on Windows, no such process
	}
	err = p.Signal(syscall.Signal(0)) // on Unix, a signal of 0 checks that the process exists
	return !errors.Is(err, os.ErrProcessDone)
}

// checkpoint saves the search as the level being expanded started (see
// mark), when that is due: at every level unless CheckpointEvery spaces
// them out, and at the end. It returns StopComplete, or StopError when
// the checkpoint cannot be written (disk.err); at the end its error is
// disk.saveErr instead, and it returns StopComplete: the search's result
// stands without it.
func (b *bfs) checkpoint(atEnd bool) string {
	d := &b.disk
	if b.opt.Checkpoint == "" || d.savedDepth == b.depth ||
		!atEnd && time.Since(d.lastSave) < b.opt.CheckpointEvery {
		return StopComplete
	}
	path, err := b.save()
	if err != nil {
		if atEnd {
			d.saveErr = err
			return StopComplete
		}
		d.fail(err)
		return StopError
	}
	d.file, d.savedDepth, d.lastSave = path, b.depth, time.Now()
	return StopComplete
}

// checkpointAtEnd saves the search as it ends, unless a file failed: a
// complete one with its empty last level, a stopped one as the level it
// stopped in started. It returns why the search ended: a checkpoint that
// cannot be written then does not change it (a violation found, a search
// complete or stopped by its budget stands), but is BFSResult.Err, and
// BFSResult.Checkpoint names the last one written, if any.
func (b *bfs) checkpointAtEnd(stopped string) string {
	if stopped == StopError {
		return stopped
	}
	if stopped == StopComplete {
		b.mark()
	}
	b.checkpoint(true)
	return stopped
}

// save writes the checkpoint next to the old one and renames it over it,
// so that a crash leaves one or the other whole.
func (b *bfs) save() (string, error) {
	dir := b.opt.Checkpoint
	path := filepath.Join(dir, CheckpointFile)
	err := os.MkdirAll(dir, 0o755)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", path, err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", path, err)
	}
	err = b.writeCheckpoint(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return path, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ckWriter writes a checkpoint, keeping the CRC of what it wrote.
type ckWriter struct {
	w     *bufio.Writer
	crc   uint32
	block []byte
}

// blockBytes is the size of the blocks integers are encoded in.
const blockBytes = 1 << 16

func (w *ckWriter) bytes(p []byte) {
	w.crc = crc32.Update(w.crc, castagnoli, p)
	w.w.Write(p) // bufio's errors are sticky: the final Flush reports them
}

func (w *ckWriter) u32(v uint32) { w.bytes(binary.LittleEndian.AppendUint32(w.block[:0], v)) }
func (w *ckWriter) u64(v uint64) { w.bytes(binary.LittleEndian.AppendUint64(w.block[:0], v)) }

// writeCheckpoint writes the search as it was at the mark.
func (b *bfs) writeCheckpoint(f io.Writer) error {
	mk := &b.disk.mark
	w := &ckWriter{w: bufio.NewWriterSize(f, spillBuffer), block: make([]byte, 0, blockBytes)}
	head, err := json.Marshal(b.header())
	if err != nil {
		return err
	}
	w.bytes([]byte(checkpointMagic))
	w.u32(checkpointVersion)
	w.u32(uint32(len(head)))
	w.bytes(head)
	w.u32(w.crc)

	// The visited set: in exact mode each part's key arena as it was at
	// the mark; in hash-compact mode, for each part, the number of its
	// tables at the mark and the size (log2) of the layer to follow (0:
	// none; see visited.layer), then each table's number of entries, its
	// size (log2) as it was at the mark (or as its entries need) and its
	// entries' home slots and fields at that size, but those of the states
	// stored since. The resumed search then stores what the uninterrupted
	// one did, with the same bits of each hash.
	if !b.opt.HashCompact {
		for p := range b.seen.arenas {
			a, size := &b.seen.arenas[p], mk.arenas[p]
			w.u64(size)
			for i := uint64(0); i<<arenaChunkBits < size; i++ {
				w.bytes(a.chunks[i][:min(1<<arenaChunkBits, size-i<<arenaChunkBits)])
			}
		}
	} else {
		since, err := b.storedSince()
		if err != nil {
			return err
		}
		for p, v := range b.seen.parts {
			tables := int(mk.tables[p])
			w.u64(uint64(tables))
			w.u64(uint64(mk.layer[p]))
			for i := range tables {
				t, k := v, uint(mk.bits[p]) // the last table's size at the mark: 0 if the search was exact then
				if i < len(v.older) {
					t = v.older[i]
				}
				if i < tables-1 {
					k = 64 - t.shift // frozen at the mark
				}
				var left []uint64 // the slots of the states stored since, in t
				for _, s := range since[p] {
					if s>>sinceLayer == uint64(i) {
						left = append(left, s&(1<<sinceLayer-1))
					}
				}
				n := t.n - uint64(len(left))
				if k == 0 {
					k = compactBits(n, mk.dense)
				}
				w.u64(n)
				w.u64(uint64(k))
				block := w.block[:0]
				t.entries(func(slot, home, field uint64) {
					if _, found := slices.BinarySearch(left, slot); found {
						return
					}
					for range 64 - t.shift - k {
						home, field = lower(home, field)
					}
					block = binary.LittleEndian.AppendUint64(block, home)
					if block = binary.LittleEndian.AppendUint64(block, field); len(block) == blockBytes {
						w.bytes(block)
						block = block[:0]
					}
				})
				w.bytes(block)
			}
		}
	}

	// The parent links of the states stored at the mark.
	w.u64(mk.states)
	var links []byte // a block of them, encoded
	for i := uint64(0); i < mk.states; i += pathChunk {
		links = b.paths.appendBlock(links[:0], int(i/pathChunk), int(min(pathChunk, mk.states-i)))
		if err := b.paths.err; err != nil {
			return err
		}
		w.bytes(links)
	}

	// The frontier: the keys (model.Machine.Encode) of the level's states.
	w.u64(uint64(b.levelLen()))
	block := w.block[:0]
	record := func(p []byte) {
		if len(block)+2+len(p) > blockBytes {
			w.bytes(block)
			block = block[:0]
		}
		block = append(binary.LittleEndian.AppendUint16(block, uint16(len(p))), p...)
	}
	if r := b.disk.cur; r != nil {
		if err := r.again().each(record); err != nil {
			return err
		}
	} else {
		for _, ref := range b.cur {
			record(b.key(ref))
		}
	}
	w.bytes(block)
	w.u32(w.crc)
	w.bytes([]byte(checkpointEnd))
	return w.w.Flush()
}

// storedSince returns, by part and sorted, the tables and slots of the
// hash-compact entries of the states stored since the mark (the next
// level's so far), which a checkpoint leaves out: each is the index of
// the table in its part (visited.locate) shifted left by sinceLayer, or'd
// with the slot.
func (b *bfs) storedSince() ([setParts][]uint64, error) {
	var since [setParts][]uint64
	want := b.seen.len() - b.disk.mark.states
	if want == 0 {
		return since, nil
	}
	var lost error
	add := func(p []byte) {
		h := hashKey(p) // the merge wrote the state's key
		t, slot, found := b.seen.parts[part(h)].locate(p, h)
		if !found && lost == nil {
			lost = errors.New("a state of the next level is not in the visited set")
		}
		since[part(h)] = append(since[part(h)], uint64(t)<<sinceLayer|slot)
	}
	if w := b.disk.next; w != nil {
		if err := w.flush(); err != nil {
			return since, err
		}
		if err := newLevelReader(w.f, w.n, 0, nil).each(add); err != nil {
			return since, err
		}
	} else {
		for _, ref := range b.next {
			add(b.key(ref))
		}
	}
	if lost != nil {
		return since, lost
	}
	var got uint64
	for p := range since {
		slices.Sort(since[p])
		got += uint64(len(since[p]))
	}
	if got != want {
		return since, fmt.Errorf("%d states stored since the level started, %d in the next level", want, got)
	}
	return since, nil
}

// sinceLayer is where storedSince puts a table's index: above every slot.
const sinceLayer = 48

// header is the checkpoint's header for the search at the mark.
func (b *bfs) header() ckHeader {
	mk := &b.disk.mark
	first := map[string]ckEdge{}
	for i, e := range mk.first {
		if e.ok {
			first[(spec.Set(1) << i).IDs()[0]] = ckEdge{Parent: e.parent, Act: e.act}
		}
	}
	return ckHeader{Search: b.disk.identity, Level: ckLevel{Depth: b.depth, Levels: b.levels, States: mk.states,
		Transitions: mk.trans, Unreduced: mk.unreduced, Probes: mk.probes, Omission: mk.omission, Subsumed: mk.subsumed, Violated: nonNil(mk.violated.IDs()), Violations: countsOf(mk.counts), ViolationsLost: b.countsLost, First: first,
		Reached: mk.reached, HashCompact: b.opt.HashCompact, CompactedAt: b.compactedAt, DenseAt: mk.denseAt, Dense: mk.dense, LayeredAt: mk.layeredAt, Start: mk.start,
		Stride: mk.stride, Frontier: uint64(b.levelLen()), Spilled: b.disk.cur != nil || b.disk.next != nil,
		SpilledBytes: mk.spilled, Elapsed: mk.elapsed}}
}

// nonNil is s, or an empty list for none (JSON [] rather than null).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// identity is what the search is (see ckSearch), as asked.
func (b *bfs) identity() ckSearch {
	mode := "exact"
	if b.opt.HashCompact {
		mode = "hash-compact"
	}
	var sym []string
	if b.opt.Symmetry&model.SymWorkers != 0 {
		sym = append(sym, "workers")
	}
	if b.opt.Symmetry&model.SymResources != 0 {
		sym = append(sym, "resources")
	}
	shard := b.opt.Shard
	if shard.N <= 1 {
		shard = Shard{}
	}
	return ckSearch{Variant: b.opt.Variant, Config: b.m.Config, Symmetry: cmp.Or(strings.Join(sym, "+"), "none"),
		Reduce: b.m.Applies(b.opt.Reduce).String(), Mode: mode, Stop: nonNil(b.stop.IDs()), Shard: shard,
		Program: programHash(), Model: fingerprint(b.m)}
}

// programHash identifies the running program: the first 8 bytes of the
// SHA-256 of its executable (os.Executable), in hex; "unknown: " and why
// if it cannot be read. It is computed once, when a search first
// checkpoints or resumes: 55-60 ms for the 60 MB explore binary. A
// variable, so that a test can stand for another build.
var programHash = sync.OnceValue(func() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown: " + err.Error()
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

// fingerprint identifies the machine as well as its behaviour near the
// initial state can: the size of a state and the keys of the states
// within two steps of it.
func fingerprint(m *model.Machine) string {
	var buf []byte
	var acts []model.Action
	level := []model.State{m.Init()}
	for step := 0; ; step++ {
		var next []model.State
		for i := range level {
			buf = m.Encode(&level[i], buf)
			if step == 2 {
				continue
			}
			acts = m.Enabled(&level[i], acts[:0])
			for _, a := range acts {
				t := level[i]
				m.Next(&t, &a)
				next = append(next, t)
			}
		}
		if step == 2 {
			break
		}
		level = next
	}
	return fmt.Sprintf("%d-%016x", unsafe.Sizeof(model.State{}), hashKey(buf))
}

// differs returns the first field in which a checkpoint's search (was)
// differs from this one, and how.
func (s ckSearch) differs(was ckSearch) (string, string) {
	diff := func(field string, a, b any) (string, string) {
		return field, fmt.Sprintf("the checkpoint's search has %v, this one %v", b, a)
	}
	if s.Program != was.Program {
		made := "another build of the program (" + was.Program + ", this one " + s.Program + ")"
		if was.Program == "" {
			made = "an older build of the program, which did not record it"
		}
		return "program", "the checkpoint was made by " + made + ": it resumes only with the program that made it " +
			"(a design is compiled into the program, and a changed one would go on wrongly); run that one, or start the search again"
	}
	if s.Variant != was.Variant {
		return diff("variant", fmt.Sprintf("%q", s.Variant), fmt.Sprintf("%q", was.Variant))
	}
	cv, wv := reflect.ValueOf(s.Config), reflect.ValueOf(was.Config)
	for i := range cv.NumField() {
		if a, b := cv.Field(i).Interface(), wv.Field(i).Interface(); a != b {
			name, _, _ := strings.Cut(cv.Type().Field(i).Tag.Get("json"), ",")
			return diff("config."+name, a, b)
		}
	}
	switch {
	case s.Symmetry != was.Symmetry:
		return diff("symmetry", s.Symmetry, was.Symmetry)
	case s.Reduce != was.Reduce:
		return diff("reduce", cmp.Or(s.Reduce, "none"), cmp.Or(was.Reduce, "none"))
	case s.Mode != was.Mode:
		return diff("mode", s.Mode, was.Mode)
	case !slices.Equal(s.Stop, was.Stop):
		return diff("stop", stopWords(s.Stop), stopWords(was.Stop))
	case s.Shard != was.Shard:
		return diff("shard", shardWords(s.Shard), shardWords(was.Shard))
	case s.Model != was.Model:
		return "model", fmt.Sprintf("the model differs (fingerprint %s, this one %s): the program or the design changed since", was.Model, s.Model)
	}
	return "", ""
}

func stopWords(ids []string) string {
	if len(ids) == 0 {
		return "no stop invariant (exhaustive)"
	}
	return "stop on " + strings.Join(ids, ", ")
}

func shardWords(s Shard) string {
	if s.N <= 1 {
		return "no shard"
	}
	return fmt.Sprintf("shard %d/%d at depth %d", s.I, s.N, s.Depth)
}

// ckReader reads a checkpoint, keeping the CRC of what it read; its first
// error sticks.
type ckReader struct {
	r       *bufio.Reader
	crc     uint32
	left    int64 // bytes of the file not read yet
	file    string
	section string // what is being read, for errors
	err     error
	scratch []byte
}

// corrupt records that the file is not what it should be.
func (r *ckReader) corrupt(format string, args ...any) {
	if r.err == nil {
		r.err = &CheckpointError{File: r.file, Msg: fmt.Sprintf("corrupt checkpoint: %s: %s", r.section, fmt.Sprintf(format, args...))}
	}
}

// short records that the file ends before the n bytes that come next.
func (r *ckReader) short(n int64) {
	if r.err == nil {
		r.err = &CheckpointError{File: r.file, Msg: fmt.Sprintf("truncated or corrupt checkpoint: the %s needs %d bytes, the file has %d more", r.section, n, r.left)}
	}
}

// read returns the next n bytes, valid until the next read; nil after an
// error.
func (r *ckReader) read(n int) []byte {
	if r.err != nil {
		return nil
	}
	if int64(n) > r.left {
		r.short(int64(n))
		return nil
	}
	var p []byte
	var err error
	if n <= r.r.Size() {
		if p, err = r.r.Peek(n); err == nil {
			r.r.Discard(n)
		}
	} else {
		r.scratch = slices.Grow(r.scratch[:0], n)[:n]
		p = r.scratch
		_, err = io.ReadFull(r.r, p)
	}
	if err != nil {
		r.err = &CheckpointError{File: r.file, Msg: fmt.Sprintf("reading the %s: %v", r.section, err)}
		return nil
	}
	r.left -= int64(n)
	r.crc = crc32.Update(r.crc, castagnoli, p)
	return p
}

func (r *ckReader) u16() uint16 {
	if p := r.read(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *ckReader) u32() uint32 {
	if p := r.read(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *ckReader) u64() uint64 {
	if p := r.read(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// count reads a count of items of at least size bytes each and checks
// that the file can hold them.
func (r *ckReader) count(size int64) uint64 {
	n := r.u64()
	if r.err == nil && n > uint64(r.left/size) {
		r.short(int64(min(n, 1<<62/uint64(size))) * size)
	}
	return n
}

// resume replaces the initial state with the checkpoint in
// BFSOptions.Resume, or fails with a *CheckpointError.
func (b *bfs) resume() error {
	path := filepath.Join(b.opt.Resume, CheckpointFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return noCheckpoint(b.opt.Resume)
	}
	if err != nil {
		return &CheckpointError{File: path, Msg: err.Error()}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return &CheckpointError{File: path, Msg: "not a regular file"}
	}
	r := &ckReader{r: bufio.NewReaderSize(f, spillBuffer), left: st.Size(), file: path}
	err = b.readCheckpoint(r)
	if err == nil {
		b.disk.resumed, b.disk.resumedAt = path, b.depth
	}
	return err
}

// noCheckpoint is the error of a resume from dir, which holds no
// checkpoint.
func noCheckpoint(dir string) error {
	return &CheckpointError{File: filepath.Join(dir, CheckpointFile), Msg: "no checkpoint to resume (a search writes one with a checkpoint directory)"}
}

// readCheckpoint reads a checkpoint into b, checking it as it goes; it
// installs nothing before the file's CRC is found right.
func (b *bfs) readCheckpoint(r *ckReader) error {
	r.section = "magic"
	if m := r.read(len(checkpointMagic)); r.err != nil || string(m) != checkpointMagic {
		return &CheckpointError{File: r.file, Msg: "not a fencecheck BFS checkpoint"}
	}
	r.section = "header"
	version := r.u32()
	if r.err == nil && (version < 3 || version > checkpointVersion) {
		return &CheckpointError{File: r.file, Field: "version", Msg: fmt.Sprintf("format version %d; this program reads versions 3 to %d", version, checkpointVersion)}
	}
	n := r.u32()
	if r.err == nil && n > maxHeader {
		r.corrupt("a header of %d bytes", n)
	}
	head := slices.Clone(r.read(int(n)))
	if crc := r.crc; r.u32() != crc && r.err == nil {
		r.corrupt("checksum mismatch")
	}
	if r.err != nil {
		return r.err
	}
	var h ckHeader
	if err := json.Unmarshal(head, &h); err != nil {
		r.corrupt("%v", err)
		return r.err
	}
	if field, msg := b.disk.identity.differs(h.Search); field != "" {
		return &CheckpointError{File: r.file, Field: field, Msg: msg}
	}
	lv := &h.Level
	if b.opt.MaxDepth > 0 && lv.Depth > b.opt.MaxDepth {
		return &CheckpointError{File: r.file, Field: "depth", Msg: fmt.Sprintf("the checkpoint is at depth %d, beyond this search's depth bound %d", lv.Depth, b.opt.MaxDepth)}
	}
	var levelSum uint64
	for _, l := range lv.Levels {
		levelSum += l
	}
	end := uint64(lv.Start) + (max(lv.Frontier, 1)-1)*uint64(lv.Stride)
	if len(lv.Levels) == 0 || lv.Depth < len(lv.Levels)-1 || lv.Depth > len(lv.Levels) || levelSum != lv.States ||
		lv.Stride == 0 || lv.Frontier > 0 && (lv.Depth == len(lv.Levels) || lv.Frontier > lv.Levels[lv.Depth] || end >= lv.States) {
		r.corrupt("depth %d, levels %v, %d states, frontier of %d from %d by %d", lv.Depth, lv.Levels, lv.States,
			lv.Frontier, lv.Start, lv.Stride)
		return r.err
	}
	for _, id := range lv.Violated {
		if !spec.IsInvariant(id) {
			r.corrupt("unknown invariant %q violated", id)
			return r.err
		}
	}
	var counts [maxInvariants]uint64 // none before version 6
	// In name order, so that a corruption is named alike each time.
	for _, id := range slices.Sorted(maps.Keys(lv.Violations)) {
		n := lv.Violations[id]
		s := spec.SetOf(id) & spec.SetOf(lv.Violated...)
		if s == 0 || n == 0 {
			r.corrupt("%d violations of %q", n, id)
			return r.err
		}
		if version >= 6 {
			counts[bits.TrailingZeros16(uint16(s))] = n
		}
	}
	var first [maxInvariants]edge
	for _, id := range slices.Sorted(maps.Keys(lv.First)) {
		e := lv.First[id]
		s := spec.SetOf(id)
		if s == 0 || uint64(e.Parent) >= lv.States {
			r.corrupt("first violation of %q from state %d", id, e.Parent)
			return r.err
		}
		first[bits.TrailingZeros16(uint16(s))] = edge{parent: e.Parent, act: e.Act, ok: true}
	}

	// If the rest of the checkpoint is as large as this search's budget,
	// the search would meet its budget as it began: as it would then, the
	// links and the frontier go to disk as they are read, a block at a
	// time (as they do if the search had sent them there), and an exact
	// visited set turns hash-compact a part at a time, if the search may
	// switch (BFSOptions.CompactAtBudget).
	big := b.opt.MaxMemory > 0 && uint64(r.left) >= b.opt.MaxMemory
	toDisk, compact := lv.Spilled || big, big && !lv.HashCompact && b.opt.CompactAtBudget
	seen := newStateSet(lv.HashCompact)
	var keys uint64
	for p := range seen.parts {
		r.section = fmt.Sprintf("visited set (part %d)", p)
		if !lv.HashCompact {
			size := r.count(1)
			for done := uint64(0); done < size && r.err == nil; done += 1 << arenaChunkBits {
				chunk := r.read(int(min(1<<arenaChunkBits, size-done)))
				for pos := 0; pos+2 <= len(chunk); {
					l := int(binary.LittleEndian.Uint16(chunk[pos:]))
					if l == 0 {
						break // the rest of the chunk is unused
					}
					key := chunk[min(pos+2, len(chunk)):min(pos+2+l, len(chunk))]
					if h := hashKey(key); len(key) != l || part(h) != p || !seen.parts[p].insert(key, h) {
						r.corrupt("key %d", keys)
						return r.err
					}
					keys++
					pos += 2 + l
				}
			}
			if compact && r.err == nil {
				seen.compactPart(p)
			}
			continue
		}
		tables, layer := uint64(1), uint64(0)
		if version >= 5 {
			tables, layer = r.u64(), r.u64()
			if r.err == nil && (tables < 1 || tables > maxLayers || layer > 40) {
				r.corrupt("%d tables, the next of 2^%d slots", tables, layer)
			}
		}
		var v *visited
		var prev uint64 // the last table's size (log2)
		for t := uint64(0); t < tables && r.err == nil; t++ {
			n := r.count(16)
			k, least := r.u64(), uint64(compactBits(n, lv.Dense))
			if r.err == nil && (k > 40 || outgrows(n, uint(k), lv.Dense) || k > max(least+4, prev)) { // larger only if entries lay too far from home, or a layer just begun
				r.corrupt("a table of 2^%d slots for %d states", k, n)
			}
			if r.err != nil {
				break
			}
			if t == 0 {
				v = newTable(true, uint(k), nil)
				v.dense = lv.Dense
			} else {
				v.addLayer(uint(k))
			}
			prev = k
			for i := uint64(0); i < n && r.err == nil; i += blockBytes / 16 {
				block := r.read(int(min(blockBytes/16, n-i) * 16))
				for j := 0; j < len(block); j += 16 {
					home, f := binary.LittleEndian.Uint64(block[j:]), binary.LittleEndian.Uint64(block[j+8:])
					if home>>k != 0 || f == 0 || f > fieldMask || bits.TrailingZeros64(f) > remBits {
						r.corrupt("entry %d", keys)
						return r.err
					}
					v.put(home, f, uint(k))
					keys++
				}
			}
		}
		if r.err == nil {
			v.layer = uint(layer)
			seen.parts[p] = v
		}
	}
	if r.err == nil && keys != lv.States {
		r.corrupt("%d states, the header says %d", keys, lv.States)
	}

	r.section = "parent links"
	var paths pathStore
	if n := r.count(6); r.err == nil && n != lv.States {
		r.corrupt("%d links for %d states", n, lv.States)
	}
	if toDisk && r.err == nil {
		dir, err := b.spillDir()
		if err == nil {
			err = paths.toDisk(dir)
		}
		if err != nil {
			return fmt.Errorf("spill directory: %w", err)
		}
	}
	for i := uint64(0); i < lv.States && r.err == nil; i += pathChunk {
		n := min(pathChunk, lv.States-i)
		parent, act := make([]uint32, pathChunk), make([]uint16, pathChunk)
		for j := uint64(0); j < n && r.err == nil; j += blockBytes / 4 {
			block := r.read(int(min(blockBytes/4, n-j) * 4))
			for k := 0; k < len(block); k += 4 {
				parent[j+uint64(k/4)] = binary.LittleEndian.Uint32(block[k:])
				if s := i + j + uint64(k/4); s > 0 && uint64(parent[j+uint64(k/4)]) >= s {
					r.corrupt("state %d's parent is %d", s, parent[j+uint64(k/4)])
				}
			}
		}
		for j := uint64(0); j < n && r.err == nil; j += blockBytes / 2 {
			block := r.read(int(min(blockBytes/2, n-j) * 2))
			for k := 0; k < len(block); k += 2 {
				act[j+uint64(k/2)] = binary.LittleEndian.Uint16(block[k:])
			}
		}
		paths.parent, paths.act = append(paths.parent, parent), append(paths.act, act)
		if c := len(paths.parent) - 1; paths.file != nil && n == pathChunk {
			paths.write(c) // full: to disk, as the search would have written it
			paths.parent[c], paths.act[c] = nil, nil
		}
	}
	paths.n = int(lv.States)
	if paths.err != nil {
		r.err = paths.err
	}

	r.section = "frontier"
	if n := r.count(3); r.err == nil && n != lv.Frontier {
		r.corrupt("%d states, the header says %d", n, lv.Frontier)
	}
	var spill *levelWriter
	var front arena
	var cur []uint64
	if toDisk {
		var err error
		if spill, err = b.newLevel(); err != nil {
			paths.close()
			return err
		}
	}
	var s model.State
	for i := uint64(0); i < lv.Frontier && r.err == nil; i++ {
		l := int(r.u16())
		p := r.read(l)
		if err := b.m.Decode(p, &s); r.err == nil && (l == 0 || err != nil) {
			r.corrupt("state %d", i)
		}
		if r.err != nil {
			break
		}
		if spill != nil {
			spill.add(p)
		} else {
			cur = append(cur, front.add(p)|frontRef)
		}
	}

	r.section = "checksum and end marker"
	if crc := r.crc; r.u32() != crc && r.err == nil {
		r.corrupt("checksum mismatch")
	}
	if m := r.read(len(checkpointEnd)); r.err == nil && (string(m) != checkpointEnd || r.left != 0) {
		r.corrupt("no end marker where the file ends")
	}
	var level *levelReader
	if spill != nil {
		var err error
		if r.err == nil {
			level, err = spill.finish(lv.Start, nil)
			r.err = err
		}
		if r.err != nil {
			remove(spill.f)
		}
	}
	if r.err != nil {
		paths.close()
		return r.err
	}

	b.seen, b.paths, b.front, b.cur, b.next = seen, paths, front, cur, nil
	b.curStart, b.curStride = lv.Start, lv.Stride
	b.depth, b.levels = lv.Depth, lv.Levels
	b.trans, b.unreduced, b.reached, b.first = lv.Transitions, lv.Unreduced, lv.Reached, first
	b.probes, b.subsumed, b.omission = lv.Probes, lv.Subsumed, lv.Omission
	b.violated = spec.SetOf(lv.Violated...)
	b.counts, b.countsLost = counts, version < 6 || lv.ViolationsLost
	b.opt.HashCompact, b.compactedAt, b.denseAt, b.layeredAt = lv.HashCompact, lv.CompactedAt, lv.DenseAt, lv.LayeredAt
	if compact {
		b.opt.HashCompact, b.compactedAt = true, lv.States
	}
	b.disk.spilled = lv.SpilledBytes
	b.start = time.Now().Add(-lv.Elapsed)
	b.lastProgress = b.start
	if level != nil {
		level.stride = lv.Stride
		b.disk.cur = level
		var err error
		if b.disk.next, err = b.newLevel(); err != nil {
			return err
		}
	}
	return nil
}
