package checker

import (
	"math/rand/v2"
	"testing"
)

// TestHugeRange checks hugeRange against counting the huge pages byte by
// byte, on buffers of up to three huge pages at any address.
func TestHugeRange(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		addr := uintptr(r.Uint64N(1<<40)) &^ 7
		if r.IntN(4) == 0 {
			addr &^= hugePage - 1 // aligned
		}
		n := r.IntN(3*hugePage + 1)
		lo, hi := hugeRange(addr, n)
		// Brute force: a whole huge page starts at an aligned byte p
		// with p + hugePage <= n.
		wantLo, wantHi := -1, -1
		for p := 0; p+hugePage <= n; p += 8 { // addr is a multiple of 8, so is an aligned p
			if (addr+uintptr(p))%hugePage == 0 {
				if wantLo < 0 {
					wantLo = p
				}
				wantHi = p + hugePage
			}
		}
		if wantLo < 0 {
			if lo < hi {
				t.Fatalf("%#x + %d: [%d, %d), but no whole huge page", addr, n, lo, hi)
			}
			continue
		}
		if lo != wantLo || hi != wantHi {
			t.Fatalf("%#x + %d: [%d, %d), want [%d, %d)", addr, n, lo, hi, wantLo, wantHi)
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
