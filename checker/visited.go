package checker

import (
	"bytes"
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// hashKey is a fixed 64-bit hash of a state's canonical bytes (XXH3,
// whose output the algorithm fixes): the same on every run and machine,
// so that hash compaction omits the same states every time.
func hashKey(b []byte) uint64 { return xxh3.Hash(b) }

// arenaChunkBits sizes the arena's chunks: keys never straddle two.
const arenaChunkBits = 20

// arena is an append-only store of length-prefixed keys, addressed by
// offset, in chunks so that growing it never copies and a prefix of it
// can be released.
type arena struct {
	chunks [][]byte
	free   [][]byte // released chunks, for reuse
	size   uint64   // offset of the next key
	held   uint64   // bytes in chunks not released
}

// add appends key and returns its offset.
func (a *arena) add(key []byte) uint64 {
	off := a.reserve(len(key))
	a.put(off, key)
	return off
}

// reserve makes room for a key of n bytes and returns its offset, for put.
func (a *arena) reserve(n int) uint64 {
	const chunk = 1 << arenaChunkBits
	need := uint64(n + 2)
	if pos := a.size & (chunk - 1); pos+need > chunk {
		a.size = (a.size>>arenaChunkBits + 1) << arenaChunkBits // to the next chunk
	}
	if a.size>>arenaChunkBits == uint64(len(a.chunks)) {
		var c []byte
		if n := len(a.free); n > 0 {
			c, a.free = a.free[n-1], a.free[:n-1]
		} else {
			c = make([]byte, chunk)
		}
		a.chunks = append(a.chunks, c)
		a.held += chunk
	}
	off := a.size
	a.size += need
	return off
}

// put writes key at off, reserved for it. Goroutines may put keys
// together, each at its own offsets.
func (a *arena) put(off uint64, key []byte) {
	c := a.chunks[off>>arenaChunkBits]
	pos := off & (1<<arenaChunkBits - 1)
	binary.LittleEndian.PutUint16(c[pos:], uint16(len(key)))
	copy(c[pos+2:], key)
}

// key returns the key at off; it aliases the arena.
func (a *arena) key(off uint64) []byte {
	c := a.chunks[off>>arenaChunkBits]
	pos := off & (1<<arenaChunkBits - 1)
	n := uint64(binary.LittleEndian.Uint16(c[pos:]))
	return c[pos+2 : pos+2+n]
}

// release frees every chunk that holds only keys before off, for reuse.
func (a *arena) release(off uint64) {
	for i := range off >> arenaChunkBits {
		if a.chunks[i] != nil {
			a.free = append(a.free, a.chunks[i])
			a.chunks[i] = nil
			a.held -= 1 << arenaChunkBits
		}
	}
}

// visited is the set of states seen, an open-addressing table with linear
// probing whose home slot for hash h is h's top bits. In exact mode an
// entry is h's top 28 bits (the tag) and the arena offset of the full key
// (+1, so that 0 is empty); in hash-compact mode it is h itself (0 mapped
// to 1), and the keys are not kept. Either way an entry holds its home
// slot's bits, so the table grows without reading keys (exact mode: up to
// 2^28 slots).
type visited struct {
	compact bool
	table   []uint64
	shift   uint // 64 - log2(len(table))
	n       uint64
	keys    *arena // exact mode
}

const (
	offBits = 36 // a 64 GiB key arena
	offMask = 1<<offBits - 1
	tagBits = 64 - offBits
)

func newVisited(compact bool, keys *arena) *visited {
	const bits = 12
	return &visited{compact: compact, table: make([]uint64, 1<<bits), shift: 64 - bits, keys: keys}
}

// entryHash is what an entry keeps of its key's hash: all of it in
// hash-compact mode, its tag (in the top bits) in exact mode.
func (v *visited) entryHash(h uint64) uint64 {
	if v.compact {
		if h == 0 {
			return 1
		}
		return h
	}
	return h &^ (1<<offBits - 1)
}

// home returns the entry in the home slot of hash h.
func (v *visited) home(h uint64) uint64 { return v.table[v.entryHash(h)>>v.shift] }

// touch reads the first byte of the key of entry e if e may be hash h's
// (exact mode), so that comparing the keys finds it in cache.
func (v *visited) touch(e, h uint64) byte {
	if v.compact || e == 0 || e&^offMask != v.entryHash(h) {
		return 0
	}
	off := e&offMask - 1
	return v.keys.chunks[off>>arenaChunkBits][off&(1<<arenaChunkBits-1)]
}

// find returns the slot of the key with hash h, or the empty slot where
// it belongs.
func (v *visited) find(key []byte, h uint64) (uint64, bool) {
	mask := uint64(len(v.table) - 1)
	eh := v.entryHash(h)
	for i := eh >> v.shift; ; i = (i + 1) & mask {
		e := v.table[i]
		switch {
		case e == 0:
			return i, false
		case v.compact:
			if e == eh {
				return i, true
			}
		case e&^offMask == eh && bytes.Equal(v.keys.key(e&offMask-1), key):
			return i, true
		}
	}
}

// insert adds the key with hash h unless it is there, and reports whether
// it was added. In exact mode, it stores the key in the arena.
func (v *visited) insert(key []byte, h uint64) bool {
	_, added := v.store(key, h)
	return added
}

// store is insert that also returns, in exact mode, the key's offset in
// the arena when it was added.
func (v *visited) store(key []byte, h uint64) (uint64, bool) {
	if (v.n+1)*4 > uint64(len(v.table))*3 {
		v.grow()
	}
	i, found := v.find(key, h)
	if found {
		return 0, false
	}
	e := v.entryHash(h)
	var off uint64
	if !v.compact {
		off = v.keys.add(key)
		if off >= offMask {
			panic("checker: key arena beyond 64 GiB")
		}
		e |= off + 1
	}
	v.table[i] = e
	v.n++
	return off, true
}

// grow doubles the table.
func (v *visited) grow() {
	old := v.table
	v.table = make([]uint64, 2*len(old))
	v.shift--
	mask := uint64(len(v.table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		h := e
		if !v.compact && v.shift < offBits { // the tag no longer holds the home slot
			h = hashKey(v.keys.key(e&offMask - 1))
		}
		i := h >> v.shift
		for v.table[i] != 0 {
			i = (i + 1) & mask
		}
		v.table[i] = e
	}
}

// bytes is the table's size.
func (v *visited) bytes() uint64 { return uint64(len(v.table)) * 8 }

// setParts is how many independent tables a stateSet is split into, by the
// hash's low bits: a fixed number, so that no result depends on the
// number of goroutines.
const setParts = 16

// stateSet is the visited set, split into parts that goroutines can insert
// into at the same time, each with its own key arena (exact mode).
type stateSet struct {
	parts  [setParts]*visited
	arenas [setParts]arena
}

func newStateSet(compact bool) *stateSet {
	s := &stateSet{}
	for i := range s.parts {
		s.parts[i] = newVisited(compact, &s.arenas[i])
	}
	return s
}

// part is the index of the part that holds hash h.
func part(h uint64) int { return int(h & (setParts - 1)) }

// home and touch are the parts' (see visited.home and visited.touch):
// loads that warm the cache for a lookup of hash h.
func (s *stateSet) home(h uint64) uint64 { return s.parts[part(h)].home(h) }

func (s *stateSet) touch(e, h uint64) byte { return s.parts[part(h)].touch(e, h) }

// insert adds a key to its part; only one goroutine at a time may insert
// into a part.
func (s *stateSet) insert(key []byte, h uint64) bool { return s.parts[part(h)].insert(key, h) }

// has reports whether the key with hash h is in the set. Goroutines may
// look keys up together while none inserts.
func (s *stateSet) has(key []byte, h uint64) bool {
	_, ok := s.parts[part(h)].find(key, h)
	return ok
}

// store is insert that also returns, in exact mode, a reference to the key
// stored (see key) when it was added.
func (s *stateSet) store(key []byte, h uint64) (uint64, bool) {
	p := part(h)
	off, added := s.parts[p].store(key, h)
	return uint64(p)<<offBits | off, added
}

// key returns the key of a reference from store (exact mode, until
// compact).
func (s *stateSet) key(ref uint64) []byte { return s.arenas[ref>>offBits].key(ref & offMask) }

// len is the number of keys.
func (s *stateSet) len() uint64 {
	var n uint64
	for _, p := range s.parts {
		n += p.n
	}
	return n
}

// bytes is the memory of the tables and of the keys.
func (s *stateSet) bytes() uint64 {
	var n uint64
	for i, p := range s.parts {
		n += p.bytes() + s.arenas[i].held
	}
	return n
}

// compact turns an exact set into a hash-compact one: each key's hash
// stays, the keys and their arenas go.
func (s *stateSet) compact() {
	for i, p := range s.parts {
		c := compactVisited(p.n)
		for _, e := range p.table {
			if e != 0 {
				c.insert(nil, hashKey(p.keys.key(e&offMask-1)))
			}
		}
		s.parts[i], s.arenas[i] = c, arena{}
	}
}

// compactVisited returns an empty hash-compact table of the size n entries
// grow one to. Entries taken in table order come sorted by home slot:
// inserted into a smaller table, they would pile up in its first slots,
// each insertion probing past all those before it.
func compactVisited(n uint64) *visited {
	bits := uint(12)
	for n*4 > uint64(3)<<bits {
		bits++
	}
	return &visited{compact: true, table: make([]uint64, 1<<bits), shift: 64 - bits}
}
