package checker

import "unsafe"

// hugePage is the size of a transparent huge page on x86-64 (and on arm64
// with 4 KiB pages), 2 MiB: the unit of adviseHuge. Where huge pages are
// larger, advising a range that holds none of them does nothing.
const hugePage = 2 << 20

// hugeSpan returns the huge pages that the n bytes at address addr lie
// in, [start, end): from the one that holds the first byte to the one
// that holds the last.
func hugeSpan(addr uintptr, n int) (start, end uintptr) {
	return addr &^ (hugePage - 1), (addr + uintptr(n) + hugePage - 1) &^ (hugePage - 1)
}

// hugeBytes returns n zero bytes, advised (adviseHuge): an arena slab.
func hugeBytes(n int) []byte {
	b := make([]byte, n)
	adviseHuge(b)
	return b
}

// hugeWords returns n zero words, advised (adviseHuge): a visited table.
func hugeWords(n int) []uint64 {
	w := make([]uint64, n)
	if n > 0 {
		adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n*8))
	}
	return w
}
