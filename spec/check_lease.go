package spec

import (
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

// renewTTL returns the ttl a renew asks for: its own, else the ttl of the
// first grant of its token; 0 when neither is known.
func (c *resCtx) renewTTL(i int) int64 {
	if t := c.in(i).TTL; t > 0 {
		return t
	}
	if gs := c.tokenGrants[c.in(i).Token]; len(gs) > 0 {
		return c.grants[gs[0]].ttl
	}
	return 0
}

// deadlineTerm is the latest deadline that a renew (ok or info) may have set:
// its completion time + ttl, or inf for an info or open renew, or when its
// ttl is unknown.
func (c *resCtx) deadlineTerm(i int) int64 {
	ttl := c.renewTTL(i)
	if c.ops[i].res != history.OK || ttl == 0 {
		return inf
	}
	return c.endTime(i) + ttl
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

// checkExclusiveLease: two leases with different tokens certainly valid at
// one instant. A grant (acquire ok at time O, first attempt of its request
// invoked at time I, ttl L) is certainly valid during [O, I+L); an ok renew
// (invoked at I', ok at O', ttl L') makes its token certainly valid during
// [O', I'+L'); a release of the token (ok, info or open) invoked at time T
// cuts all of them at T. Two such intervals of different tokens that overlap
// are a violation, reported once per pair of tokens.
func (c *resCtx) checkExclusiveLease() {
	type piece struct {
		token int64
		s, e  int64
		ev    []int
		who   string
	}
	cut := map[int64]int64{} // token -> earliest invoke time of a release that may have taken effect
	for i, o := range c.ops {
		if o.kind == kRelease && o.res != history.Fail {
			t := c.in(i).Token
			if cur, ok := cut[t]; !ok || c.invTime(i) < cur {
				cut[t] = c.invTime(i)
			}
		}
	}
	var ps []piece
	addPiece := func(t, s, e int64, ev []int, who string) {
		if x, ok := cut[t]; ok && x < e {
			e = x
		}
		if s < e {
			ps = append(ps, piece{t, s, e, ev, who})
		}
	}
	for _, g := range c.grants {
		addPiece(g.token, g.okTime, g.fromTime+g.ttl, []int{g.from, g.okLine}, c.holder(g.op))
	}
	for i, o := range c.ops {
		if o.kind == kRenew && o.res == history.OK {
			if ttl := c.renewTTL(i); ttl > 0 {
				addPiece(c.in(i).Token, c.endTime(i), c.invTime(i)+ttl, c.events(i), c.holder(i))
			}
		}
	}
	sort.SliceStable(ps, func(a, b int) bool {
		if ps[a].s != ps[b].s {
			return ps[a].s < ps[b].s
		}
		return ps[a].ev[0] < ps[b].ev[0]
	})
	// Sweep by start: best is the piece seen with the latest end, second the
	// one with the latest end among those of another token than best's.
	best, second := -1, -1
	reported := map[[2]int64]bool{}
	for k := range ps {
		p := &ps[k]
		for _, q := range []int{best, second} {
			if q < 0 || ps[q].token == p.token || ps[q].e <= p.s {
				continue
			}
			pair := [2]int64{min(p.token, ps[q].token), max(p.token, ps[q].token)}
			if !reported[pair] {
				reported[pair] = true
				c.add(ExclusiveLease, append(append([]int{}, ps[q].ev...), p.ev...),
					"leases token=%d (%s) and token=%d (%s) were both certainly valid during [%d, %d)",
					ps[q].token, ps[q].who, p.token, p.who, p.s, min(p.e, ps[q].e))
			}
			break
		}
		switch {
		case best < 0 || p.e > ps[best].e:
			if best >= 0 && ps[best].token != p.token {
				second = best
			}
			best = k
		case p.token != ps[best].token && (second < 0 || p.e > ps[second].e):
			second = k
		}
	}
}

// checkTokenMonotonic: a grant of token t whose request was first attempted
// after the ok line of a grant of a token t' > t; or one token granted to two
// different requests (a request is owner, incarnation and requestId; a
// replay of the same request with the same token is not a second grant).
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
			c.add(TokenMonotonic, []int{p.okLine, g.from, g.okLine},
				"token=%d granted (to %s) after token=%d had been granted (to %s)",
				g.token, c.holder(g.op), p.token, c.holder(p.op))
		}
	}
}

// checkAcquireIdempotent: one request (owner, incarnation, requestId)
// answered by ok acquires with two different tokens.
func (c *resCtx) checkAcquireIdempotent() {
	first := map[reqKey]int{}
	for gi, g := range c.grants {
		f, ok := first[g.key]
		if !ok {
			first[g.key] = gi
			continue
		}
		p := c.grants[f]
		c.add(AcquireIdempotent, append(c.events(p.op), c.events(g.op)...),
			"requestId=%s of %s answered by two grants: token=%d and token=%d",
			quote(g.key.requestID), c.holder(g.op), p.token, g.token)
	}
}

// takeovers answers "is there a grant of another token than t, first
// attempted after line lo, whose ok line is before line hi?" in O(log n):
// grants sorted by first attempt, with suffix minima of their ok lines for
// the two smallest distinct tokens.
type takeovers struct {
	c      *resCtx
	order  []int // grant indexes by first attempt line
	from   []int
	b1, b2 []int // per suffix: grant with the smallest ok line; same among other tokens than b1's (-1: none)
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
			if b1 >= 0 && c.grants[b1].token != c.grants[g].token {
				b2 = b1
			}
			b1 = g
		case c.grants[g].token != c.grants[b1].token && (b2 < 0 || ok(g) < ok(b2)):
			b2 = g
		}
		tk.b1[k], tk.b2[k] = b1, b2
	}
	return tk
}

func (tk *takeovers) find(lo, hi int, t int64) int {
	k := sort.SearchInts(tk.from, lo+1)
	if k == len(tk.from) {
		return -1
	}
	for _, g := range []int{tk.b1[k], tk.b2[k]} {
		if g >= 0 && tk.c.grants[g].token != t {
			if tk.c.grants[g].okLine < hi {
				return g
			}
			return -1
		}
	}
	return -1
}

// checkRenewValidity checks every ok renew R (owner o, incarnation n, token
// t). Its candidate leases are the acquires by o/n invoked before R's ok line
// that were ok with token t, or info or open (those may have granted t).
//   - mismatch (not partial): no candidate at all;
//   - takeover: all candidates ok, and a grant of another token, first
//     attempted after the last candidate's ok line, was ok before R's invoke;
//   - released: all candidates ok, and a release of t by o/n, invoked after
//     the last candidate's ok line, was ok before R's invoke;
//   - deadline: all candidates ok, and R's invoke time >= the latest deadline
//     any timing allows: the max of each candidate's ok time + ttl and of
//     each other renew of t invoked before R's ok line (ok: its ok time +
//     ttl; info or open: unbounded).
func (c *resCtx) checkRenewValidity() {
	acqOK := map[holderTok][]int{}
	firstInfo := map[holderTok]int{} // token 0: any token
	rels := map[holderTok][]int{}
	for i, o := range c.ops {
		v := c.in(i)
		switch {
		case o.kind == kAcquire && o.res == history.OK:
			k := holderTok{v.Owner, v.Incarnation, c.out(i).Token}
			acqOK[k] = append(acqOK[k], i)
		case o.kind == kAcquire && o.res == history.Info:
			k := holderTok{v.Owner, v.Incarnation, 0}
			if _, ok := firstInfo[k]; !ok {
				firstInfo[k] = o.inv
			}
		case o.kind == kRelease && o.res == history.OK:
			k := holderTok{v.Owner, v.Incarnation, v.Token}
			rels[k] = append(rels[k], i)
		}
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
		for _, j := range acqOK[holderTok{v.Owner, v.Incarnation, t}] {
			if c.ops[j].inv < o.end {
				cands = append(cands, j)
			}
		}
		fi, hasInfo := firstInfo[holderTok{v.Owner, v.Incarnation, 0}]
		hasInfo = hasInfo && fi < o.end
		rev := c.events(i)
		if len(cands) == 0 {
			if hasInfo || c.partial {
				continue
			}
			if gs := c.tokenGrants[t]; len(gs) > 0 {
				g := c.grants[gs[0]]
				c.add(RenewValidity, append(rev, c.events(g.op)...),
					"renew token=%d by %s accepted, but token=%d was granted to %s", t, c.holder(i), t, c.holder(g.op))
			} else {
				c.add(RenewValidity, rev, "renew token=%d by %s accepted, but token=%d was never granted", t, c.holder(i), t)
			}
			continue
		}
		if hasInfo {
			continue
		}
		last, deadline := cands[0], int64(negInf)
		for _, j := range cands {
			if c.ops[j].end > c.ops[last].end {
				last = j
			}
			if d := c.endTime(j) + c.grantTTL(j); d > deadline {
				deadline = d
			}
		}
		lastOK := c.ops[last].end
		if tk == nil {
			tk = newTakeovers(c)
		}
		if g := tk.find(lastOK, o.inv, t); g >= 0 {
			gg := c.grants[g]
			c.add(RenewValidity, append(append(rev, lastOK, gg.from), gg.okLine),
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
		if deadline <= c.invTime(i) {
			ev := append(rev, c.ops[last].inv, lastOK)
			if ext >= 0 {
				ev = append(ev, c.events(ext)...)
			}
			c.add(RenewValidity, ev,
				"renew token=%d by %s invoked at time %d accepted after the lease's deadline (%d at the latest)",
				t, c.holder(i), c.invTime(i), deadline)
		}
	}
}

// checkAbsoluteValidity: an ok write with token t invoked at time W at or
// after the latest deadline its lease can have: the max over the ok acquires
// of t invoked before the write's ok line (ok time + ttl) and the renews of t
// invoked before it (ok: ok time + ttl; info or open: unbounded). Nothing is
// concluded when t was never granted, or when any acquire of the resource
// invoked before the write's ok line is info or open (it may have granted t).
func (c *resCtx) checkAbsoluteValidity() {
	acq := map[int64]*series{} // token -> ok acquires by invoke line, valued ok time + ttl
	for i, o := range c.ops {
		if o.kind == kAcquire && o.res == history.OK {
			t := c.out(i).Token
			if acq[t] == nil {
				acq[t] = &series{}
			}
			acq[t].add(o.inv, c.endTime(i)+c.grantTTL(i), i)
		}
	}
	for _, s := range acq {
		s.build()
	}
	var renews map[int64]*series
	for i, o := range c.ops {
		if o.kind != kWrite || o.res != history.OK {
			continue
		}
		if c.firstInfoAcq >= 0 && c.firstInfoAcq < o.end {
			continue
		}
		t := c.in(i).Token
		s := acq[t]
		if s == nil {
			continue
		}
		k := s.maxBefore(o.end)
		if k < 0 {
			continue
		}
		deadline, ev := s.val[k], c.events(s.ref[k])
		if renews == nil {
			renews = c.renewSeries()
		}
		if rs := renews[t]; rs != nil {
			if k := rs.maxBefore(o.end); k >= 0 && rs.val[k] > deadline {
				deadline = rs.val[k]
				ev = append(ev, c.events(rs.ref[k])...)
			}
		}
		if deadline <= c.invTime(i) {
			c.add(AbsoluteValidity, append(ev, c.events(i)...),
				"write token=%d invoked at time %d accepted after its lease's deadline (%d at the latest)",
				t, c.invTime(i), deadline)
		}
	}
}
