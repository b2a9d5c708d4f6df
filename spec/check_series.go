package spec

import (
	"math"
	"sort"
)

// Sentinels for series values: inf stands for "unknown, could be anything"
// (an info or open operation), negInf for "contributes nothing".
const (
	inf    = math.MaxInt64
	negInf = math.MinInt64
)

// after is time t (≥ 0, as histories have it, or negInf: an unknown time
// before a partial history) plus duration d (≥ 0), or inf when that lies
// past the largest int64: a deadline that far out is later than every
// event's time. A history's times and ttls each fit in int64; their sum
// need not. The rules that flag an operation at or after a deadline
// (renew-validity, absolute-validity) take inf for "never": a deadline
// that is exactly math.MaxInt64 reads as one past it too, so an operation
// at that very instant under it is not flagged (one instant's miss, where
// flagging would be a false alarm at that instant for every lease that
// reaches past int64).
func after(t, d int64) int64 {
	if t > 0 && d > inf-t {
		return inf
	}
	return t + d
}

// series holds values keyed by event positions (lines), kept in increasing
// line order, with the running maximum and the suffix minimum, so that "the
// largest value before line L" and "the smallest value after line L" are
// answered in O(log n). Ties go to the earliest entry.
type series struct {
	line []int
	val  []int64
	ref  []int // what the entry stands for: an op index in the resource
	pmax []int // pmax[i]: index of the largest value among entries 0..i
}

// add appends an entry; lines must not decrease.
func (s *series) add(line int, v int64, ref int) {
	s.line = append(s.line, line)
	s.val = append(s.val, v)
	s.ref = append(s.ref, ref)
}

// sortByLine orders entries added out of line order.
func (s *series) sortByLine() {
	idx := make([]int, len(s.line))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.line[idx[a]] < s.line[idx[b]] })
	line, val, ref := make([]int, len(idx)), make([]int64, len(idx)), make([]int, len(idx))
	for i, j := range idx {
		line[i], val[i], ref[i] = s.line[j], s.val[j], s.ref[j]
	}
	s.line, s.val, s.ref = line, val, ref
}

// build computes the running maxima.
func (s *series) build() {
	n := len(s.val)
	s.pmax = make([]int, n)
	for i := 0; i < n; i++ {
		s.pmax[i] = i
		if i > 0 && s.val[s.pmax[i-1]] >= s.val[i] {
			s.pmax[i] = s.pmax[i-1]
		}
	}
}

// maxBefore returns the entry with the largest value among those whose line
// is < line, or -1 when there is none.
func (s *series) maxBefore(line int) int {
	k := sort.SearchInts(s.line, line) // first entry with line >= given
	if k == 0 {
		return -1
	}
	return s.pmax[k-1]
}
