package checker

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
	"unsafe"

	"github.com/fencecheck/fencecheck/model"
)

// disk is what a search keeps on disk: the levels spilled when the
// frontier does not fit in the memory budget, and the checkpoints.
type disk struct {
	dir     string        // the spill directory, once made
	tempDir bool          // made under os.TempDir by the search: removed at the end
	madeDir bool          // the spill directory asked for (BFSOptions.SpillDir) made by the search: removed at the end if empty
	cur     *levelReader  // the level being expanded, when it is on disk
	next    *levelWriter  // the next level, when it goes to disk
	spilled uint64        // bytes written to level files
	err     error         // the first file error: the search stops with StopError
	saveErr error         // the checkpoint that could not be written as the search ended: its result stands
	lock    string        // the checkpoint directory's lock taken (LockFile), removed at the end
	wbuf    *bufio.Writer // the buffer of the last level file written, for the next

	mark       mark      // the search as the level being expanded started
	savedDepth int       // the level of the last checkpoint written (-1: none)
	lastSave   time.Time // when it was written
	file       string    // where
	resumed    string    // the checkpoint resumed from
	resumedAt  int       // and its level
	identity   ckSearch  // the search, as a checkpoint records it
}

// spillBuffer is the buffer of a level file's reader and writer.
const spillBuffer = 1 << 20

// maxKey bounds the length of a state's key (model.Machine.Encode), which
// writes each of the state's one-byte fields at most once.
const maxKey = int(unsafe.Sizeof(model.State{}))

// levelWriter writes the keys of a level's states to a file in discovery
// order, each as a little-endian uint16 length and the bytes.
type levelWriter struct {
	f       *os.File
	w       *bufio.Writer
	n       uint64  // states written
	size    int64   // bytes written
	spilled *uint64 // the search's count of bytes spilled
}

// levelReader reads a level back from its file, in order. The level's
// states are the file's states of index keep modulo every (all but after
// keepShare); the j-th has discovery index start + j*stride.
type levelReader struct {
	f             *os.File
	r             *bufio.Reader
	states        uint64 // states in the file
	pos           uint64 // of them, read
	start, stride uint32
	keep, every   int
}

// fail records the first file error; the search then stops with StopError.
func (d *disk) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// spillDir returns the directory of level files, making it on first use:
// BFSOptions.SpillDir, else Checkpoint, else a new temporary directory.
func (b *bfs) spillDir() (string, error) {
	d := &b.disk
	if d.dir != "" {
		return d.dir, nil
	}
	if dir := cmp.Or(b.opt.SpillDir, b.opt.Checkpoint); dir != "" {
		_, err := os.Stat(dir)
		d.madeDir = errors.Is(err, fs.ErrNotExist)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		d.dir = dir
		return dir, nil
	}
	dir, err := os.MkdirTemp("", "fencecheck-spill-")
	if err != nil {
		return "", err
	}
	d.dir, d.tempDir = dir, true
	return dir, nil
}

// newLevel opens a new level file for writing.
func (b *bfs) newLevel() (*levelWriter, error) {
	dir, err := b.spillDir()
	if err != nil {
		return nil, fmt.Errorf("spill directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "bfs-level-*.spill")
	if err != nil {
		return nil, err
	}
	w := b.disk.wbuf
	if b.disk.wbuf = nil; w == nil {
		w = bufio.NewWriterSize(nil, spillBuffer)
	}
	w.Reset(f)
	return &levelWriter{f: f, w: w, spilled: &b.disk.spilled}, nil
}

// add appends a state's key. Write errors are bufio's, sticky: finish
// reports them.
func (w *levelWriter) add(key []byte) {
	var n [2]byte
	binary.LittleEndian.PutUint16(n[:], uint16(len(key)))
	w.w.Write(n[:])
	w.w.Write(key)
	w.n++
	w.size += int64(2 + len(key))
	*w.spilled += uint64(2 + len(key))
}

// flush writes out what the buffer holds.
func (w *levelWriter) flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("spill file %s: %w", w.f.Name(), err)
	}
	return nil
}

// finish ends the level and returns a reader of it, its first state of
// discovery index start, with the buffer r (nil: a new one).
func (w *levelWriter) finish(start uint32, r *bufio.Reader) (*levelReader, error) {
	if err := w.flush(); err != nil {
		return nil, err
	}
	return newLevelReader(w.f, w.n, start, r), nil
}

// newLevelReader reads the file f of states states from its start with
// the buffer r (nil: a new one); it reads at offsets (ReadAt), so that
// several readers may share f.
func newLevelReader(f *os.File, states uint64, start uint32, r *bufio.Reader) *levelReader {
	if r == nil {
		r = bufio.NewReaderSize(nil, spillBuffer)
	}
	l := &levelReader{f: f, r: r, states: states, start: start, stride: 1, every: 1}
	l.seek(0, 0)
	return l
}

// seek makes the state of index pos, at byte off, the next to read.
func (r *levelReader) seek(off int64, pos uint64) {
	r.r.Reset(io.NewSectionReader(r.f, off, 1<<62))
	r.pos = pos
}

// again returns a reader of the same level from its start.
func (r *levelReader) again() *levelReader {
	a := newLevelReader(r.f, r.states, r.start, nil)
	a.stride, a.keep, a.every = r.stride, r.keep, r.every
	return a
}

// len is the number of the level's states.
func (r *levelReader) len() int {
	if r.states <= uint64(r.keep) {
		return 0
	}
	return int((r.states - uint64(r.keep) + uint64(r.every) - 1) / uint64(r.every))
}

// share keeps, of the level, the states of shard sh (see keepShare).
func (r *levelReader) share(sh Shard) {
	r.keep, r.every = sh.I, sh.N
	r.start += uint32(sh.I)
	r.stride = uint32(sh.N)
}

// next returns the next state key of the file, valid until the next
// call, and whether it is one of the level's; io.EOF after the last.
func (r *levelReader) next() ([]byte, bool, error) {
	if r.pos == r.states {
		return nil, false, io.EOF
	}
	n, err := r.r.Peek(2)
	if err == nil {
		l := int(binary.LittleEndian.Uint16(n))
		if l == 0 || l > maxKey {
			return nil, false, fmt.Errorf("spill file %s: state %d: corrupt length %d", r.f.Name(), r.pos, l)
		}
		if n, err = r.r.Peek(2 + l); err == nil {
			r.r.Discard(2 + l)
			kept := int(r.pos%uint64(r.every)) == r.keep
			r.pos++
			return n[2:], kept, nil
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, false, fmt.Errorf("spill file %s: state %d of %d: %w", r.f.Name(), r.pos, r.states, err)
}

// each calls f on each of the level's states in order.
func (r *levelReader) each(f func(key []byte)) error {
	for {
		p, kept, err := r.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if kept {
			f(p)
		}
	}
}

// remove closes and deletes a level file.
func remove(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// close deletes the level files and a temporary spill directory.
func (d *disk) close() {
	if d.cur != nil {
		remove(d.cur.f)
		d.cur = nil
	}
	if d.next != nil {
		remove(d.next.f)
		d.next = nil
	}
	if d.tempDir {
		os.RemoveAll(d.dir)
	} else if d.madeDir {
		os.Remove(d.dir) // only if empty: a checkpoint may be there
	}
	if d.lock != "" {
		os.Remove(d.lock)
		d.lock = ""
	}
}

// levelLen is the number of states of the level being expanded.
func (b *bfs) levelLen() int {
	if r := b.disk.cur; r != nil {
		return r.len()
	}
	return len(b.cur)
}

// nextLen is the number of states of the next level so far.
func (b *bfs) nextLen() uint64 {
	if w := b.disk.next; w != nil {
		return w.n
	}
	return uint64(len(b.next))
}

// window makes ready chunks [lo, hi) of the level being expanded and
// returns them as b.cur holds them: the same chunks when the level is in
// memory; when it is on disk, b.cur becomes the batch's states, read into
// the front arena, numbered from b.curStart, as chunks [0, hi-lo). It
// returns false on a file error (b.disk.err).
func (b *bfs) window(lo, hi int) (int, int, bool) {
	r := b.disk.cur
	if r == nil {
		b.curChunk = 0
		return lo, hi, true
	}
	if !b.load(r, lo, hi) {
		return 0, 0, false
	}
	b.curStart, b.curStride = r.start+uint32(lo*chunkStates)*r.stride, r.stride
	b.curChunk = lo
	return 0, hi - lo, true
}

// load reads chunks [lo, hi) of the level from r, which is at chunk lo,
// into the front arena, and makes b.cur refer to them. It returns false on
// a file error (b.disk.err).
func (b *bfs) load(r *levelReader, lo, hi int) bool {
	n := min(hi*chunkStates, r.len()) - lo*chunkStates
	b.front.release(b.front.size)
	b.cur = b.cur[:0]
	for len(b.cur) < n {
		p, kept, err := r.next()
		if err != nil {
			b.disk.fail(err)
			return false
		}
		if kept {
			b.cur = append(b.cur, b.front.add(p)|frontRef)
		}
	}
	return true
}

// switchLevel makes the next level the one to expand, from memory or from
// its file, and returns StopComplete, or StopError on a file error.
func (b *bfs) switchLevel(nextStart uint32) string {
	b.depth++
	b.curStart, b.curStride = nextStart, 1
	d := &b.disk
	if d.next == nil {
		b.cur, b.next = b.next, b.cur
		if len(b.cur) > 0 {
			b.levels = append(b.levels, uint64(len(b.cur)))
			// A level is all in the front arena or all in the visited set's.
			if ref := b.cur[0]; ref&frontRef != 0 {
				b.front.release(ref &^ frontRef)
			} else {
				b.front.release(b.front.size)
			}
		}
		return StopComplete
	}
	var rbuf *bufio.Reader
	if d.cur != nil {
		remove(d.cur.f)
		rbuf = d.cur.r
	}
	r, err := d.next.finish(nextStart, rbuf)
	if err != nil {
		d.fail(err)
		return StopError
	}
	d.cur, d.next, d.wbuf, b.next = r, nil, d.next.w, nil
	if n := r.len(); n > 0 {
		b.levels = append(b.levels, uint64(n))
		if d.next, err = b.newLevel(); err != nil {
			d.fail(err)
			return StopError
		}
	}
	return StopComplete
}

// spill sends the frontier to disk from chunk lo of the level being
// expanded on: the next level's states so far and every later one (once
// spilling, a search spills every level), and the level being expanded,
// all of it (a checkpoint needs it), to be read on from chunk lo.
func (b *bfs) spill(lo int) bool {
	d := &b.disk
	next, err := b.newLevel()
	if err != nil {
		d.fail(err)
		return false
	}
	for _, ref := range b.next {
		next.add(b.key(ref))
	}
	d.next = next
	cur, err := b.newLevel()
	if err != nil {
		d.fail(err)
		return false
	}
	var at int64 // where chunk lo starts in the file
	for i, ref := range b.cur {
		if i == lo*chunkStates {
			at = cur.size
		}
		cur.add(b.key(ref))
	}
	r, err := cur.finish(b.curStart, nil)
	if err != nil {
		remove(cur.f)
		d.fail(err)
		return false
	}
	r.stride = b.curStride
	r.seek(at, uint64(lo*chunkStates))
	d.cur, b.cur, b.next, b.front = r, nil, nil, arena{} // their memory goes
	if err := b.paths.toDisk(d.dir); err != nil {
		d.fail(err)
		return false
	}
	return true
}

// atBudget is what a search does when it meets its memory budget before
// a batch of n chunks from chunk lo: it sends the frontier to disk, then
// switches to hash compaction (CompactAtBudget), then lets the tables fill
// further (densify), then keeps full tables and adds smaller ones (layer),
// then stops. It returns
// StopComplete when the search can go on within the budget, else
// StopMemory, or StopError on a file error.
func (b *bfs) atBudget(lo, n int) string {
	if b.disk.next == nil {
		if !b.spill(lo) {
			return StopError
		}
		b.mem.collect()
		if b.mem.heap+b.batchGrowth(n) < b.opt.MaxMemory {
			return StopComplete
		}
	}
	if b.compactAtBudget(n) || b.densify(n) || b.layer(n) {
		return StopComplete
	}
	return StopMemory
}

// report puts into res what the disk did, and its error: the one that
// stopped the search, else the checkpoint not written as it ended.
func (d *disk) report(res *BFSResult) {
	res.SpilledBytes = d.spilled
	if d.savedDepth >= 0 {
		res.Checkpoint, res.CheckpointDepth = d.file, d.savedDepth
	}
	res.Resumed, res.ResumedDepth = d.resumed, d.resumedAt
	res.Err = d.err
	if res.Err == nil {
		res.Err = d.saveErr
	}
}
