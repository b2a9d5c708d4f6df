package checker

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// hash is a state's 128-bit hash (XXH3 of its canonical bytes, whose
// output the algorithm fixes): the same on every run and machine, so that
// hash compaction omits the same states every time. Its low word picks
// the part of the visited set (its low bits) and the home slot (its top
// bits); hash compaction keeps more of it (see visited).
type hash = xxh3.Uint128

// hashKey is the hash of a state's canonical bytes.
func hashKey(b []byte) hash { return xxh3.Hash128(b) }

// arenaChunkBits sizes the arena's chunks: keys never straddle two.
const arenaChunkBits = 20

// slabChunks is how many chunks an arena allocates at once once it holds
// that many: a slab of 4 MiB, which holds a whole huge page at least (see
// adviseHuge), while a small search's arenas stay small.
const slabChunks = 4

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
		if len(a.free) == 0 {
			a.refill()
		}
		n := len(a.free)
		a.chunks = append(a.chunks, a.free[n-1])
		a.free = a.free[:n-1]
		a.held += chunk
	}
	off := a.size
	a.size += need
	return off
}

// refill puts new chunks on the free list, the one to use first last:
// one chunk, or a slab of slabChunks once the arena holds that many.
func (a *arena) refill() {
	const chunk = 1 << arenaChunkBits
	if len(a.chunks) < slabChunks {
		a.free = append(a.free, make([]byte, chunk))
		return
	}
	slab := hugeBytes(slabChunks * chunk)
	for i := slabChunks - 1; i >= 0; i-- {
		a.free = append(a.free, slab[i*chunk:(i+1)*chunk:(i+1)*chunk])
	}
}

// nextAlloc is what the arena allocates when it next needs a chunk.
func (a *arena) nextAlloc() uint64 {
	switch {
	case len(a.free) > 0:
		return 0
	case len(a.chunks) < slabChunks:
		return 1 << arenaChunkBits
	}
	return slabChunks << arenaChunkBits
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
// probing whose home slot for hash h is the top bits of h.Lo.
//
// In exact mode an entry is h.Lo's top 28 bits (the tag) and the arena
// offset of the full key (+1, so that 0 is empty); the table grows without
// reading keys up to 2^28 slots, and rereads them beyond.
//
// In hash-compact mode the keys are not kept, and an entry is a quotient
// of the hash: its distance from its home slot (dispBits) and a field of
// the hash bits that follow the home slot's, remBits of them when the
// entry is stored, left-aligned and followed by a marker bit. The home
// slot's bits are not stored, so an entry keeps home + remBits bits of
// the hash (and the part's bits): a lookup can wrongly match only an
// entry of the same part and home slot, and that only with probability
// 2^-(the field's bits) (see matchMass). Doubling the table takes each
// entry's next home bit from its field, which then keeps one bit less:
// what an entry keeps of its hash stays as it was stored.
type visited struct {
	compact bool
	table   []uint64
	shift   uint // 64 - log2(len(table))
	n       uint64
	keys    *arena // exact mode

	// Hash-compact mode. mass is the sum over the entries, of table and
	// of the older tables, of 2^-b, b the bits of its hash an entry keeps
	// beyond the part's: the expected number of entries that a lookup of
	// a state not stored matches.
	// unit is what an entry stored now adds to it. looked is the sum,
	// over the lookups that stored a state, of mass before each. far is
	// how far from its home slot an entry may lie (1<<dispBits; less in
	// tests).
	mass, unit, looked float64
	far                uint64

	// dense lets the table fill to 7/8 of its slots before it doubles,
	// instead of 3/4: a search at its memory budget sets it for the rest
	// of the search (see bfs.densify).
	dense bool

	// Layers (hash-compact mode; see bfs.layer). older are the tables the
	// part filled before table, frozen: a lookup reads them too, oldest
	// first, and mass counts their entries. layer, when not 0, is log2 of
	// the size of the table that follows table when it is full, instead
	// of doubling it, while the part holds fewer than maxLayers tables.
	older []*visited
	layer uint
}

// maxLayers is the most tables a part of the visited set holds (see
// visited.older): each is one more probe for every lookup.
const maxLayers = 8

const (
	offBits = 36 // a 64 GiB key arena
	offMask = 1<<offBits - 1

	dispBits  = 12 // an entry's distance from its home slot (hash-compact mode)
	fieldBits = 64 - dispBits
	fieldMask = 1<<fieldBits - 1
	remBits   = fieldBits - 1 // the hash bits a field keeps when stored; then the marker
)

// newVisited returns an empty table (keys: exact mode's arena, or nil).
func newVisited(compact bool, keys *arena) *visited {
	return newTable(compact, minTableBits, keys)
}

// minTableBits is log2 of the size of the smallest table: a new one's.
const minTableBits = 12

// newTable returns an empty table of 2^k slots.
func newTable(compact bool, k uint, keys *arena) *visited {
	v := &visited{compact: compact, table: hugeWords(1 << k), shift: 64 - k, keys: keys, far: 1 << dispBits}
	v.unit = math.Ldexp(1, -int(k+remBits))
	return v
}

// tag is what an entry keeps of hash h in exact mode, in its top bits.
func tag(h hash) uint64 { return h.Lo &^ offMask }

// remainder is the remBits bits of h that follow the home slot's, in the
// string of h.Lo's bits but the part's (the low ones), then h.Hi's.
func (v *visited) remainder(h hash) uint64 {
	k := 64 - v.shift // the home slot's bits
	hi, lo := h.Lo&^(setParts-1)|h.Hi>>60, h.Hi<<4
	return (hi<<k | lo>>v.shift) >> (64 - remBits)
}

// fieldMatches reports whether field f, in an entry of the home slot, keeps
// the same bits as rem, a remainder at the table's size.
func fieldMatches(f, rem uint64) bool {
	tz := uint(bits.TrailingZeros64(f)) // the marker's: remBits - the bits f keeps
	return f>>(tz+1) == rem>>tz
}

// home returns the entry in the home slot of hash h.
func (v *visited) home(h hash) uint64 { return v.table[h.Lo>>v.shift] }

// olderHomes returns the entries in the home slots of hash h in the older
// tables (layers), folded together: the loads of a lookup's first probes
// there, which locate makes before the newest table's.
func (v *visited) olderHomes(h hash) (x uint64) {
	for _, o := range v.older {
		x ^= o.table[h.Lo>>o.shift]
	}
	return x
}

// touch reads the first byte of the key of entry e if e may be hash h's
// (exact mode), so that comparing the keys finds it in cache.
func (v *visited) touch(e uint64, h hash) byte {
	if v.compact || e == 0 || e&^offMask != tag(h) {
		return 0
	}
	off := e&offMask - 1
	return v.keys.chunks[off>>arenaChunkBits][off&(1<<arenaChunkBits-1)]
}

// find returns the slot of the key with hash h, or the empty slot where
// it belongs. A key found in an older table has no slot in table: its
// slot is 0.
func (v *visited) find(key []byte, h hash) (uint64, bool) {
	t, slot, ok := v.locate(key, h)
	if t < len(v.older) {
		slot = 0
	}
	return slot, ok
}

// locate returns the table (an index in older, or len(older) for table)
// and the slot of the key with hash h: where it is, or the empty slot of
// table where it belongs.
func (v *visited) locate(key []byte, h hash) (int, uint64, bool) {
	for i, o := range v.older {
		if slot, ok := o.probe(key, h); ok {
			return i, slot, true
		}
	}
	slot, ok := v.probe(key, h)
	return len(v.older), slot, ok
}

// probe looks for the key with hash h in table alone, as find does.
func (v *visited) probe(key []byte, h hash) (uint64, bool) {
	mask := uint64(len(v.table) - 1)
	home := h.Lo >> v.shift
	if v.compact {
		rem := v.remainder(h)
		for i := home; ; i = (i + 1) & mask {
			e := v.table[i]
			if e == 0 {
				return i, false
			}
			if (i-e>>fieldBits)&mask == home && fieldMatches(e&fieldMask, rem) {
				return i, true
			}
		}
	}
	t := tag(h)
	for i := home; ; i = (i + 1) & mask {
		e := v.table[i]
		if e == 0 {
			return i, false
		}
		if e&^offMask == t && bytes.Equal(v.keys.key(e&offMask-1), key) {
			return i, true
		}
	}
}

// insert adds the key with hash h unless it is there, and reports whether
// it was added. In exact mode, it stores the key in the arena.
func (v *visited) insert(key []byte, h hash) bool {
	_, added := v.store(key, h)
	return added
}

// store is insert that also returns, in exact mode, the key's offset in
// the arena when it was added.
func (v *visited) store(key []byte, h hash) (uint64, bool) {
	if v.outgrows(v.n + 1) {
		v.grow()
	}
	i, found := v.find(key, h)
	if found {
		return 0, false
	}
	if v.compact {
		v.looked += v.mass
		v.put(h.Lo>>v.shift, v.remainder(h)<<1|1, 64-v.shift)
		return 0, true
	}
	off := v.keys.add(key)
	if off >= offMask {
		panic("checker: key arena beyond 64 GiB")
	}
	v.table[i] = tag(h) | (off + 1)
	v.n++
	return off, true
}

// put adds a hash-compact entry, of home slot home and field f in a
// table of 2^k slots (no more than v's), without looking for it: to the
// first empty slot from its home on, the table grown first while that
// lies too far (v.far) from its home.
func (v *visited) put(home, f uint64, k uint) {
	for {
		for ; k > 64-v.shift; k-- { // a smaller layer, after grow
			home, f = lower(home, f)
		}
		if by := 64 - v.shift - k; by > 0 {
			home, f = rehome(home, f, by)
			k += by
		}
		if v.place(home, f) {
			break
		}
		v.grow()
	}
	v.n++
	v.mass += math.Ldexp(v.unit, bits.TrailingZeros64(f)) // the bits f no longer keeps
}

// place puts a hash-compact entry in the first empty slot from home on,
// unless that lies too far from home.
func (v *visited) place(home, f uint64) bool {
	mask := uint64(len(v.table) - 1)
	for d := range v.far {
		if i := (home + d) & mask; v.table[i] == 0 {
			v.table[i] = d<<fieldBits | f
			return true
		}
	}
	return false
}

// rehome returns the home slot and field, in a table 2^by times as
// large, of a hash-compact entry of home slot home and field f: the
// field's first by bits move to the home slot's.
func rehome(home, f uint64, by uint) (uint64, uint64) {
	if bits.TrailingZeros64(f) > remBits-int(by) {
		panic("checker: a hash-compact entry has no bits left for a larger table") // 2^remBits times its size when stored
	}
	return home<<by | f>>(fieldBits-by), f << by & fieldMask
}

// outgrows reports whether n entries are more than the table holds before
// it doubles: 3/4 of its slots, or 7/8 when dense.
func (v *visited) outgrows(n uint64) bool { return outgrows(n, 64-v.shift, v.dense) }

// outgrows reports whether n entries are more than a table of 2^k slots
// holds before it doubles, a dense one if dense.
func outgrows(n uint64, k uint, dense bool) bool {
	num, den := fill(dense)
	return n*den > num<<k
}

// fill is the share of its slots, num/den, that a table fills before it
// doubles: 3/4, or 7/8 when dense. Linear probing past an empty slot then
// reads 8.5 slots on average, or 32.5.
func fill(dense bool) (num, den uint64) {
	if dense {
		return 7, 8
	}
	return 3, 4
}

// grow doubles the table, or starts the next layer (see visited.layer).
func (v *visited) grow() {
	if k := v.growBits(); k != 64-v.shift+1 {
		v.addLayer(k)
		return
	}
	if v.compact {
		old := v.table
		for by := uint(1); !v.rebuild(old, by); by++ {
		}
		return
	}
	old := v.table
	v.table = hugeWords(2 * len(old))
	v.shift--
	mask := uint64(len(v.table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		h := hash{Lo: e}
		if v.shift < offBits { // the tag no longer holds the home slot
			h = hashKey(v.keys.key(e&offMask - 1))
		}
		i := h.Lo >> v.shift
		for v.table[i] != 0 {
			i = (i + 1) & mask
		}
		v.table[i] = e
	}
}

// rebuild puts the hash-compact entries of table old into a new table
// 2^by times as large, and reports whether each found a slot near enough
// to its home (if not, v is left to be rebuilt again).
func (v *visited) rebuild(old []uint64, by uint) bool {
	k := 64 - v.shift + by // the new table's home slot bits
	v.table = hugeWords(len(old) << by)
	v.shift = 64 - k
	v.unit = math.Ldexp(1, -int(k+remBits))
	oldMask := uint64(len(old) - 1)
	for j, e := range old {
		if e == 0 {
			continue
		}
		if !v.place(rehome((uint64(j)-e>>fieldBits)&oldMask, e&fieldMask, by)) {
			v.shift += by // as it was, for the next try
			return false
		}
	}
	return true
}

// addLayer keeps the table, frozen, and starts an empty one of 2^k slots
// (see visited.layer).
func (v *visited) addLayer(k uint) {
	v.older = append(v.older, &visited{compact: true, table: v.table, shift: v.shift, n: v.n, far: v.far, dense: v.dense})
	v.table, v.shift, v.n = hugeWords(1<<k), 64-k, 0
	v.unit = math.Ldexp(1, -int(k+remBits))
}

// growBits is log2 of the size of the table grow allocates: the next
// layer's, or twice table's.
func (v *visited) growBits() uint {
	if v.layer != 0 && len(v.older)+1 < maxLayers {
		return v.layer
	}
	return 64 - v.shift + 1
}

// bytes is the size of the part's tables.
func (v *visited) bytes() uint64 {
	n := uint64(len(v.table))
	for _, o := range v.older {
		n += uint64(len(o.table))
	}
	return n * 8
}

// len is the number of entries in the part's tables.
func (v *visited) len() uint64 {
	n := v.n
	for _, o := range v.older {
		n += o.n
	}
	return n
}

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

// setDense makes every part's table dense, or none (see visited.dense):
// a search's tables are all dense or none.
func (s *stateSet) setDense(d bool) {
	for _, p := range s.parts {
		p.dense = d
	}
}

// dense reports whether the tables are dense.
func (s *stateSet) dense() bool { return s.parts[0].dense }

// part is the index of the part that holds hash h.
func part(h hash) int { return int(h.Lo & (setParts - 1)) }

// touch is the part's (see visited.touch): a load that warms the cache for
// a lookup of hash h.
func (s *stateSet) touch(e uint64, h hash) byte { return s.parts[part(h)].touch(e, h) }

// insert adds a key to its part; only one goroutine at a time may insert
// into a part.
func (s *stateSet) insert(key []byte, h hash) bool { return s.parts[part(h)].insert(key, h) }

// has reports whether the key with hash h is in the set. Goroutines may
// look keys up together while none inserts.
func (s *stateSet) has(key []byte, h hash) bool {
	_, ok := s.parts[part(h)].find(key, h)
	return ok
}

// store is insert that also returns, in exact mode, a reference to the key
// stored (see key) when it was added.
func (s *stateSet) store(key []byte, h hash) (uint64, bool) {
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
		n += p.len()
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

// matchMass is the expected number of stored states that a lookup of a
// state not stored matches by hash compaction: the lookup is in one of
// the parts, each as likely (0 in exact mode).
func (s *stateSet) matchMass() float64 {
	var m float64
	for _, p := range s.parts {
		m += p.mass
	}
	return m / setParts
}

// takeLooked returns the sum, over the lookups that stored a state in
// hash-compact mode since it was last called, of the expected number of
// states each matched (visited.looked), and starts it again. It adds the
// parts' sums in their order, so that a search resumed from a checkpoint
// adds the numbers the uninterrupted one did.
func (s *stateSet) takeLooked() float64 {
	var l float64
	for _, p := range s.parts {
		l += p.looked
		p.looked = 0
	}
	return l
}

// compact turns an exact set into a hash-compact one: each key's hash
// stays, the keys and their arenas go.
func (s *stateSet) compact() {
	for i := range s.parts {
		s.compactPart(i)
	}
}

// compactPart turns part i of an exact set into a hash-compact table.
func (s *stateSet) compactPart(i int) {
	p := s.parts[i]
	c := compactVisited(p.n)
	for _, e := range p.table {
		if e != 0 {
			h := hashKey(p.keys.key(e&offMask - 1))
			c.put(h.Lo>>c.shift, c.remainder(h)<<1|1, 64-c.shift)
		}
	}
	s.parts[i], s.arenas[i] = c, arena{}
}

// compactVisited returns an empty hash-compact table of the size n entries
// grow one to. Entries taken in table order come sorted by home slot:
// inserted into a smaller table, they would pile up in its first slots,
// each insertion probing past all those before it.
func compactVisited(n uint64) *visited { return newTable(true, compactBits(n, false), nil) }

// compactBits is log2 of the size of the table n entries grow one to, a
// dense one if dense.
func compactBits(n uint64, dense bool) uint {
	k := uint(minTableBits)
	for outgrows(n, k, dense) {
		k++
	}
	return k
}

// lower returns the home slot and field, in a table half as large, of a
// hash-compact entry of home slot home and field f: the home slot's last
// bit moves to the front of the field, whose last bit drops off if it has
// no room (the entry then keeps one bit of its hash less).
func lower(home, f uint64) (uint64, uint64) {
	tz := uint(bits.TrailingZeros64(f))
	r := remBits - tz // the bits f keeps
	kept := (home&1)<<r | f>>(tz+1)
	if r++; r > remBits {
		kept >>= 1
		r = remBits
	}
	return home >> 1, kept<<(fieldBits-r) | 1<<(remBits-r)
}

// entries calls f with the slot, home slot and field of each entry of a
// hash-compact table.
func (v *visited) entries(f func(slot, home, field uint64)) {
	mask := uint64(len(v.table) - 1)
	for j, e := range v.table {
		if e != 0 {
			f(uint64(j), (uint64(j)-e>>fieldBits)&mask, e&fieldMask)
		}
	}
}
