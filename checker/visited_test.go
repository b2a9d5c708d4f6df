package checker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// BenchmarkCompact turns an exact set of n states hash-compact (the switch
// at the memory budget): linear in n. Inserting the hashes in table order,
// sorted by home slot, into a table that grows from its smallest size
// piled them up in its first slots and made it quadratic (1M states: 5.4 s
// before, 0.17 s after, on 2 busy cores).
func BenchmarkCompact(b *testing.B) {
	for _, n := range []int{250_000, 1_000_000} {
		keys := benchKeys(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := newStateSet(false)
				for _, k := range keys {
					s.insert(k, hashKey(k))
				}
				b.StartTimer()
				s.compact()
			}
			b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
		})
	}
}

// TestVisitedAgainstMap: in both modes the visited set answers as a map
// of the keys does, through every growth of its tables: each key is added
// once, and every key added, and no other, is found after.
func TestVisitedAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, 300_000)
	for i := range keys {
		k := make([]byte, 8+rng.IntN(24))
		for j := range k {
			k[j] = byte(rng.IntN(4)) // few values: many keys repeat
		}
		binary.LittleEndian.PutUint32(k, uint32(rng.IntN(len(keys)/2)))
		keys[i] = k
	}
	for _, compact := range []bool{false, true} {
		s, seen := newStateSet(compact), map[string]bool{}
		for i, k := range keys[:len(keys)/2] {
			if added := s.insert(k, hashKey(k)); added == seen[string(k)] {
				t.Fatalf("compact %v: key %d added %v, seen before %v", compact, i, added, seen[string(k)])
			}
			seen[string(k)] = true
		}
		if s.len() != uint64(len(seen)) {
			t.Fatalf("compact %v: %d stored, %d distinct keys", compact, s.len(), len(seen))
		}
		for i, k := range keys {
			if got := s.has(k, hashKey(k)); got != seen[string(k)] {
				t.Fatalf("compact %v: key %d found %v, stored %v", compact, i, got, seen[string(k)])
			}
		}
		var grown int
		for _, p := range s.parts {
			grown = max(grown, len(p.table))
		}
		t.Logf("compact %v: %d distinct keys, tables up to %d slots", compact, len(seen), grown)
	}
}

// found reports whether a hash-compact table matches hash h.
func found(v *visited, h hash) bool {
	_, ok := v.find(nil, h)
	return ok
}

// sBit is bit i of the string of a hash's bits that a hash-compact table
// keeps: h.Lo's from the top down to the part's, then h.Hi's.
func sBit(h hash, i int) uint64 {
	if i < 60 {
		return h.Lo >> (63 - i) & 1
	}
	return h.Hi >> (63 - (i - 60)) & 1
}

// flip is h with bit i of that string flipped.
func flip(h hash, i int) hash {
	if i < 60 {
		h.Lo ^= 1 << (63 - i)
	} else {
		h.Hi ^= 1 << (63 - (i - 60))
	}
	return h
}

// keptEntry is a hash stored in a hash-compact table and how many bits of
// the string (sBit) its entry keeps: the home slot's when stored, and
// remBits more.
type keptEntry struct {
	h    hash
	bits int
}

// matchesKept reports whether h agrees with e's hash on the bits e keeps.
// Every entry keeps its home slot's bits, more than the 8 that are
// compared first, at once, for speed: the brute force compares each
// lookup with every entry stored.
func matchesKept(h hash, e keptEntry) bool {
	if e.bits < 8 {
		panic("an entry keeps fewer than 8 bits")
	}
	if (h.Lo^e.h.Lo)>>56 != 0 {
		return false
	}
	for i := range e.bits {
		if sBit(h, i) != sBit(e.h, i) {
			return false
		}
	}
	return true
}

// TestCompactKeepsItsBits checks hash compaction against brute force: a
// lookup matches exactly the entries whose hash agrees with its own on
// the bits each keeps (its home slot's when stored, and remBits more),
// through the table's doublings; mass is the sum of 2^-(those bits), and
// looked the sum of mass before each state stored. The hashes looked up
// are stored ones with one bit flipped near the last bit they keep.
func TestCompactKeepsItsBits(t *testing.T) {
	for _, layered := range []bool{false, true} {
		compactKeepsItsBits(t, layered)
	}
}

// compactKeepsItsBits is TestCompactKeepsItsBits, with layers if layered:
// from round 20 the table is dense and is followed, when full, by tables
// a quarter its size, then from round 30 by tables an eighth of it, until the
// part holds maxLayers tables and the last doubles; 40 rounds, not 60.
func compactKeepsItsBits(t *testing.T, layered bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	v := newVisited(true, nil)
	var stored []keptEntry
	var mass, looked float64
	random := func() hash { return hash{Lo: rng.Uint64() &^ (setParts - 1), Hi: rng.Uint64()} } // one part
	var hits, misses int
	rounds := 60
	if layered {
		rounds = 40
	}
	for round := range rounds {
		if layered && round == 20 {
			v.dense, v.layer = true, 64-v.shift-2
		}
		if layered && round == 30 {
			v.layer--
		}
		for range 1000 << (round / 10) { // the table doubles every few rounds
			h := random()
			looked += mass
			if !v.insert(nil, h) {
				t.Fatalf("layered %v: a random hash was found in a table of %d", layered, v.n)
			}
			stored = append(stored, keptEntry{h, 64 - int(v.shift) + remBits})
			mass += math.Ldexp(1, -stored[len(stored)-1].bits)
		}
		for range 200 {
			e := stored[rng.IntN(len(stored))]
			i := e.bits - 4 + rng.IntN(8)
			if rng.IntN(4) == 0 {
				i = rng.IntN(124)
			}
			x := flip(e.h, i)
			want := false
			for _, y := range stored {
				want = want || matchesKept(x, y)
			}
			if got := found(v, x); got != want {
				t.Fatalf("layered %v, round %d: bit %d of an entry keeping %d flipped: found %v, want %v", layered, round, i, e.bits, got, want)
			}
			if want {
				hits++
				continue
			}
			misses++
			looked += mass
			if !v.insert(nil, x) {
				t.Fatalf("layered %v, round %d: a hash no entry matches was not stored", layered, round)
			}
			stored = append(stored, keptEntry{x, 64 - int(v.shift) + remBits})
			mass += math.Ldexp(1, -stored[len(stored)-1].bits)
		}
	}
	if v.len() != uint64(len(stored)) || v.mass != mass || v.looked != looked {
		t.Fatalf("layered %v: %d entries, mass %g, looked %g; want %d, %g, %g", layered, v.len(), v.mass, v.looked, len(stored), mass, looked)
	}
	var fromTable float64
	slots := len(v.table)
	for _, u := range append(slices.Clone(v.older), v) {
		u.entries(func(_, _, f uint64) {
			fromTable += math.Ldexp(1, bits.TrailingZeros64(f)-int(64-u.shift+remBits))
		})
		if u != v {
			slots += len(u.table)
			if !u.dense || u.outgrows(u.n) || !u.outgrows(u.n+1) { // kept full
				t.Fatalf("layered %v: a table kept with %d entries in %d slots", layered, u.n, len(u.table))
			}
		}
	}
	if fromTable != mass || v.bytes() != uint64(slots)*8 {
		t.Fatalf("layered %v: the entries' fields give mass %g, want %g; %d bytes for %d slots", layered, fromTable, mass, v.bytes(), slots)
	}
	if hits == 0 || misses == 0 || layered != (len(v.older) == maxLayers-1) || layered && 64-v.shift <= v.layer {
		t.Fatalf("layered %v: %d hits, %d misses, %d tables", layered, hits, misses, len(v.older)+1)
	}
	t.Logf("layered %v: %d entries in %d tables, the last of 2^%d slots, %d lookups found, %d not; mass %.3g", layered,
		v.len(), len(v.older)+1, 64-v.shift, hits, misses, mass)
}

// TestCompactFarFromHome: an entry that would lie too far from its home
// slot makes the table double first, as often as it takes, and each entry
// keeps the bits of its hash it kept: checked against brute force as in
// TestCompactKeepsItsBits, with entries allowed only a few slots from
// home, so that it happens all the time.
func TestCompactFarFromHome(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, far := range []uint64{2, 4} {
		v := newVisited(true, nil)
		v.far = far
		var stored []keptEntry
		var mass float64
		var originals []int // stored entries not near another, each copied at most once
		for range 3000 {
			h := hash{Lo: rng.Uint64() &^ (setParts - 1), Hi: rng.Uint64()}
			near := rng.IntN(2) == 0 && len(originals) > 0
			if near { // two entries that share a long prefix share a home slot in any table
				i := rng.IntN(len(originals))
				e := stored[originals[i]]
				originals = slices.Delete(originals, i, i+1)
				h = flip(e.h, e.bits-3+rng.IntN(6))
			}
			want := false
			for _, y := range stored {
				want = want || matchesKept(h, y)
			}
			k := int(64 - v.shift) // the table's size when the entry is stored: doubled first if it is 3/4 full
			if (v.n+1)*4 > uint64(len(v.table))*3 {
				k++
			}
			if added := v.insert(nil, h); added == want {
				t.Fatalf("far %d: added %v, an entry matches %v", far, added, want)
			}
			if !want {
				if !near {
					originals = append(originals, len(stored))
				}
				stored = append(stored, keptEntry{h, k + remBits})
				mass += math.Ldexp(1, -(k + remBits))
			}
		}
		for i, e := range stored {
			if !found(v, e.h) {
				t.Fatalf("far %d: entry %d lost", far, i)
			}
		}
		if v.n != uint64(len(stored)) || v.mass != mass {
			t.Fatalf("far %d: %d entries, mass %g; want %d, %g", far, v.n, v.mass, len(stored), mass)
		}
		t.Logf("far %d: %d entries in 2^%d slots", far, v.n, 64-v.shift)
	}
}

// TestGrowFarFromHome: doubling a table can leave an entry too far from
// its home slot; grow then tries a table four times as large, and so on.
// Tiny tables, entries allowed two slots from home, every entry still

// TestLayerFarFromHome: an entry that would lie too far from home in a
// part's table starts the next layer (visited.layer), here smaller than
// the table, and is put there, its home slot's last bits moved into its
// field; every entry stays found, no other hash is, and the part's mass
// is what its tables' entries keep.
func TestLayerFarFromHome(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	v := newVisited(true, nil)
	v.far, v.layer = 2, 8
	var hs []hash
	for range 3000 {
		h := hash{Lo: rng.Uint64(), Hi: rng.Uint64()}
		if v.insert(nil, h) {
			hs = append(hs, h)
		}
	}
	for i, h := range hs {
		if !found(v, h) {
			t.Fatalf("entry %d lost", i)
		}
		if found(v, hash{Lo: rng.Uint64(), Hi: rng.Uint64()}) {
			t.Fatal("a hash not stored found")
		}
	}
	var mass float64
	smaller := 0
	for _, u := range append(slices.Clone(v.older), v) {
		u.entries(func(_, _, f uint64) {
			mass += math.Ldexp(1, bits.TrailingZeros64(f)-int(64-u.shift+remBits))
		})
		if 64-u.shift < minTableBits {
			smaller++
		}
	}
	if v.len() != uint64(len(hs)) || len(v.older) != maxLayers-1 || smaller == 0 || mass != v.mass {
		t.Fatalf("%d entries of %d in %d tables, %d smaller than the first; mass %g, the entries give %g", v.len(), len(hs),
			len(v.older)+1, smaller, v.mass, mass)
	}
	t.Logf("%d entries in %d tables, the last of 2^%d slots", v.len(), len(v.older)+1, 64-v.shift)
}

// found after.
func TestGrowFarFromHome(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var twice int
	for range 20_000 {
		v := newTable(true, 4, nil)
		v.far = 2
		var hs []hash
		for range 2 + rng.IntN(10) {
			h := hash{Lo: rng.Uint64(), Hi: rng.Uint64()}
			if v.place(h.Lo>>v.shift, v.remainder(h)<<1|1) {
				hs = append(hs, h)
				v.n++
			}
		}
		v.grow()
		if k := 64 - v.shift; k > 5 {
			twice++
		}
		for i, h := range hs {
			if !found(v, h) {
				t.Fatalf("%d entries in 2^%d slots: entry %d lost", len(hs), 64-v.shift, i)
			}
		}
	}
	if twice == 0 {
		t.Fatal("no table had to grow more than twice as large")
	}
	t.Logf("%d of 20000 tables grew more than twice as large", twice)
}

// TestLowerKeepsMatches: an entry moved into a table half as large
// (lower, as a checkpoint writes a table at the size it had when its level
// started) still matches every hash it matched, keeps the same bits if it
// has room (and rehome undoes it), and otherwise loses only its last.
func TestLowerKeepsMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	big := newVisited(true, nil)
	var hs []hash
	for range 100_000 {
		h := hash{Lo: rng.Uint64(), Hi: rng.Uint64()}
		hs = append(hs, h)
		big.insert(nil, h)
	}
	k := 64 - big.shift
	for _, by := range []uint{1, 3} {
		small := newTable(true, k-by, nil)
		var truncated int
		big.entries(func(_, home, f uint64) {
			h, g := home, f
			for range by {
				h, g = lower(h, g)
			}
			if room := bits.TrailingZeros64(f) >= int(by); room {
				if h2, g2 := rehome(h, g, by); h2 != home || g2 != f {
					t.Fatalf("rehome(lower(%x, %x)) = %x, %x", home, f, h2, g2)
				}
			} else {
				truncated++
			}
			small.put(h, g, k-by)
		})
		for i, h := range hs {
			if !found(small, h) {
				t.Fatalf("lowered by %d: hash %d lost", by, i)
			}
		}
		if small.mass < big.mass || truncated == 0 && small.mass != big.mass {
			t.Fatalf("lowered by %d: mass %g, was %g (%d entries lost bits)", by, small.mass, big.mass, truncated)
		}
		t.Logf("lowered by %d: %d of %d entries lost bits; mass %.3g, was %.3g", by, truncated, big.n, small.mass, big.mass)
	}
}

// TestDropStoredKeepsExactlyTheNew checks dropStored against the set it
// reads: of a chunk's successors, in both modes, it keeps, in order and
// with their keys whole, exactly those the set does not hold, repeats
// included (the merge tells a repeat from the first).
func TestDropStoredKeepsExactlyTheNew(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	r := rand.New(rand.NewPCG(5, 6))
	for _, compact := range []bool{false, true} {
		b := newBFS(m, BFSOptions{Goroutines: 2, HashCompact: compact})
		key := func(i int) []byte { // keys of 1 to 40 bytes
			k := binary.LittleEndian.AppendUint64(nil, uint64(i))
			return append(k, make([]byte, i%33)...)
		}
		for i := 0; i < 50_000; i += 2 { // the even keys are stored
			k := key(i)
			b.seen.insert(k, hashKey(k))
		}
		for round := range 200 {
			var out chunkOut
			var want [][]byte
			for j := range r.IntN(3 * insertGroup) {
				i := r.IntN(50_200) // some beyond what was stored
				if j > 0 && r.IntN(8) == 0 {
					i = int(binary.LittleEndian.Uint64(out.keys[out.cands[j-1].off:])) // a repeat
				}
				k := key(i)
				out.cands = append(out.cands, cand{hash: hashKey(k), parent: uint32(j), off: uint32(len(out.keys)), key: uint16(len(k))})
				out.keys = append(out.keys, k...)
				if i%2 == 1 || i >= 50_000 {
					want = append(want, k)
				}
			}
			b.dropStored(&b.exps[0], &out)
			var got [][]byte
			for i, c := range out.cands {
				k := out.keys[c.off : c.off+uint32(c.key)]
				if c.hash != hashKey(k) || i > 0 && c.parent <= out.cands[i-1].parent {
					t.Fatalf("compact %v, round %d: candidate %d lost its key or its order", compact, round, i)
				}
				got = append(got, k)
			}
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("compact %v, round %d: kept %d candidates, want %d", compact, round, len(got), len(want))
			}
			if len(out.keys) != len(bytes.Join(want, nil)) {
				t.Fatalf("compact %v, round %d: %d key bytes kept for %d", compact, round, len(out.keys), len(bytes.Join(want, nil)))
			}
		}
	}
}

// TestArenaSlabs: an arena allocates its first slabChunks chunks one at a
// time and then a slab of slabChunks at a time, as nextAlloc says before
// each allocation; every key reads back as it was added, across chunks,
// slabs and a release and reuse.
func TestArenaSlabs(t *testing.T) {
	const chunk = 1 << arenaChunkBits
	var a arena
	r := rand.New(rand.NewPCG(9, 10))
	var offs []uint64
	var keys [][]byte
	add := func(n int) {
		for range n {
			k := make([]byte, 1+r.IntN(3000))
			for i := range k {
				k[i] = byte(r.Uint32())
			}
			chunks, free, next := len(a.chunks), len(a.free), a.nextAlloc()
			off := a.add(k)
			if len(a.chunks) > chunks { // a chunk was taken: from the free list, or allocated
				want := uint64(0)
				if free == 0 {
					want = chunk
					if chunks >= slabChunks {
						want = slabChunks * chunk
					}
				}
				if next != want {
					t.Fatalf("chunk %d: nextAlloc said %d, want %d", chunks, next, want)
				}
				if free == 0 && chunks >= slabChunks && len(a.free) != slabChunks-1 {
					t.Fatalf("chunk %d: a slab left %d chunks free", chunks, len(a.free))
				}
			}
			offs, keys = append(offs, off), append(keys, k)
		}
	}
	check := func(from int) {
		for i := from; i < len(keys); i++ {
			if !bytes.Equal(a.key(offs[i]), keys[i]) {
				t.Fatalf("key %d read back wrong", i)
			}
		}
	}
	add(20_000) // about 29 MiB: 4 chunks, then slabs
	check(0)
	if len(a.chunks) < 3*slabChunks || a.held != uint64(len(a.chunks))*chunk {
		t.Fatalf("%d chunks, %d bytes held", len(a.chunks), a.held)
	}
	cut := len(keys) / 2
	a.release(offs[cut])
	if a.held != uint64(len(a.chunks))*chunk-uint64(offs[cut]>>arenaChunkBits)*chunk {
		t.Fatalf("%d bytes held after releasing %d chunks", a.held, offs[cut]>>arenaChunkBits)
	}
	add(10_000) // reuses the chunks released first
	check(cut)
}

// TestDenseTableFills: a table doubles once more than 3/4 of its slots
// would be full, or 7/8 when dense, and a dense one stays dense through
// its doublings; either answers as a map of the keys does at every load.
// compactBits is the least size at which n entries do not outgrow a table.
func TestDenseTableFills(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, compact := range []bool{false, true} {
		for _, dense := range []bool{false, true} {
			var a arena
			v := newTable(compact, 12, &a)
			v.dense = dense
			num, den := fill(dense)
			seen := map[string]bool{}
			var keys [][]byte
			for size := 1 << 12; size <= 1<<14; size *= 2 {
				for uint64(len(seen)) < uint64(size)*num/den {
					k := binary.LittleEndian.AppendUint64(nil, rng.Uint64())
					if !v.insert(k, hashKey(k)) {
						t.Fatalf("compact %v, dense %v: key %d not added", compact, dense, len(keys))
					}
					seen[string(k)] = true
					keys = append(keys, k)
				}
				if len(v.table) != size || v.dense != dense {
					t.Fatalf("compact %v, dense %v: %d entries in %d slots (dense %v), want %d slots", compact, dense,
						v.n, len(v.table), v.dense, size)
				}
				for i, k := range keys {
					if !v.has(k) {
						t.Fatalf("compact %v, dense %v: key %d lost at %d entries", compact, dense, i, v.n)
					}
					if other := binary.LittleEndian.AppendUint64(nil, rng.Uint64()); v.has(other) != seen[string(other)] {
						t.Fatalf("compact %v, dense %v: a key not added found", compact, dense)
					}
				}
				k := binary.LittleEndian.AppendUint64(nil, rng.Uint64()) // one more doubles it
				v.insert(k, hashKey(k))
				seen[string(k)] = true
				keys = append(keys, k)
				if len(v.table) != 2*size {
					t.Fatalf("compact %v, dense %v: %d entries in %d slots, want %d", compact, dense, v.n, len(v.table), 2*size)
				}
			}
		}
	}
	for _, dense := range []bool{false, true} {
		for _, n := range []uint64{0, 1, 3072, 3073, 3584, 3585, 100_000} {
			k := compactBits(n, dense)
			if outgrows(n, k, dense) || k > minTableBits && !outgrows(n, k-1, dense) {
				t.Errorf("compactBits(%d, %v) = %d", n, dense, k)
			}
		}
	}
}

// has reports whether v holds key.
func (v *visited) has(key []byte) bool {
	_, ok := v.find(key, hashKey(key))
	return ok
}
