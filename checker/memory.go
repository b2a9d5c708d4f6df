package checker

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
)

// fallbackMemory is what DefaultMemoryBudget assumes the machine has when
// neither /proc/meminfo nor a cgroup limit can be read.
const fallbackMemory = 8 << 30

// DefaultMemoryBudget is a safe BFSOptions.MaxMemory for this machine:
// half of the memory available to the process, the least of the physical
// memory (MemTotal in /proc/meminfo) and the cgroup's limit
// (/sys/fs/cgroup/memory.max, or memory.limit_in_bytes under cgroup v1).
// When none can be read it is 4 GiB.
func DefaultMemoryBudget() uint64 {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return ""
		}
		return string(b)
	}
	cgroup := read("/sys/fs/cgroup/memory.max")
	if cgroup == "" {
		cgroup = read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	}
	return memoryBudget(read("/proc/meminfo"), cgroup)
}

// memoryBudget is DefaultMemoryBudget from the text of /proc/meminfo and
// of the cgroup's limit file (either may be empty: unreadable).
func memoryBudget(meminfo, cgroup string) uint64 {
	total, ok := parseMemTotal(meminfo)
	if limit, lok := parseCgroupLimit(cgroup); lok && (!ok || limit < total) {
		total, ok = limit, true
	}
	if !ok {
		total = fallbackMemory
	}
	return total / 2
}

// parseMemTotal reads the MemTotal line of /proc/meminfo ("MemTotal:
// 24683584 kB"), in bytes.
func parseMemTotal(meminfo string) (uint64, bool) {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "MemTotal:" {
			continue
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || n == 0 {
			return 0, false
		}
		if len(f) >= 3 && strings.EqualFold(f[2], "kB") {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}

// parseCgroupLimit reads a cgroup memory limit: a number of bytes, or
// "max" (cgroup v2) or a huge number (cgroup v1) for no limit, which is
// reported as none.
func parseCgroupLimit(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s == "max" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 || n >= 1<<60 { // cgroup v1 says no limit with 2^63 rounded down to a page
		return 0, false
	}
	return n, true
}

// ParseSize parses a memory size: a number of bytes, optionally with a
// fraction and a unit: K, M, G, T (or KiB, MiB, GiB, TiB) are powers of
// 1024; KB, MB, GB, TB powers of 1000; B is bytes. Case does not matter:
// "8GiB", "512MiB", "2G", "1.5g", "100000", "0".
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (512MiB, 8GiB, 2G)", s)
	}
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KiB, MiB, GiB, TiB, K, M, G, T, KB, MB, GB or TB)", s, t[i:])
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		if err == nil && (n == 0 || uint64(mult) <= ^uint64(0)/n) {
			return n * uint64(mult), nil
		}
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("size %q: %v", s, err)
		}
		return 0, fmt.Errorf("size %q: too large", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: not a number", s)
	}
	if v := f * mult; v < 1<<63 {
		return uint64(v), nil
	}
	return 0, fmt.Errorf("size %q: too large", s)
}

// FormatSize writes a size the way ParseSize reads it, in the largest
// binary unit it is a whole multiple of, else with one decimal ("11.8GiB").
func FormatSize(n uint64) string {
	units := []string{"TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		div := uint64(1) << (10 * (len(units) - i))
		if n >= div {
			if n%div == 0 {
				return fmt.Sprintf("%d%s", n/div, u)
			}
			return fmt.Sprintf("%.1f%s", float64(n)/float64(div), u)
		}
	}
	return strconv.FormatUint(n, 10)
}

// heapMeter samples the Go heap as a memory budget counts it: the bytes of
// heap objects (live, and garbage not yet collected) and of the heap the
// runtime holds unused (runtime/metrics).
type heapMeter []metrics.Sample

func newHeapMeter() heapMeter {
	return heapMeter{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
}

// read returns the heap now.
func (h heapMeter) read() uint64 {
	metrics.Read(h)
	var n uint64
	for _, s := range h {
		if s.Value.Kind() == metrics.KindUint64 {
			n += s.Value.Uint64()
		}
	}
	return n
}

// heapBudget keeps a search's Go heap within max bytes (0: no budget):
// it samples the heap (heap, peak) and tells when it reaches the budget.
type heapBudget struct {
	max    uint64
	meter  heapMeter
	heap   uint64 // the last sample
	peak   uint64 // the largest sample
	gcHeap uint64 // the heap after the last forced collection
}

// sample reads the heap into heap and peak, and returns it.
func (b *heapBudget) sample() uint64 {
	if b.meter == nil {
		b.meter = newHeapMeter()
	}
	b.heap = b.meter.read()
	b.peak = max(b.peak, b.heap)
	return b.heap
}

// collect forces a collection and samples the heap after it.
func (b *heapBudget) collect() {
	runtime.GC()
	b.gcHeap = b.sample()
}

// over samples the heap and reports whether it, with extra bytes more,
// reaches the budget. A sample counts garbage not yet collected, so one
// over the budget forces a collection and samples again, unless there was
// one since the heap grew by a sixteenth of the budget (then what is
// there is live).
func (b *heapBudget) over(extra uint64) bool {
	if b.max == 0 {
		return false
	}
	if b.sample()+extra < b.max {
		return false
	}
	if b.heap < b.gcHeap+b.max/16 {
		return true
	}
	b.collect()
	return b.heap+extra >= b.max
}
