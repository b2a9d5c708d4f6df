package checker

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks Linux to back the whole huge pages inside b with huge
// pages (madvise MADV_HUGEPAGE), which it does when transparent huge pages
// are "always" or "madvise" (the usual default), and which Go's heap does
// not ask for. A fresh table or arena chunk then faults once per 2 MiB
// instead of once per 4 KiB page when first written (under a hypervisor
// each fault is dearer still), and the lookups' random reads miss the TLB
// less. It is only a hint: an error leaves the pages as they were.
func adviseHuge(b []byte) {
	if len(b) < hugePage {
		return
	}
	if lo, hi := hugeRange(uintptr(unsafe.Pointer(&b[0])), len(b)); lo < hi {
		_ = unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE)
	}
}
