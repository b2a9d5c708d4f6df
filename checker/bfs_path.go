package checker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// rebuild turns the stored path to the violating transition e into a run
// from the initial state whose last step violates an invariant in want,
// and returns it with those of want it violates. The stored path is
// over orbit representatives: it is replayed on them to recover their
// keys, then a concrete run is found that passes through the same orbits,
// taking at each step the first enabled action whose successor lies in
// the next orbit (and, at the last step, violates a stop invariant). The
// model's steps commute with renaming and with Normalize, so such an
// action always exists. It returns nil if the links on disk cannot be
// read (b.disk.err).
func (b *bfs) rebuild(e edge, want spec.Set) (*model.Run, spec.Set) {
	m := b.m
	canon := b.exps[0].canon
	acts := []uint16{e.act}
	for i := e.parent; i != 0; {
		p, a := b.paths.get(i)
		acts = append(acts, a)
		i = p
	}
	if err := b.paths.err; err != nil {
		b.disk.fail(err)
		return nil, 0
	}
	slices.Reverse(acts)

	// The representatives' keys, replayed from the initial state's.
	var buf []model.Action
	init := m.Init()
	var rep model.State
	canon.Canonical(&init, &rep)
	keys := make([][]byte, len(acts))
	for i, a := range acts {
		buf = m.Reduced(&rep, b.opt.Reduce, buf[:0])
		if int(a) >= len(buf) { // the links are not of this machine: a checkpoint of another one resumed
			b.disk.fail(b.replayError(i, a, len(buf)))
			return nil, 0
		}
		next := rep
		m.Next(&next, &buf[a])
		m.Normalize(&next, b.opt.Reduce)
		canon.Canonical(&next, &rep)
		keys[i] = m.Encode(&rep, nil)
	}

	run := model.NewRun(m)
	var key []byte
	for i := 0; i < len(acts); {
		last := i == len(acts)-1
		buf = m.Enabled(&run.State, buf[:0])
		found := false
		for _, a := range buf {
			t := run.State
			f := m.Next(&t, &a)
			cut := t
			m.Normalize(&cut, b.opt.Reduce)
			key, _ = canon.Key(&cut, key[:0])
			if !bytes.Equal(key, keys[i]) || last && spec.Judge(m, &run.State, f, &t)&want == 0 {
				continue
			}
			prev := run.State
			f = run.Do(a)
			if last {
				return run, spec.Judge(m, &prev, f, &run.State) & want
			}
			found = true
			break
		}
		if found {
			i++
			continue
		}
		// The stored state had its dead messages delivered
		// (ReduceDeadDelivered): take one such delivery, a step its normal
		// form does not see, which may free what the next step needs, and
		// try again; once all are taken, the step is there.
		if a, ok := unseenStep(m, b.opt.Reduce, &run.State, buf); ok {
			run.Do(a)
			continue
		}
		// The model's steps commute with renaming, and every step checks
		// that the design's decisions do (or the design is Asymmetric): a
		// decision answered otherwise on the same inputs.
		cause := fmt.Sprintf("the counterexample's step %d could not be taken again through the search's orbits: "+
			"a decision of the design answered otherwise on the same inputs (decisions must be pure functions of "+
			"what they are given)", i+1)
		if b.disk.resumed != "" {
			cause += "; or the checkpoint resumed, " + b.disk.resumed + ", is of another design"
		}
		b.fault = &Fault{Cause: cause}
		return nil, 0
	}
	panic("checker: empty counterexample")
}

// replayError is the error of a stored path whose step i takes action a
// of a state with n enabled: a *CheckpointError naming the checkpoint the
// search resumed from, which can only be of another machine (another
// program or design made it), or, with none, an error of the links.
func (b *bfs) replayError(i int, a uint16, n int) error {
	msg := fmt.Sprintf("the path to a violation takes, at step %d, action %d of a state with %d enabled", i+1, a, n)
	if f := b.disk.resumed; f != "" {
		return &CheckpointError{File: f, Field: "model", Msg: msg + ": the checkpoint resumed is not of this model (another program or design made it)"}
	}
	return fmt.Errorf("parent links: %s", msg)
}

// unseenStep returns, of the deliveries enabled in s, the first whose
// successor has the normal form of s (under reductions r), if any: each
// takes a message out of the network, so a run takes finitely many.
func unseenStep(m *model.Machine, r model.Reduction, s *model.State, enabled []model.Action) (model.Action, bool) {
	norm := *s
	m.Normalize(&norm, r)
	for _, a := range enabled {
		if a.Kind != model.Deliver {
			continue
		}
		t := *s
		if f := m.Next(&t, &a); f.Kind != model.NoFact {
			continue
		}
		if m.Normalize(&t, r); t == norm {
			return a, true
		}
	}
	return model.Action{}, false
}

// pathChunk is how many parent links one block of a pathStore holds.
const pathChunk = 1 << 16

// linkBlock is the bytes of a block of links on disk: its parents
// (uint32), then its actions (uint16), little-endian.
const linkBlock = pathChunk * 6

// pathStore holds, for each state in discovery order, its parent's index
// and the index of the action in Enabled(parent) that reached it: 6 bytes
// a state, in blocks, so that growing never copies. Once the search keeps
// its levels on disk, so are the links (toDisk): every full block is
// written to a file and leaves memory, and the few links a counterexample
// needs are read back.
type pathStore struct {
	parent [][]uint32 // nil: the block is on disk
	act    [][]uint16
	n      int
	file   *os.File // the blocks on disk, at linkBlock times their index
	err    error    // the first error writing or reading it
	buf    []byte   // a block's bytes, to write
}

// add appends a state's link.
func (p *pathStore) add(parent uint32, act uint16) {
	if p.n%pathChunk == 0 {
		var par []uint32
		var acts []uint16
		if c := p.n/pathChunk - 1; p.file != nil && c >= 0 && p.parent[c] != nil { // the block just filled goes to disk
			p.write(c)
			par, acts = p.parent[c], p.act[c] // and its memory takes the next block
			p.parent[c], p.act[c] = nil, nil
		} else {
			par, acts = make([]uint32, pathChunk), make([]uint16, pathChunk)
		}
		p.parent, p.act = append(p.parent, par), append(p.act, acts)
	}
	p.parent[p.n/pathChunk][p.n%pathChunk] = parent
	p.act[p.n/pathChunk][p.n%pathChunk] = act
	p.n++
}

// get returns the link of state i (zero, with p.err set, if reading it
// failed).
func (p *pathStore) get(i uint32) (uint32, uint16) {
	c, j := i/pathChunk, i%pathChunk
	if p.parent[c] != nil {
		return p.parent[c][j], p.act[c][j]
	}
	var buf [6]byte
	at := int64(c) * linkBlock
	p.read(buf[:4], at+int64(j)*4)
	p.read(buf[4:], at+pathChunk*4+int64(j)*2)
	return binary.LittleEndian.Uint32(buf[:]), binary.LittleEndian.Uint16(buf[4:])
}

// appendBlock appends the first n links of block c encoded as the file
// and a checkpoint hold them: the parents (uint32), then the actions
// (uint16), little-endian. A block on disk is read back (p.err is set if
// that failed).
func (p *pathStore) appendBlock(dst []byte, c, n int) []byte {
	if p.parent[c] == nil {
		at := len(dst)
		dst = slices.Grow(dst, 6*n)[:at+6*n]
		p.read(dst[at:at+4*n], int64(c)*linkBlock)
		p.read(dst[at+4*n:], int64(c)*linkBlock+4*pathChunk)
		return dst
	}
	for _, v := range p.parent[c][:n] {
		dst = binary.LittleEndian.AppendUint32(dst, v)
	}
	for _, v := range p.act[c][:n] {
		dst = binary.LittleEndian.AppendUint16(dst, v)
	}
	return dst
}

// toDisk sends the links to a new file in dir: the full blocks now, each
// later one as it fills.
func (p *pathStore) toDisk(dir string) error {
	if p.file != nil {
		return nil
	}
	f, err := os.CreateTemp(dir, "bfs-links-*.spill")
	if err != nil {
		return err
	}
	p.file = f
	for c := range p.n / pathChunk {
		if p.parent[c] != nil {
			p.write(c)
			p.parent[c], p.act[c] = nil, nil
		}
	}
	return p.err
}

// write writes block c to the file.
func (p *pathStore) write(c int) {
	p.buf = p.appendBlock(p.buf[:0], c, pathChunk)
	if _, err := p.file.WriteAt(p.buf, int64(c)*linkBlock); err != nil && p.err == nil {
		p.err = fmt.Errorf("parent links file %s: %w", p.file.Name(), err)
	}
}

// read fills buf from the file at off.
func (p *pathStore) read(buf []byte, off int64) {
	if _, err := p.file.ReadAt(buf, off); err != nil && p.err == nil {
		p.err = fmt.Errorf("parent links file %s: %w", p.file.Name(), err)
	}
}

// close deletes the file.
func (p *pathStore) close() {
	if p.file != nil {
		remove(p.file)
		p.file = nil
	}
}

// bytes is the memory of the links: the blocks not on disk.
func (p *pathStore) bytes() uint64 {
	var n uint64
	for _, b := range p.parent {
		if b != nil {
			n += pathChunk * 6
		}
	}
	return n
}
