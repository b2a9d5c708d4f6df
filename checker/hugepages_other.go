//go:build !linux

package checker

// adviseHuge does nothing off Linux (see hugepages_linux.go).
func adviseHuge([]byte) {}
