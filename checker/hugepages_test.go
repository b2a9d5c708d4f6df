package checker

import (
	"math/rand/v2"
	"testing"
)

// TestHugeSpan checks hugeSpan against the huge pages that the bytes lie
// in, counted byte by byte, on buffers of up to three huge pages at any
// address.
func TestHugeSpan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		addr := uintptr(r.Uint64N(1<<40)) &^ 7
		if r.IntN(4) == 0 {
			addr &^= hugePage - 1 // aligned
		}
		n := 1 + r.IntN(3*hugePage)
		start, end := hugeSpan(addr, n)
		// Brute force: the least and the greatest page number of a byte.
		first, last := ^uintptr(0), uintptr(0)
		for i := 0; i < n; i += 8 { // addr is a multiple of 8: so is every page start, and the last byte's page starts at or before the last i
			page := (addr + uintptr(i)) / hugePage
			first, last = min(first, page), max(last, page)
		}
		if start != first*hugePage || end != (last+1)*hugePage {
			t.Fatalf("%#x + %d: [%#x, %#x), want [%#x, %#x)", addr, n, start, end, first*hugePage, (last+1)*hugePage)
		}
	}
	// The advice is only a hint, on any size.
	for _, n := range []int{0, 1, hugePage - 1, hugePage, 3 * hugePage} {
		if b := hugeBytes(n); len(b) != n {
			t.Fatalf("hugeBytes(%d): %d bytes", n, len(b))
		}
		if w := hugeWords(n / 8); len(w) != n/8 {
			t.Fatalf("hugeWords(%d): %d words", n/8, len(w))
		}
	}
}
