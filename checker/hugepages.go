package checker

import "unsafe"

// hugePage is the size of a transparent huge page on x86-64 (and on arm64
// with 4 KiB pages), 2 MiB: the unit of adviseHuge. Where huge pages are
// larger, advising a range that holds none of them does nothing.
const hugePage = 2 << 20

// hugeRange returns the offsets [lo, hi) of the whole huge pages inside n
// bytes at address addr (lo >= hi when there is none).
func hugeRange(addr uintptr, n int) (lo, hi int) {
	first := (addr + hugePage - 1) &^ (hugePage - 1)
	last := (addr + uintptr(n)) &^ (hugePage - 1)
	return int(first - addr), int(last - addr)
}

// hugeBytes returns n zero bytes, their whole huge pages advised
// (adviseHuge): an arena chunk.
func hugeBytes(n int) []byte {
	b := make([]byte, n)
	adviseHuge(b)
	return b
}

// hugeWords returns n zero words, their whole huge pages advised
// (adviseHuge): a visited table.
func hugeWords(n int) []uint64 {
	w := make([]uint64, n)
	if n > 0 {
		adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n*8))
	}
	return w
}
