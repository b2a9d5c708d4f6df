package spec

import (
	"container/heap"
	"fmt"
	"math"
	"sort"

	"github.com/fencecheck/fencecheck/history"
)

// holderTok names a lease: its holder and token.
type holderTok struct {
	owner, incarnation string
	token              int64
}

// grantTTL returns the ttl of ok acquire i: its ok value's, else its invoke's.
func (c *resCtx) grantTTL(i int) int64 {
	if t := c.out(i).TTL; t > 0 {
		return t
	}
	return c.in(i).TTL
}

// renewTTL returns the range of ttls a renew may have set: its own, else
// that of a grant of its token (the smallest and largest any attempt can
// have been granted for); lo 0 and hi inf when neither is known.
//
// Only grants that may have taken effect before the renew count (first
// attempted before its ok; an info or open renew may take effect at any
// later instant, so every grant); with none, the ttl is unknown.
func (c *resCtx) renewTTL(i int) (lo, hi int64) {
	if t := c.in(i).TTL; t > 0 {
		return t, t
	}
	end := c.ops[i].end
	if c.ops[i].res != history.OK {
		end = -1
	}
	lo, hi = inf, negInf
	for _, g := range c.tokenGrants[c.in(i).Token] {
		if gg := c.grants[g]; end < 0 || gg.from < end {
			lo, hi = min(lo, gg.minTTL), max(hi, gg.maxTTL)
		}
	}
	if lo == inf {
		return 0, inf
	}
	return lo, hi
}

// deadlineTerm is the latest deadline that a renew (ok or info) may have set:
// its completion time + its largest ttl, or inf for an info or open renew,
// or when its ttl is unknown.
func (c *resCtx) deadlineTerm(i int) int64 {
	_, hi := c.renewTTL(i)
	if c.ops[i].res != history.OK || hi == inf {
		return inf
	}
	return after(c.endTime(i), hi)
}

// renewSeries returns, per token, the renews of that token that may have
// taken effect (ok, info or open), by invoke line, valued by deadlineTerm.
func (c *resCtx) renewSeries() map[int64]*series {
	m := map[int64]*series{}
	for i, o := range c.ops {
		if o.kind != kRenew || o.res == history.Fail {
			continue
		}
		t := c.in(i).Token
		s := m[t]
		if s == nil {
			s = &series{}
			m[t] = s
		}
		s.add(o.inv, c.deadlineTerm(i), i)
	}
	for _, s := range m {
		s.build()
	}
	return m
}

// point is an instant of a history: a time and a line. Points compare by
// time, then line; a deadline D is the point (D, -1): at time D the lease
// has expired, whatever the line.
type point struct {
	time int64
	line int
}

func (p point) less(q point) bool { return p.time < q.time || p.time == q.time && p.line < q.line }

func minPoint(p, q point) point {
	if q.less(p) {
		return q
	}
	return p
}

// leaseEffect is a grant or a renew of one token that may have set its
// deadline: sometime after line first (at a time >= firstTime) and before
// line last (inf: an info or open one, any later instant or never).
type leaseEffect struct {
	first, last int
	firstTime   int64
	lo          int64 // the smallest ttl it may have set
	minEnd      int64 // the earliest deadline it may have set
	okLine      int   // the line by which it certainly took effect, -1 if it may not have
	grant       int   // grant index, or -1 for a renew
	op          int
}

// ttlHeap is a min-heap of (ttl, last line) for the sweep of exclusive-lease.
type ttlHeap [][2]int64

func (h ttlHeap) Len() int           { return len(h) }
func (h ttlHeap) Less(i, j int) bool { return h[i][0] < h[j][0] }
func (h ttlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ttlHeap) Push(x any)        { *h = append(*h, x.([2]int64)) }
func (h *ttlHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// checkExclusiveLease: two leases with different tokens certainly valid at
// one instant (a point: time, then line). A token is valid from a grant
// until a release or its deadline; the deadline is set by the last grant or
// renew of the token that took effect (its instant + its ttl). For each grant
// or renew e that certainly took effect by line O (its ok), the token is
// certainly valid from point O until the earliest of
//   - the earliest deadline e can have set (first attempt's invoke time +
//     the smallest ttl it may carry);
//   - for every other grant or renew f of the token (ok, info or open; and
//     every wild acquire, which may have granted any token) that may have
//     taken effect after e: the earliest deadline f can then set,
//     max(f's invoke time, e's) + f's smallest ttl — a renew may shorten a
//     lease;
//   - the invoke of a release of the token (ok, info or open) that may have
//     taken effect after e.
//
// A renew counts only while its token is certainly held: after a grant of it
// certainly before the renew, with no release possibly between them (or, in
// a partial history, when the token was granted before the first event: no
// grant or release of it before the renew). Two such intervals of different
// tokens that overlap are a violation, reported once per pair of tokens.
//
// In a partial history a grant, and the wild attempt of a request with no
// single granted token, may take effect before the first event, for any
// ttl (newResCtx): a grant gives no interval there (it may have expired
// before the first event), and such a request may shorten any lease at any
// instant.
func (c *resCtx) checkExclusiveLease() {
	type piece struct {
		token int64
		s, e  point
		ev    []int
		who   string
	}
	const never = math.MaxInt
	byToken := map[int64][]leaseEffect{}
	rels := map[int64][][2]int{} // token -> releases that may have taken effect: invoke line, last line
	var tokens []int64
	addEff := func(t int64, e leaseEffect) {
		if _, ok := byToken[t]; !ok {
			tokens = append(tokens, t)
		}
		byToken[t] = append(byToken[t], e)
	}
	for gi, g := range c.grants {
		addEff(g.token, leaseEffect{first: g.from, last: g.okLine, firstTime: g.fromTime, lo: g.minTTL,
			minEnd: g.minEnd, okLine: g.okLine, grant: gi, op: g.op})
	}
	type wildAcq struct {
		line int
		time int64
		ttl  int64
	}
	var wilds []wildAcq
	if len(c.preWild) > 0 { // attempts before a partial history: any instant, any ttl
		wilds = append(wilds, wildAcq{beforeFirst, negInf, 1})
	}
	for i, o := range c.ops {
		switch {
		case o.kind == kRenew && o.res != history.Fail:
			lo, _ := c.renewTTL(i)
			e := leaseEffect{first: o.inv, last: never, firstTime: c.invTime(i), lo: lo, minEnd: after(c.invTime(i), lo),
				okLine: -1, grant: -1, op: i}
			if o.res == history.OK {
				e.last, e.okLine = o.end, o.end
			}
			addEff(c.in(i).Token, e)
		case o.kind == kRelease && o.res != history.Fail:
			last := never
			if o.res == history.OK {
				last = o.end
			}
			t := c.in(i).Token
			rels[t] = append(rels[t], [2]int{o.inv, last})
		case c.wild[i]:
			wilds = append(wilds, wildAcq{o.inv, c.invTime(i), c.in(i).TTL})
		}
	}
	// Wild acquires, by invoke line: suffix minima of time + ttl and prefix
	// minima of ttl.
	wSuf, wPre := make([]int64, len(wilds)+1), make([]int64, len(wilds)+1)
	wSuf[len(wilds)], wPre[0] = inf, inf
	for k := len(wilds) - 1; k >= 0; k-- {
		wSuf[k] = min(wSuf[k+1], after(wilds[k].time, wilds[k].ttl))
	}
	for k, w := range wilds {
		wPre[k+1] = min(wPre[k], w.ttl)
	}
	at := func(line int) point {
		if line == beforeFirst {
			return point{negInf, line}
		}
		return point{c.h.Events[line].Time, line}
	}

	var ps []piece
	grantEnd := make([]point, len(c.grants)) // per grant: until when its token is certainly valid after it took effect
	for _, t := range tokens {
		effs := byToken[t]
		sort.Slice(effs, func(a, b int) bool { return effs[a].first < effs[b].first })
		// suf[k]: the smallest firstTime + lo among effs[k:].
		suf := make([]int64, len(effs)+1)
		suf[len(effs)] = inf
		for k := len(effs) - 1; k >= 0; k-- {
			suf[k] = min(suf[k+1], after(effs[k].firstTime, effs[k].lo))
		}
		var active ttlHeap // effects before the current one, by ttl, with their last line
		for k, e := range effs {
			for active.Len() > 0 && active[0][1] <= int64(e.first) {
				heap.Pop(&active)
			}
			overlapLo := int64(inf) // smallest ttl of an earlier effect that may follow e
			if active.Len() > 0 {
				overlapLo = active[0][0]
			}
			heap.Push(&active, [2]int64{e.lo, int64(e.last)})
			if e.okLine < 0 || !c.held(t, e, rels[t]) {
				continue
			}
			end := point{e.minEnd, -1}
			if overlapLo < inf {
				end = minPoint(end, point{after(e.firstTime, overlapLo), -1})
			}
			end = minPoint(end, point{suf[k+1], -1})
			w := sort.Search(len(wilds), func(i int) bool { return wilds[i].line > e.first })
			end = minPoint(end, point{wSuf[w], -1})
			if wPre[w] < inf {
				end = minPoint(end, point{after(e.firstTime, wPre[w]), -1})
			}
			for _, r := range rels[t] {
				if r[1] > e.first {
					end = minPoint(end, at(r[0]))
				}
			}
			if e.grant >= 0 {
				grantEnd[e.grant] = end
			}
			start := at(e.okLine)
			if !start.less(end) {
				continue
			}
			var ev []int
			if e.grant >= 0 {
				ev = []int{c.grants[e.grant].shown, e.okLine}
			} else {
				ev = c.events(e.op)
			}
			ps = append(ps, piece{t, start, end, ev, c.holder(e.op)})
		}
	}
	sort.SliceStable(ps, func(a, b int) bool {
		if ps[a].s != ps[b].s {
			return ps[a].s.less(ps[b].s)
		}
		return ps[a].ev[0] < ps[b].ev[0]
	})
	// Sweep by start: best is the piece seen with the latest end, second the
	// one with the latest end among those of another token than best's;
	// keep counts piece k in them.
	best, second := -1, -1
	keep := func(k int) {
		p := &ps[k]
		switch {
		case best < 0 || ps[best].e.less(p.e):
			if best >= 0 && ps[best].token != p.token {
				second = best
			}
			best = k
		case p.token != ps[best].token && (second < 0 || ps[second].e.less(p.e)):
			second = k
		}
	}
	// first reports whether the pair of tokens a and b is not reported yet
	// (by the sweeps: the rule on pairs of grants keeps its own), and counts
	// it reported.
	reported := map[[2]int64]bool{}
	first := func(a, b int64) bool {
		pair := tokenPair(a, b)
		if reported[pair] {
			return false
		}
		reported[pair] = true
		return true
	}
	for k := range ps {
		p := &ps[k]
		for _, q := range []int{best, second} {
			if q < 0 || ps[q].token == p.token || !p.s.less(ps[q].e) {
				continue
			}
			if first(p.token, ps[q].token) {
				e := minPoint(p.e, ps[q].e)
				during := fmt.Sprintf("during [%d, %d)", p.s.time, e.time)
				if e.time <= p.s.time {
					during = fmt.Sprintf("at time %d (event %d, before the release invoked at event %d)", p.s.time, p.s.line, e.line)
				}
				c.add(ExclusiveLease, append(append([]int{}, ps[q].ev...), p.ev...),
					"leases token=%d (%s) and token=%d (%s) were both certainly valid %s",
					ps[q].token, ps[q].who, p.token, p.who, during)
			}
			break
		}
		keep(k)
	}
	// Two grants g, h of different tokens: whichever took effect later did
	// so while the other was still valid when h's ok comes before the end
	// of g's certain validity after its effect (if g may come first), and
	// g's ok before the end of h's (if h may come first).
	byFrom := order0(c)
	pairs := newGrantPairs(c, byFrom, grantEnd, at)
	pairs.report(reported)
	// A grant is valid at the instant it takes effect, somewhere between
	// its first attempt's invoke line and its ok line: when another token
	// is certainly valid throughout that window, both are valid then.
	best, second = -1, -1
	k := 0
	for _, gi := range byFrom {
		g := c.grants[gi]
		for ; k < len(ps) && ps[k].s.less(at(g.from)); k++ {
			keep(k)
		}
		if g.minTTL < 1 {
			continue
		}
		for _, q := range []int{best, second} {
			if q < 0 || ps[q].token == g.token {
				continue
			}
			if at(g.okLine).less(ps[q].e) {
				if !pairs.reported(g.token, ps[q].token) && first(g.token, ps[q].token) {
					c.add(ExclusiveLease, append(append([]int{}, ps[q].ev...), g.shown, g.okLine),
						"leases token=%d (%s) and token=%d (%s) were both certainly valid when token=%d was granted (between events %d and %d)",
						ps[q].token, ps[q].who, g.token, c.holder(g.op), g.token, g.shown, g.okLine)
				}
			}
			break
		}
	}
}

// order0 returns the grant indexes sorted by first attempt line (cached).
func order0(c *resCtx) []int {
	if c.byFrom == nil {
		c.byFrom = make([]int, len(c.grants))
		for i := range c.byFrom {
			c.byFrom[i] = i
		}
		sort.SliceStable(c.byFrom, func(a, b int) bool { return c.grants[c.byFrom[a]].from < c.grants[c.byFrom[b]].from })
	}
	return c.byFrom
}

// held reports whether token t is certainly held when the lease effect e (a
// grant, or a renew) takes effect: a grant always makes it held; a renew
// needs a grant of t certainly before it (its ok line before the renew's
// invoke) with no release of t possibly between the two — or, in a partial
// history, no grant and no release of t possibly before it (t was granted
// before the first event).
func (c *resCtx) held(t int64, e leaseEffect, rels [][2]int) bool {
	if e.grant >= 0 {
		return true
	}
	relBetween := func(after int) bool { // a release invoked before e's end, possibly after line after
		for _, r := range rels {
			if r[0] < e.last && r[1] > after {
				return true
			}
		}
		return false
	}
	earlier := false
	for _, gi := range c.tokenGrants[t] {
		g := c.grants[gi]
		if g.from < e.last {
			earlier = true
		}
		if g.okLine < e.first && !relBetween(g.from) {
			return true
		}
	}
	return c.partial && !earlier && !relBetween(-1)
}

// checkTokenMonotonic: a grant of token t whose request was first attempted
// after the ok line of a grant of a token t' > t (never in a partial
// history, where every request may have been attempted before the first
// event: see newResCtx); or one token granted to two different requests (a
// request is owner, incarnation and requestId; a replay of the same request
// with the same token is not a second grant).
func (c *resCtx) checkTokenMonotonic() {
	var prev series // grants by ok line (c.grants is in that order)
	for gi, g := range c.grants {
		prev.add(g.okLine, g.token, gi)
	}
	prev.build()
	for gi, g := range c.grants {
		if first := c.tokenGrants[g.token][0]; first != gi {
			f := c.grants[first]
			c.add(TokenMonotonic, append(c.events(f.op), c.events(g.op)...),
				"token=%d granted twice: to %s (requestId=%s) and to %s (requestId=%s)",
				g.token, c.holder(f.op), quote(f.key.requestID), c.holder(g.op), quote(g.key.requestID))
			continue
		}
		if k := prev.maxBefore(g.from); k >= 0 && prev.val[k] > g.token {
			p := c.grants[prev.ref[k]]
			c.add(TokenMonotonic, []int{p.okLine, g.shown, g.okLine},
				"token=%d granted (to %s) after token=%d had been granted (to %s)",
				g.token, c.holder(g.op), p.token, c.holder(p.op))
		}
	}
}

// checkAcquireIdempotent: one requestId answered by two different grants
// (the contract's rule: the requestId alone names the request, whoever
// sends it). A grant is a request's (owner, incarnation, requestId) ok
// answer with one token; a retry answered with the same token is that
// grant replayed, no second one. So two tokens for one requestId, or one
// token for one requestId sent by two owners or two incarnations, are two
// grants: a coordinator that keyed its record on the requestId alone
// answered the second holder with the first one's lease.
func (c *resCtx) checkAcquireIdempotent() {
	first := map[string]int{}
	for gi, g := range c.grants {
		f, ok := first[g.key.requestID]
		if !ok {
			first[g.key.requestID] = gi
			continue
		}
		p := c.grants[f]
		if p.key == g.key {
			c.add(AcquireIdempotent, append(c.events(p.op), c.events(g.op)...),
				"requestId=%s of %s answered by two grants: token=%d and token=%d",
				quote(g.key.requestID), c.holder(g.op), p.token, g.token)
			continue
		}
		c.add(AcquireIdempotent, append(c.events(p.op), c.events(g.op)...),
			"requestId=%s answered by two grants: token=%d to %s and token=%d to %s",
			quote(g.key.requestID), p.token, c.holder(p.op), g.token, c.holder(g.op))
	}
}

// leaseKey names a lease: its token and holder.
type leaseKey struct {
	token              int64
	owner, incarnation string
}

func (c *resCtx) leaseOf(g int) leaseKey {
	k := c.grants[g].key
	return leaseKey{c.grants[g].token, k.owner, k.incarnation}
}

// takeovers answers "is there a grant of another lease than l (another
// token, or the same token to another holder), first attempted after line
// lo, whose ok line is before line hi?" in O(log n): grants sorted by first
// attempt, with suffix minima of their ok lines for the two smallest
// distinct leases.
type takeovers struct {
	c      *resCtx
	order  []int // grant indexes by first attempt line
	from   []int
	b1, b2 []int // per suffix: grant with the smallest ok line; same among other leases than b1's (-1: none)
}

func newTakeovers(c *resCtx) *takeovers {
	tk := &takeovers{c: c}
	for gi := range c.grants {
		tk.order = append(tk.order, gi)
	}
	sort.SliceStable(tk.order, func(a, b int) bool { return c.grants[tk.order[a]].from < c.grants[tk.order[b]].from })
	n := len(tk.order)
	tk.from, tk.b1, tk.b2 = make([]int, n), make([]int, n), make([]int, n)
	ok := func(g int) int { return c.grants[g].okLine }
	b1, b2 := -1, -1
	for k := n - 1; k >= 0; k-- {
		g := tk.order[k]
		tk.from[k] = c.grants[g].from
		switch {
		case b1 < 0 || ok(g) < ok(b1):
			if b1 >= 0 && c.leaseOf(b1) != c.leaseOf(g) {
				b2 = b1
			}
			b1 = g
		case c.leaseOf(g) != c.leaseOf(b1) && (b2 < 0 || ok(g) < ok(b2)):
			b2 = g
		}
		tk.b1[k], tk.b2[k] = b1, b2
	}
	return tk
}

func (tk *takeovers) find(lo, hi int, l leaseKey) int {
	k := sort.SearchInts(tk.from, lo+1)
	if k == len(tk.from) {
		return -1
	}
	for _, g := range []int{tk.b1[k], tk.b2[k]} {
		if g >= 0 && tk.c.leaseOf(g) != l {
			if tk.c.grants[g].okLine < hi {
				return g
			}
			return -1
		}
	}
	return -1
}

// checkRenewValidity checks every ok renew R (owner o, incarnation n, token
// t). Its candidate leases are the grants of t to o/n whose first attempt
// was invoked before R's ok line. Nothing is concluded when o/n has a wild
// acquire (an info or open one whose request has no single granted token)
// invoked before R's ok line: it may have granted t to o/n at any instant.
//   - mismatch: no candidate, and the history is not partial (in a partial
//     one o/n may hold t since before the first event, and every grant in
//     it may have come before that: see newResCtx);
//   - takeover: a grant of another lease (another token, or t to another
//     holder), first attempted after the last candidate's ok line, was ok
//     before R's invoke;
//   - released: a release of t by o/n, invoked after the last candidate's ok
//     line, was ok before R's invoke;
//   - deadline: R's invoke time >= the latest deadline any timing allows:
//     the max of each candidate's ok time + the largest ttl it may carry
//     (replays of a grant do not extend it) and of each other renew of t
//     invoked before R's ok line (ok: its ok time + ttl; info or open:
//     unbounded).
//
// A partial history is judged by renewValidityPartial.
func (c *resCtx) checkRenewValidity() {
	byHolder := map[holderTok][]int{} // o/n/t -> grants
	firstWild := map[holderTok]int{}  // token 0: any token
	rels := map[holderTok][]int{}
	for gi, g := range c.grants {
		k := holderTok{g.key.owner, g.key.incarnation, g.token}
		byHolder[k] = append(byHolder[k], gi)
	}
	for _, w := range c.preWild {
		firstWild[holderTok{w.owner, w.incarnation, 0}] = beforeFirst
	}
	for i, o := range c.ops {
		v := c.in(i)
		switch {
		case c.wild[i]:
			k := holderTok{v.Owner, v.Incarnation, 0}
			if _, ok := firstWild[k]; !ok {
				firstWild[k] = o.inv
			}
		case o.kind == kRelease && o.res == history.OK:
			k := holderTok{v.Owner, v.Incarnation, v.Token}
			rels[k] = append(rels[k], i)
		}
	}
	if c.partial {
		c.renewValidityPartial(byHolder, firstWild, rels)
		return
	}
	renews := c.renewSeries()
	var tk *takeovers
	for i, o := range c.ops {
		if o.kind != kRenew || o.res != history.OK {
			continue
		}
		v := c.in(i)
		t := v.Token
		var cands []int
		for _, g := range byHolder[holderTok{v.Owner, v.Incarnation, t}] {
			if c.grants[g].from < o.end {
				cands = append(cands, g)
			}
		}
		if fw, ok := firstWild[holderTok{v.Owner, v.Incarnation, 0}]; ok && fw < o.end {
			continue
		}
		rev := c.events(i)
		if len(cands) == 0 {
			if gs := c.tokenGrants[t]; len(gs) > 0 {
				g := c.grants[gs[0]]
				if c.holder(g.op) == c.holder(i) { // its own grant, but only after the renew
					c.add(RenewValidity, append(rev, c.events(g.op)...),
						"renew token=%d by %s accepted before token=%d was granted (to %s, first attempted at event %d)", t, c.holder(i), t, c.holder(g.op), g.shown)
				} else {
					c.add(RenewValidity, append(rev, c.events(g.op)...),
						"renew token=%d by %s accepted, but token=%d was granted to %s", t, c.holder(i), t, c.holder(g.op))
				}
			} else {
				c.add(RenewValidity, rev, "renew token=%d by %s accepted, but token=%d was never granted", t, c.holder(i), t)
			}
			continue
		}
		last, deadline := cands[0], int64(negInf)
		for _, g := range cands {
			gg := c.grants[g]
			if gg.okLine > c.grants[last].okLine {
				last = g
			}
			deadline = max(deadline, after(gg.okTime, gg.maxTTL))
		}
		lg := c.grants[last]
		lastOK := lg.okLine
		if tk == nil {
			tk = newTakeovers(c)
		}
		if g := tk.find(lastOK, o.inv, c.leaseOf(last)); g >= 0 {
			gg := c.grants[g]
			c.add(RenewValidity, append(append(rev, lastOK, gg.shown), gg.okLine),
				"renew token=%d by %s accepted after the lease was taken over by grant token=%d (to %s)",
				t, c.holder(i), gg.token, c.holder(gg.op))
			continue
		}
		released := false
		for _, j := range rels[holderTok{v.Owner, v.Incarnation, t}] {
			if c.ops[j].inv > lastOK && c.ops[j].end < o.inv {
				c.add(RenewValidity, append(append(rev, lastOK), c.events(j)...),
					"renew token=%d by %s accepted after the lease was released", t, c.holder(i))
				released = true
				break
			}
		}
		if released {
			continue
		}
		// Other renews of t invoked before R's ok line: those before R in
		// invoke order through the running maximum, those after one by one.
		ext := -1
		s := renews[t]
		p := sort.SearchInts(s.line, o.inv)
		if p > 0 && s.val[s.pmax[p-1]] > deadline {
			ext = s.ref[s.pmax[p-1]]
			deadline = s.val[s.pmax[p-1]]
		}
		for q := p + 1; q < len(s.line) && s.line[q] < o.end; q++ {
			if s.val[q] > deadline {
				ext, deadline = s.ref[q], s.val[q]
			}
		}
		if deadline != inf && deadline <= c.invTime(i) { // inf: past the largest time (see after), or unknown
			ev := append(rev, lg.shown, lastOK)
			if ext >= 0 {
				ev = append(ev, c.events(ext)...)
			}
			c.add(RenewValidity, ev,
				"renew token=%d by %s invoked at time %d accepted after the lease's deadline (%d at the latest)",
				t, c.holder(i), c.invTime(i), deadline)
		}
	}
}

// renewValidityPartial is checkRenewValidity on a partial history. The
// lease at the first event is unknown, and every grant may date from before
// it, for an unknown ttl (newResCtx): a renew is not compared with a grant
// (rules mismatch, takeover and deadline do not apply). For every ok renew R
// of lease o/n/t, when o/n has no wild acquire invoked before R's ok line:
//   - released: a release of t by o/n, invoked after the ok line of every
//     grant of t to o/n (if any), was ok before R's invoke: whatever the
//     lease was, it was not o/n's t at R;
//   - two leases: the latest ok renew R2 of another lease (token or holder)
//     invoked before R, when R's lease has a grant in the window (else a
//     request under way at the cut may have granted it anywhere in it),
//     no grant of either lease has its ok line after
//     the invoke of R2 and no wild acquire of either holder was invoked
//     before the later of their ok lines: no grant can have handed the
//     coordinator's lease from one to the other between their effects, so
//     one of the two was accepted for a lease that was not the
//     coordinator's.
func (c *resCtx) renewValidityPartial(byHolder map[holderTok][]int, firstWild map[holderTok]int, rels map[holderTok][]int) {
	lastOK := map[holderTok]int{} // the latest ok line of a grant of a lease
	for k, gs := range byHolder {
		for _, g := range gs {
			lastOK[k] = max(lastOK[k], c.grants[g].okLine)
		}
	}
	okOf := func(k holderTok) int {
		if l, ok := lastOK[k]; ok {
			return l
		}
		return beforeFirst
	}
	wildBefore := func(k holderTok, line int) bool {
		fw, ok := firstWild[holderTok{k.owner, k.incarnation, 0}]
		return ok && fw < line
	}
	leaseOf := func(i int) holderTok {
		v := c.in(i)
		return holderTok{v.Owner, v.Incarnation, v.Token}
	}
	last, other := -1, -1 // the latest ok renew, and the latest of another lease than its
	for i, o := range c.ops {
		if o.kind != kRenew || o.res != history.OK {
			continue
		}
		k := leaseOf(i)
		prev := last // the latest ok renew of another lease than R's
		if last >= 0 && leaseOf(last) == k {
			prev = other
		} else {
			other = last
		}
		last = i
		if wildBefore(k, o.end) {
			continue
		}
		rev := c.events(i)
		released := false
		for _, j := range rels[k] {
			if c.ops[j].inv > okOf(k) && c.ops[j].end < o.inv {
				ev := append(rev, c.events(j)...)
				if l := okOf(k); l != beforeFirst {
					ev = append(ev, l)
				}
				c.add(RenewValidity, ev, "renew token=%d by %s accepted after the lease was released", k.token, c.holder(i))
				released = true
				break
			}
		}
		if released || prev < 0 {
			continue
		}
		// R's lease with no grant in the window may have been granted
		// anywhere in it: by a request under way at the cut, whose
		// completion the window leaves out.
		pk, p := leaseOf(prev), c.ops[prev]
		if end := max(p.end, o.end); wildBefore(pk, end) || wildBefore(k, end) || okOf(k) == beforeFirst || okOf(k) > p.inv || okOf(pk) > p.inv {
			continue
		}
		c.add(RenewValidity, append(c.events(prev), rev...),
			"renews token=%d by %s and token=%d by %s were both accepted, and no grant can have handed the lease from one to the other between them",
			pk.token, c.holder(prev), k.token, c.holder(i))
	}
}

// accepted is a write the sink certainly accepted: an ok write, whose effect
// lies between its invoke and its ok, or a write that an apply event shows
// applied, at exactly that line (first = last = the apply line).
type accepted struct {
	op          int // the write, or -1 for an apply that matches none
	apply       int // index in c.applies, or -1
	token       int64
	v           *history.Value // the write's invoke value (or the apply's)
	first, last int            // the lines its effect lies strictly between (first = last: at that line)
	firstTime   int64
	fence       int64 // the fence the sink reported for it, when hasFence
	hasFence    bool
	fenceLine   int // the line that reported it
}

// events returns the lines that show an accepted write.
func (c *resCtx) acceptedEvents(a accepted) []int {
	var ev []int
	if a.op >= 0 {
		ev = c.events(a.op)
	}
	if a.apply >= 0 {
		ev = append(ev, c.applies[a.apply].line)
	}
	return ev
}

// acceptedWrites lists the resource's accepted writes in order of first line.
func (c *resCtx) acceptedWrites() []accepted {
	var out []accepted
	for i, o := range c.ops {
		if o.kind != kWrite {
			continue
		}
		k, hasApply := c.applyOf[i]
		if hasApply && c.applies[k].taken {
			a := c.applies[k]
			acc := accepted{op: i, apply: k, token: c.in(i).Token, v: c.in(i), first: a.line, last: a.line,
				firstTime: c.h.Events[a.line].Time, fence: a.v.Fence, hasFence: a.v.HasFence, fenceLine: a.line}
			if out := c.out(i); o.res == history.OK && out.HasFence && !acc.hasFence {
				acc.fence, acc.hasFence, acc.fenceLine = out.Fence, true, o.end
			}
			out = append(out, acc)
			continue
		}
		if o.res != history.OK {
			continue
		}
		acc := accepted{op: i, apply: -1, token: c.in(i).Token, v: c.in(i), first: o.inv, last: o.end,
			firstTime: c.invTime(i)}
		if v := c.out(i); v.HasFence {
			acc.fence, acc.hasFence, acc.fenceLine = v.Fence, true, o.end
		}
		out = append(out, acc)
	}
	for k, a := range c.applies {
		if a.op < 0 && a.taken {
			out = append(out, accepted{op: -1, apply: k, token: a.v.Token, v: a.v, first: a.line, last: a.line,
				firstTime: c.h.Events[a.line].Time, fence: a.v.Fence, hasFence: a.v.HasFence, fenceLine: a.line})
		}
	}
	sort.SliceStable(out, func(x, y int) bool { return out[x].first < out[y].first })
	return out
}

// checkAbsoluteValidity: an accepted write with token t whose effect came at
// time W or later (its invoke time; the apply's time when an apply event
// pins it) at or after the latest deadline its lease can have: the max over
// the grants of t first attempted before the write's last possible line of
// ok time + the largest ttl the grant may carry (replays do not extend it),
// and over the renews of t invoked before that line (ok: ok time + ttl; info
// or open: unbounded). Nothing is concluded when t was never granted, or when
// a wild acquire (an info or open acquire whose request has no single
// granted token) was invoked before that line: it may have granted t. In a
// partial history a grant's ttl, hence its deadline, is unknown (newResCtx):
// nothing is concluded.
func (c *resCtx) checkAbsoluteValidity() {
	acq := map[int64]*series{} // token -> grants by first attempt line, valued ok time + largest ttl
	for gi, g := range c.grants {
		if acq[g.token] == nil {
			acq[g.token] = &series{}
		}
		acq[g.token].add(g.from, after(g.okTime, g.maxTTL), gi)
	}
	for _, s := range acq {
		s.sortByLine()
		s.build()
	}
	var renews map[int64]*series
	for _, w := range c.acceptedWrites() {
		lastLine := w.last
		if w.first == w.last {
			lastLine = w.first // pinned at the apply line: things invoked before it
		}
		if c.firstWildAcq < lastLine {
			continue
		}
		t := w.token
		s := acq[t]
		if s == nil {
			continue
		}
		k := s.maxBefore(lastLine)
		if k < 0 {
			continue
		}
		g := c.grants[s.ref[k]]
		deadline, ev := s.val[k], []int{g.shown, g.okLine}
		if renews == nil {
			renews = c.renewSeries()
		}
		if rs := renews[t]; rs != nil {
			if k := rs.maxBefore(lastLine); k >= 0 && rs.val[k] > deadline {
				deadline = rs.val[k]
				ev = append(ev, c.events(rs.ref[k])...)
			}
		}
		if deadline != inf && deadline <= w.firstTime { // inf: past the largest time (see after), or unknown
			what := "invoked"
			if w.first == w.last {
				what = "applied"
			}
			c.add(AbsoluteValidity, append(ev, c.acceptedEvents(w)...),
				"write token=%d %s at time %d accepted after its lease's deadline (%d at the latest)",
				t, what, w.firstTime, deadline)
		}
	}
}
