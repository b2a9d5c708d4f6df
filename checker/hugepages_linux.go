package checker

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks Linux to back b, of at least a huge page, with huge pages
// (madvise MADV_HUGEPAGE), which it does when transparent huge pages are
// "always" or "madvise" (the usual default), and which Go's heap does not
// ask for. A fresh table or arena slab then faults once per 2 MiB instead
// of once per 4 KiB page when first written (under a hypervisor each fault
// is dearer still), and the lookups' random reads miss the TLB less.
//
// The advice covers every huge page b lies in (hugeSpan), not only those
// wholly inside it: Go's heap places a 4 MiB slab at any 8 KiB boundary, so
// unless it falls on a 2 MiB one the pages wholly inside hold 2 MiB of it,
// and the other half faulted a 4 KiB page at a time. The neighbours that share
// b's first and last huge pages may be backed so too, which changes what
// they hold in nothing. The call takes the range as numbers, since a Go
// pointer to memory outside b might point at no object. It is only a hint:
// an error leaves the pages as they were.
func adviseHuge(b []byte) {
	if len(b) < hugePage {
		return
	}
	start, end := hugeSpan(uintptr(unsafe.Pointer(&b[0])), len(b))
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_HUGEPAGE)
}
