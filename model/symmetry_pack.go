package model

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unsafe"
)

// A State is a plain array of one-byte fields (uint8, int8, bool): no
// padding, no pointers, so its memory is its value, byte for byte, and two
// states are == exactly when their bytes are equal. Pack compresses those
// bytes, which are mostly zero; the tests check the layout assumption.
const (
	stateSize  = int(unsafe.Sizeof(State{}))
	stateWords = (stateSize + 7) / 8
	maskBytes  = (stateWords + 7) / 8
)

// stateBytes is s's memory.
func stateBytes(s *State) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(s)), stateSize) }

// errPacked reports bytes that Pack did not produce.
var errPacked = errors.New("model: not a packed state")

// Pack appends a compact encoding of s that does not depend on the
// config: a bitmap of the state's nonzero 8-byte words, then for each such
// word a bitmap of its nonzero bytes and those bytes. Two states are == exactly
// when their packings are equal.
func Pack(s *State, b []byte) []byte {
	raw := stateBytes(s)
	var out [maskBytes + stateWords + stateSize]byte
	n := maskBytes
	for w := range stateWords {
		var x uint64
		if w*8+8 <= stateSize {
			x = binary.LittleEndian.Uint64(raw[w*8:])
		} else {
			var tail [8]byte
			copy(tail[:], raw[w*8:])
			x = binary.LittleEndian.Uint64(tail[:])
		}
		if x == 0 {
			continue
		}
		out[w/8] |= 1 << (w % 8)
		mi := n
		n++
		var mask byte
		for x != 0 {
			k := bits.TrailingZeros64(x) >> 3
			mask |= 1 << k
			out[n] = byte(x >> (8 * k))
			n++
			x &^= 0xff << (8 * k)
		}
		out[mi] = mask
	}
	return append(b, out[:n]...)
}

// Unpack reads a state that Pack wrote into *s and returns the bytes after
// it.
func Unpack(b []byte, s *State) ([]byte, error) {
	var buf [stateWords * 8]byte
	if len(b) < maskBytes {
		return nil, errPacked
	}
	hdr, b := b[:maskBytes], b[maskBytes:]
	for w := range stateWords {
		if hdr[w/8]&(1<<(w%8)) == 0 {
			continue
		}
		if len(b) == 0 || b[0] == 0 || len(b) < 1+bits.OnesCount8(b[0]) {
			return nil, errPacked
		}
		mask, j := b[0], 1
		for mask != 0 {
			k := bits.TrailingZeros8(mask)
			buf[w*8+k] = b[j]
			j++
			mask &^= 1 << k
		}
		b = b[j:]
	}
	for w := stateWords; w < 8*maskBytes; w++ {
		if hdr[w/8]&(1<<(w%8)) != 0 {
			return nil, errPacked
		}
	}
	for _, c := range buf[stateSize:] {
		if c != 0 {
			return nil, errPacked
		}
	}
	copy(stateBytes(s), buf[:stateSize])
	return b, nil
}
