package spec

import (
	"slices"
	"sort"
)

// grantPairs is exclusive-lease's rule on pairs of grants: two grants g, h
// of different tokens, g first attempted no later than h (g before h in
// order0), whichever took effect later did so while the other was still
// certainly valid:
//   - h's ok point comes before the end of g's certain validity after its
//     effect (g may take effect first: g's first attempt comes before h's
//     ok line, always so in that order); and
//   - if h may take effect first (h's first attempt comes before g's ok
//     line), g's ok point comes before the end of h's.
//
// A point p comes before the end E of a certain validity exactly when p's
// line comes before lam(E), the first line whose point is not before E
// (points grow with lines). So, with lam and ok per grant, g (position p)
// and h (position q > p) make a pair when
//
//	ok[q] < lam[p] and nu[q] > ok[p], nu[q] = max(from[q]+1, lam[q])
//
// and both grants have a ttl (minTTL >= 1). Each pair of tokens is reported
// once, in the order of the pairs (p, then q), and not when the sweep over
// intervals reported it already. A resource's grants can make a number of
// pairs quadratic in theirs (n grants for long ttls, all overlapping): when
// no token is granted twice, pairs of grants are pairs of tokens, and they
// are counted without being enumerated, in O(n log² n) (count); only the
// first few in report order, which the report may show, are enumerated.
// Otherwise they are enumerated (enumerate), without formatting those the
// report does not show.
type grantPairs struct {
	c     *resCtx
	pos   []int   // grant indexes by first attempt line (order0)
	tok   []int64 // per position: the grant's token
	from  []int   // per position: its first attempt line (beforeFirst: before a partial history)
	ok    []int   // per position: its ok line
	lam   []int   // per position: lam of the end of its certain validity after its effect
	nu    []int   // per position: max(from+1, lam)
	valid []bool  // per position: minTTL >= 1
	posOf map[int64]int
	multi map[int64]bool // tokens granted more than once
	// multiPairs: pairs of tokens of which one is in multi that enumerate
	// reported.
	multiPairs map[[2]int64]bool
}

// pairsEnumerate, when set, makes grantPairs enumerate its pairs even when
// it could count them (a test compares the two).
var pairsEnumerate = false

// tokenPair is a pair of tokens, in either order, as a map key.
func tokenPair(a, b int64) [2]int64 { return [2]int64{min(a, b), max(a, b)} }

// newGrantPairs indexes the grants in order (order0) with the end of each
// one's certain validity after its effect (grantEnd, by grant index).
func newGrantPairs(c *resCtx, order []int, grantEnd []point, at func(int) point) *grantPairs {
	n := len(order)
	gp := &grantPairs{c: c, pos: order, tok: make([]int64, n), from: make([]int, n), ok: make([]int, n),
		lam: make([]int, n), nu: make([]int, n), valid: make([]bool, n), posOf: map[int64]int{}, multi: map[int64]bool{}}
	lines := len(c.h.Events)
	for p, gi := range order {
		g := &c.grants[gi]
		gp.tok[p], gp.from[p], gp.ok[p], gp.valid[p] = g.token, g.from, g.okLine, g.minTTL >= 1
		end := grantEnd[gi]
		gp.lam[p] = sort.Search(lines, func(l int) bool { return !at(l).less(end) })
		gp.nu[p] = max(g.from+1, gp.lam[p])
		if _, seen := gp.posOf[g.token]; seen {
			gp.multi[g.token] = true
		}
		gp.posOf[g.token] = p
	}
	return gp
}

// pair reports whether the grants at positions p < q make a pair.
func (gp *grantPairs) pair(p, q int) bool {
	return gp.valid[p] && gp.valid[q] && gp.tok[p] != gp.tok[q] && gp.ok[q] < gp.lam[p] && gp.nu[q] > gp.ok[p]
}

// report adds the pairs of tokens the rule reports (those in done, which
// the sweep over intervals reported, excepted), in the order of the pairs.
func (gp *grantPairs) report(done map[[2]int64]bool) {
	if len(gp.multi) > 0 || pairsEnumerate {
		gp.enumerate(done)
	} else {
		gp.count(done)
	}
}

// reported reports whether the rule reported the pair of tokens a, b, or
// found it in done (which report was given).
func (gp *grantPairs) reported(a, b int64) bool {
	if gp.multi[a] || gp.multi[b] {
		return gp.multiPairs[tokenPair(a, b)]
	}
	p, okA := gp.posOf[a]
	q, okB := gp.posOf[b]
	if !okA || !okB || a == b {
		return false
	}
	return gp.pair(min(p, q), max(p, q))
}

// add reports the pair at positions p < q, formatting it only if the
// report may show it.
func (gp *grantPairs) add(p, q int) {
	c := gp.c
	g, h := &c.grants[gp.pos[p]], &c.grants[gp.pos[q]]
	var buf [4]int
	ev := normEvents(append(buf[:0], g.shown, g.okLine, h.shown, h.okLine))
	if c.foundOf(ExclusiveLease).after(ev) {
		c.omit(ExclusiveLease, 1)
		return
	}
	c.add(ExclusiveLease, ev,
		"leases token=%d (%s) and token=%d (%s) were both certainly valid when the later of the two grants took effect",
		g.token, c.holder(g.op), h.token, c.holder(h.op))
}

// enumerate visits the pairs in order: for each position p, the positions
// q > p whose first attempt comes before lam[p] (a later one's ok cannot
// come before it either). A position whose lam no later grant's ok line is
// below has none.
func (gp *grantPairs) enumerate(done map[[2]int64]bool) {
	n := len(gp.pos)
	sufOK := make([]int, n+1) // the smallest ok line of a grant with a ttl at or after each position
	sufOK[n] = noLine
	for p := n - 1; p >= 0; p-- {
		sufOK[p] = sufOK[p+1]
		if gp.valid[p] {
			sufOK[p] = min(sufOK[p], gp.ok[p])
		}
	}
	for p := range n {
		if !gp.valid[p] || sufOK[p+1] >= gp.lam[p] {
			continue
		}
		for q := p + 1; q < n && gp.from[q] < gp.lam[p]; q++ {
			if !gp.pair(p, q) {
				continue
			}
			k := tokenPair(gp.tok[p], gp.tok[q])
			if done[k] {
				continue
			}
			if gp.multi[gp.tok[p]] || gp.multi[gp.tok[q]] {
				if gp.multiPairs[k] {
					continue
				}
				if gp.multiPairs == nil {
					gp.multiPairs = map[[2]int64]bool{}
				}
				gp.multiPairs[k] = true
			}
			gp.add(p, q)
		}
	}
}

// count counts the pairs (every token is granted once: a pair of grants is
// a pair of tokens, made by no other pair of grants), less those in done,
// and enumerates, in order, the pairs of the first positions until the
// report's shown violations all come before every later pair: a pair
// (p, q)'s events begin with from[p] in a history that is not partial
// (from is then the first attempt the history shows), and in a partial
// history no grant has a certain validity after its effect (its lam is 0),
// so there is no pair at all.
func (gp *grantPairs) count(done map[[2]int64]bool) {
	n := len(gp.pos)
	cnt := gp.pairsPerPosition()
	for k := range done {
		p, okA := gp.posOf[k[0]]
		q, okB := gp.posOf[k[1]]
		if okA && okB {
			p, q = min(p, q), max(p, q)
			if gp.pair(p, q) {
				cnt[p]--
			}
		}
	}
	total, listed := 0, 0
	f := gp.c.foundOf(ExclusiveLease)
	for p := range n {
		total += cnt[p]
		if cnt[p] == 0 {
			continue
		}
		if !gp.c.partial && f.full() && f.shown[len(f.shown)-1].Events[0] < gp.from[p] {
			continue // every pair from here on comes after those shown
		}
		for q := p + 1; q < n && gp.from[q] < gp.lam[p]; q++ {
			if gp.pair(p, q) && !done[tokenPair(gp.tok[p], gp.tok[q])] {
				gp.add(p, q)
				listed++
			}
		}
	}
	gp.c.omit(ExclusiveLease, total-listed)
}

// pairsPerPosition returns, per position p, the number of positions q > p
// that make a pair with it, by divide and conquer on the positions: the
// pairs across the middle of a range are counted by a sweep over ok[q]
// against lam[p] with a Fenwick tree over nu[q] (O(n log² n) in all).
func (gp *grantPairs) pairsPerPosition() []int {
	n := len(gp.pos)
	cnt := make([]int, n)
	var idx []int // positions of the grants with a ttl
	for p := range n {
		if gp.valid[p] {
			idx = append(idx, p)
		}
	}
	// nu ranks, for the Fenwick tree.
	nus := make([]int, len(idx))
	for k, p := range idx {
		nus[k] = gp.nu[p]
	}
	slices.Sort(nus)
	nus = slices.Compact(nus)
	tree := make([]int, len(nus)+1)
	addTree := func(r, d int) {
		for r++; r < len(tree); r += r & -r {
			tree[r] += d
		}
	}
	prefix := func(r int) int { // points with nu rank < r
		s := 0
		for ; r > 0; r -= r & -r {
			s += tree[r]
		}
		return s
	}
	left, right := make([]int, 0, len(idx)), make([]int, 0, len(idx))
	var solve func(lo, hi int)
	solve = func(lo, hi int) {
		if hi-lo <= 16 {
			for a := lo; a < hi; a++ {
				for b := a + 1; b < hi; b++ {
					if p, q := idx[a], idx[b]; gp.ok[q] < gp.lam[p] && gp.nu[q] > gp.ok[p] {
						cnt[p]++
					}
				}
			}
			return
		}
		mid := (lo + hi) / 2
		solve(lo, mid)
		solve(mid, hi)
		left = append(left[:0], idx[lo:mid]...)
		right = append(right[:0], idx[mid:hi]...)
		slices.SortFunc(left, func(a, b int) int { return gp.lam[a] - gp.lam[b] })
		slices.SortFunc(right, func(a, b int) int { return gp.ok[a] - gp.ok[b] })
		j := 0
		for _, p := range left {
			for ; j < len(right) && gp.ok[right[j]] < gp.lam[p]; j++ {
				r, _ := slices.BinarySearch(nus, gp.nu[right[j]])
				addTree(r, 1)
			}
			r, _ := slices.BinarySearch(nus, gp.ok[p]+1) // nu > ok[p]: rank of the first nu >= ok[p]+1
			cnt[p] += j - prefix(r)
		}
		for _, q := range right[:j] {
			r, _ := slices.BinarySearch(nus, gp.nu[q])
			addTree(r, -1)
		}
	}
	solve(0, len(idx))
	return cnt
}
