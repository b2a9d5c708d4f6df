package spec

import (
	"sort"

	"github.com/fencecheck/fencecheck/history"
)

// checkFencing: an accepted write with token t whose effect certainly came
// after (its invoke line, or the apply line that pins it, comes after) a line
// that showed the fence above t: the ok of an acquire that granted t' > t,
// the ok of an advance that returned f > t, the line that shows a write with
// t” > t accepted (its ok, or its apply), or a write completion or apply
// that reported the sink's fence f > t. An accepted write whose own reported
// fence (on its apply, else its ok) is above t is a violation too: the sink
// accepted t while its fence was newer (compared with it, or stored under it).
func (c *resCtx) checkFencing() {
	const (
		obsGrant = iota
		obsAdvance
		obsWrite
		obsFence
	)
	var obs series // observations of the fence, by line; ref: kind<<32 | line of the observation
	acc := c.acceptedWrites()
	for i, o := range c.ops {
		switch {
		case o.res == history.OK && o.kind == kAcquire:
			obs.add(o.end, c.out(i).Token, obsGrant)
		case o.res == history.OK && o.kind == kAdvance:
			obs.add(o.end, c.out(i).Token, obsAdvance)
		case o.kind == kWrite && o.res != history.Info && c.out(i).HasFence:
			obs.add(o.end, c.out(i).Fence, obsFence)
		}
	}
	for _, a := range c.applies {
		if a.v.HasFence {
			obs.add(a.line, a.v.Fence, obsFence)
		}
	}
	for _, w := range acc {
		obs.add(w.last, w.token, obsWrite)
	}
	obs.sortByLine()
	obs.build()
	for _, w := range acc {
		t := w.token
		wev := c.acceptedEvents(w)
		if w.hasFence && w.fence > t {
			c.add(Fencing, append(wev, w.fenceLine),
				"write token=%d accepted although the sink reported its fence at %d", t, w.fence)
			continue
		}
		k := obs.maxBefore(w.first)
		if k < 0 || obs.val[k] <= t {
			continue
		}
		ev := append([]int{obs.line[k]}, wev...)
		switch obs.ref[k] {
		case obsGrant:
			c.add(Fencing, ev, "write token=%d accepted after grant token=%d was observed", t, obs.val[k])
		case obsAdvance:
			c.add(Fencing, ev, "write token=%d accepted after the fence was observed at %d (advance)", t, obs.val[k])
		case obsFence:
			c.add(Fencing, ev, "write token=%d accepted after the sink reported its fence at %d", t, obs.val[k])
		default:
			c.add(Fencing, ev, "write token=%d accepted after a write with token=%d was accepted", t, obs.val[k])
		}
	}
}

// advIndex answers "which advances can be the last to take effect before an
// instant that lies after line lo and before line hi?": the ok advances
// invoked before hi that no other advance certainly follows before lo —
// with M the latest invoke line of an advance whose ok line is before lo,
// those whose ok line is after M. An advance with an unknown outcome
// invoked before hi may be the last, with any value.
type advIndex struct {
	c         *resCtx
	ends      []int // ok lines of the ok advances, sorted
	preInv    []int // running max of their invoke lines, in that order
	byInv     []int // ok advances (op indexes) by invoke line
	invs      []int
	preEnd    []int // running max of ok lines, in invoke order
	firstInfo int   // invoke line of the first advance with an unknown outcome, or -1
}

func (c *resCtx) newAdvIndex() *advIndex {
	x := &advIndex{c: c, firstInfo: -1}
	var byEnd []int
	for i, o := range c.ops {
		switch {
		case o.kind == kAdvance && o.res == history.OK:
			byEnd = append(byEnd, i)
			x.byInv = append(x.byInv, i)
			x.invs = append(x.invs, o.inv)
			x.preEnd = append(x.preEnd, max(o.end, last(x.preEnd)))
		case o.kind == kAdvance && o.res == history.Info && x.firstInfo < 0:
			x.firstInfo = o.inv
		}
	}
	sort.Slice(byEnd, func(a, b int) bool { return c.ops[byEnd[a]].end < c.ops[byEnd[b]].end })
	for _, i := range byEnd {
		x.ends = append(x.ends, c.ops[i].end)
		x.preInv = append(x.preInv, max(c.ops[i].inv, last(x.preInv)))
	}
	return x
}

func last(s []int) int {
	if len(s) == 0 {
		return -1
	}
	return s[len(s)-1]
}

// lastBefore returns whether an advance with an unknown outcome may be the
// last, how many advances certainly came before lo, and the candidates'
// smallest and largest values with an advance holding the largest (-1, and
// negInf / inf, when there is no candidate).
func (x *advIndex) lastBefore(lo, hi int) (unknown bool, certain int, minV, maxV int64, arg int) {
	if x.firstInfo >= 0 && x.firstInfo < hi {
		return true, 0, 0, 0, -1
	}
	certain = sort.SearchInts(x.ends, lo)
	m := -1
	if certain > 0 {
		m = x.preInv[certain-1]
	}
	minV, maxV, arg = inf, negInf, -1
	for j := sort.SearchInts(x.invs, hi) - 1; j >= 0 && x.preEnd[j] > m; j-- {
		i := x.byInv[j]
		if x.c.ops[i].end <= m {
			continue
		}
		v := x.c.out(i).Token
		minV = min(minV, v)
		if v > maxV {
			maxV, arg = v, i
		}
	}
	return false, certain, minV, maxV, arg
}

// checkFenceBeforeGrant: a grant of token t (its first ok line G) while the
// fence was certainly below t. The fence is the value of the last advance
// that took effect (0 at the start of a history that is not partial); it is
// shown by
//   - no advance with an unknown outcome invoked before G, and every advance
//     that can be the last to take effect before G returned less than t.
//     Those are the ok advances invoked before G that no other advance
//     certainly follows before G: with M the latest invoke line of an
//     advance whose ok line is before G, the ones whose ok line is after M.
//     When no advance is certainly before G, the fence may also be the
//     starting one: 0 (not partial), or unknown (partial: this rule is not
//     used);
//   - (partial, no advance certainly before G) every advance invoked before
//     G is ok and returned less than t, and every advance that can be the
//     first to take effect (invoked before the first ok line of an advance)
//     is ok and returned <= t: the fence at G is one of the former's, or the
//     starting one, which is below the first advance's value (the format's
//     promise that an advance raises the fence).
//
// A later accepted write with a smaller token shows nothing (it is itself a
// fencing violation, not a measure of the fence), and neither does a later
// advance when an advance >= t may have taken effect before G (advances that
// do not increase are a sink anomaly, not a late fence).
func (c *resCtx) checkFenceBeforeGrant() {
	x := c.newAdvIndex()
	var advUB series // by invoke line: ok advances' values, inf for info or open ones
	for i, o := range c.ops {
		switch {
		case o.kind == kAdvance && o.res == history.OK:
			advUB.add(o.inv, c.out(i).Token, i)
		case o.kind == kAdvance && o.res == history.Info:
			advUB.add(o.inv, inf, i)
		}
	}
	advUB.build()
	ub := func(line int) int64 { // the largest value of an advance invoked before line
		if k := advUB.maxBefore(line); k >= 0 {
			return advUB.val[k]
		}
		return negInf
	}
	for _, g := range c.grants {
		t := g.token
		G := g.okLine
		gev := []int{g.shown, g.okLine}
		unknown, certain, _, maxV, arg := x.lastBefore(G, G)
		if unknown {
			continue
		}
		if certain > 0 || !c.partial {
			switch {
			case maxV >= t:
			case arg < 0:
				c.add(FenceBeforeGrant, gev, "grant token=%d observed while the fence was still 0 (no advance before it)", t)
			default:
				c.add(FenceBeforeGrant, append(gev, c.events(arg)...),
					"grant token=%d observed while the fence was at most %d", t, maxV)
			}
			continue
		}
		// Partial, no advance certainly before G: the fence at G is that
		// of an advance invoked before G, or the starting one, below the
		// value of the first advance to take effect — one invoked before
		// the first ok line of an advance.
		if len(x.ends) == 0 || ub(G) >= t || ub(x.ends[0]) > t {
			continue
		}
		j := advUB.ref[advUB.maxBefore(x.ends[0])]
		c.add(FenceBeforeGrant, append(gev, c.events(j)...),
			"grant token=%d observed before the fence reached %d: the first advance returned at most %d", t, t, c.out(j).Token)
	}
}

// checkIdempotentResult: two accepted writes of one resultId with different
// payloads, or two accepted writes of one task under different resultIds with
// different payloads. Accepted: an ok write, or one an apply event shows
// applied (an apply that names no payload is left out). Outcomes alone
// decide it: no timing is involved.
func (c *resCtx) checkIdempotentResult() {
	byID := map[string]accepted{}   // resultId -> first accepted write
	byTask := map[string]accepted{} // task -> first accepted write
	for _, w := range c.acceptedWrites() {
		v := w.v
		if w.op < 0 && !v.HasPayload {
			continue
		}
		if p, ok := byID[v.ResultID]; !ok {
			byID[v.ResultID] = w
		} else if p.v.Payload != v.Payload {
			c.add(IdempotentResult, append(c.acceptedEvents(p), c.acceptedEvents(w)...),
				"resultId=%s accepted with payload %s (token=%d) and with payload %s (token=%d)",
				quote(v.ResultID), quote(p.v.Payload), p.token, quote(v.Payload), w.token)
		}
		if v.Task == "" {
			continue
		}
		if p, ok := byTask[v.Task]; !ok {
			byTask[v.Task] = w
		} else if p.v.ResultID != v.ResultID && p.v.Payload != v.Payload {
			c.add(IdempotentResult, append(c.acceptedEvents(p), c.acceptedEvents(w)...),
				"task %s had results accepted under resultId=%s (payload %s) and resultId=%s (payload %s)",
				quote(v.Task), quote(p.v.ResultID), quote(p.v.Payload), quote(v.ResultID), quote(v.Payload))
		}
	}
}

// checkResourceIndependence: a write with token t rejected as fenced (a fail
// fenced, between its invoke line W and its fail line F; or an apply event
// with error fenced, at its line W = F) when t is certainly the newest token
// granted and the fence was certainly t: a grant of t was ok before W; no
// grant of a token > t was first attempted before F, and no wild acquire
// (info or open, of a request with no single granted token) was invoked
// before F; and the fence at the rejection was t — the fence the sink
// reported for it, or else every advance that can be the last to take
// effect before the rejection returned t (at least one advance certainly
// came before W, and none with an unknown outcome was invoked before F). An
// accepted write, even of a higher token, does not move the fence: only
// advances do. In a partial history every grant, and the wild attempt of a
// request with no single granted token, may come before the first event
// (newResCtx): any grant of a token > t, or any such request, stops it.
func (c *resCtx) checkResourceIndependence() {
	var grantUB series // by first attempt line
	for gi, g := range c.grants {
		grantUB.add(g.from, g.token, gi)
	}
	grantUB.sortByLine()
	grantUB.build()
	var x *advIndex
	type rejected struct {
		op, first, last int
		fence           int64
		hasFence        bool
		ev              []int
	}
	var rs []rejected
	for i, o := range c.ops {
		if o.kind != kWrite {
			continue
		}
		if k, ok := c.applyOf[i]; ok {
			if a := c.applies[k]; !a.taken && a.v.Error == history.Fenced {
				fence, has := c.reportedFence(i, a)
				rs = append(rs, rejected{i, a.line, a.line, fence, has, append(c.events(i), a.line)})
			}
			continue
		}
		if o.res == history.Fail && c.out(i).Error == history.Fenced {
			rs = append(rs, rejected{i, o.inv, o.end, c.out(i).Fence, c.out(i).HasFence, c.events(i)})
		}
	}
	for _, a := range c.applies {
		if a.op < 0 && !a.taken && a.v.Error == history.Fenced {
			rs = append(rs, rejected{-1, a.line, a.line, a.v.Fence, a.v.HasFence, []int{a.line}})
		}
	}
	for _, r := range rs {
		var t int64
		if r.op >= 0 {
			t = c.in(r.op).Token
		} else {
			t = c.h.Events[r.first].Value.Token
		}
		gs := c.tokenGrants[t]
		if len(gs) == 0 || c.grants[gs[0]].okLine > r.first {
			continue
		}
		if k := grantUB.maxBefore(r.last); k >= 0 && grantUB.val[k] > t {
			continue
		}
		if c.firstWildAcq < r.last {
			continue
		}
		g := c.grants[gs[0]]
		if x == nil {
			x = c.newAdvIndex()
		}
		if r.hasFence {
			switch {
			case r.fence == t:
				c.add(ResourceIndependence, append([]int{g.okLine}, r.ev...),
					"write token=%d rejected as fenced although token=%d is the newest grant and the sink reported its fence at %d", t, t, t)
			case r.fence > t:
				// A fence above the newest grant that no advance of this
				// resource set (every advance that may be the last before
				// the rejection returned at most t): something else moved
				// it — another resource's grant, a forged write.
				if unknown, certain, _, maxV, _ := x.lastBefore(r.first, r.last); !unknown && certain > 0 && maxV <= t {
					c.add(ResourceIndependence, append([]int{g.okLine}, r.ev...),
						"write token=%d rejected as fenced although token=%d is the newest grant: the sink reported its fence at %d, which no advance of this resource set", t, t, r.fence)
				}
			}
			continue
		}
		unknown, certain, minV, maxV, arg := x.lastBefore(r.first, r.last)
		if unknown || certain == 0 || minV != t || maxV != t {
			continue
		}
		c.add(ResourceIndependence, append([]int{g.okLine, c.ops[arg].end}, r.ev...),
			"write token=%d rejected as fenced although token=%d is the newest grant and the fence was observed at %d", t, t, t)
	}
}
