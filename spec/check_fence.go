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
// compared t with a newer fence and accepted it.
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
//     G is ok and returned less than t, and an advance invoked after G
//     returned f <= t while every advance invoked before its ok line is ok
//     and returned <= t: the first advance that took effect returned <= t,
//     and the fence before it was lower (the format's promise that an
//     advance raises the fence).
//
// A later accepted write with a smaller token shows nothing (it is itself a
// fencing violation, not a measure of the fence), and neither does a later
// advance when an advance >= t may have taken effect before G (advances that
// do not increase are a sink anomaly, not a late fence).
func (c *resCtx) checkFenceBeforeGrant() {
	var advUB series // by invoke line: ok advances' values, inf for info or open ones
	var byEnd []int  // ok advances by ok line
	for i, o := range c.ops {
		switch {
		case o.kind == kAdvance && o.res == history.OK:
			advUB.add(o.inv, c.out(i).Token, i)
			byEnd = append(byEnd, i)
		case o.kind == kAdvance && o.res == history.Info:
			advUB.add(o.inv, inf, i)
		}
	}
	advUB.build()
	sort.Slice(byEnd, func(a, b int) bool { return c.ops[byEnd[a]].end < c.ops[byEnd[b]].end })
	ends := make([]int, len(byEnd))
	preInv := make([]int, len(byEnd)) // running max of invoke lines in ok-line order
	for k, i := range byEnd {
		ends[k] = c.ops[i].end
		preInv[k] = c.ops[i].inv
		if k > 0 {
			preInv[k] = max(preInv[k], preInv[k-1])
		}
	}
	firstInfo := -1
	for _, i := range advUB.ref {
		if c.ops[i].res == history.Info {
			firstInfo = c.ops[i].inv
			break
		}
	}
	ub := func(line int) int64 { // the largest value of an advance invoked before line
		if k := advUB.maxBefore(line); k >= 0 {
			return advUB.val[k]
		}
		return negInf
	}
	var wit series // partial: witnesses by invoke line, valued by the smallest token they show late
	if c.partial {
		for i, o := range c.ops {
			if o.kind == kAdvance && o.res == history.OK {
				wit.add(o.inv, max(c.out(i).Token, ub(o.end)), i)
			}
		}
		wit.build()
	}
	for _, g := range c.grants {
		t := g.token
		G := g.okLine
		gev := []int{g.from, g.okLine}
		if firstInfo >= 0 && firstInfo < G {
			continue
		}
		k := sort.SearchInts(ends, G) // byEnd[:k] are certainly before G
		if k > 0 || !c.partial {
			m := -1
			if k > 0 {
				m = preInv[k-1]
			}
			// The candidates: ok advances invoked before G whose ok line is
			// after m (those certainly before G with their ok after m, and
			// those still open at G).
			best, bestVal := -1, int64(negInf)
			for _, i := range byEnd[sort.SearchInts(ends, m+1):] {
				if o := c.ops[i]; o.inv < G && c.out(i).Token > bestVal {
					best, bestVal = i, c.out(i).Token
				}
			}
			switch {
			case bestVal >= t:
			case best < 0:
				c.add(FenceBeforeGrant, gev, "grant token=%d observed while the fence was still 0 (no advance before it)", t)
			default:
				c.add(FenceBeforeGrant, append(gev, c.events(best)...),
					"grant token=%d observed while the fence was at most %d", t, bestVal)
			}
			continue
		}
		if ub(G) >= t {
			continue
		}
		if w := wit.minAfter(G); w >= 0 && wit.val[w] <= t {
			j := wit.ref[w]
			c.add(FenceBeforeGrant, append(gev, c.events(j)...),
				"grant token=%d observed before the fence reached %d: a later advance returned %d", t, t, c.out(j).Token)
		}
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
// before F; every advance invoked before F was ok and returned <= t; and the
// fence was shown at t: an advance that returned t was ok before W, or the
// sink reported fence t for this very rejection. (An accepted write, even of
// a higher token, does not move the fence: only advances do.)
func (c *resCtx) checkResourceIndependence() {
	var grantUB, adv series // by first attempt / invoke line
	for gi, g := range c.grants {
		grantUB.add(g.from, g.token, gi)
	}
	grantUB.sortByLine()
	grantUB.build()
	seenAt := map[int64]int{} // fence value -> earliest ok line of an advance that returned it
	for i, o := range c.ops {
		switch {
		case o.kind == kAdvance && o.res == history.OK:
			v := c.out(i).Token
			adv.add(o.inv, v, i)
			if l, ok := seenAt[v]; !ok || o.end < l {
				seenAt[v] = o.end
			}
		case o.kind == kAdvance && o.res == history.Info:
			adv.add(o.inv, inf, i)
		}
	}
	adv.build()
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
				rs = append(rs, rejected{i, a.line, a.line, a.v.Fence, a.v.HasFence, append(c.events(i), a.line)})
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
		if c.firstWildAcq >= 0 && c.firstWildAcq < r.last {
			continue
		}
		if k := adv.maxBefore(r.last); k >= 0 && adv.val[k] > t {
			continue
		}
		g := c.grants[gs[0]]
		if r.hasFence {
			if r.fence == t {
				c.add(ResourceIndependence, append([]int{g.okLine}, r.ev...),
					"write token=%d rejected as fenced although token=%d is the newest grant and the sink reported its fence at %d", t, t, t)
			}
			continue
		}
		if l, ok := seenAt[t]; ok && l < r.first {
			c.add(ResourceIndependence, append([]int{g.okLine, l}, r.ev...),
				"write token=%d rejected as fenced although token=%d is the newest grant and the fence was observed at %d", t, t, t)
		}
	}
}
