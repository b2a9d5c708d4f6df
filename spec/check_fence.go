package spec

import "github.com/fencecheck/fencecheck/history"

// checkFencing: an ok write with token t whose invoke line comes after the ok
// line of an acquire that granted t' > t, of an advance that returned a fence
// f > t, or of a write with token t” > t that was accepted.
func (c *resCtx) checkFencing() {
	var obs series // observations of the fence, by ok line
	for i, o := range c.ops {
		if o.res != history.OK {
			continue
		}
		switch o.kind {
		case kAcquire, kAdvance:
			obs.add(o.end, c.out(i).Token, i)
		case kWrite:
			obs.add(o.end, c.in(i).Token, i)
		}
	}
	obs.sortByLine()
	obs.build()
	for i, o := range c.ops {
		if o.kind != kWrite || o.res != history.OK {
			continue
		}
		t := c.in(i).Token
		k := obs.maxBefore(o.inv)
		if k < 0 || obs.val[k] <= t {
			continue
		}
		j := obs.ref[k]
		ev := []int{c.ops[j].end, o.inv, o.end}
		switch c.ops[j].kind {
		case kAcquire:
			c.add(Fencing, ev, "write token=%d accepted after grant token=%d was observed", t, obs.val[k])
		case kAdvance:
			c.add(Fencing, ev, "write token=%d accepted after the fence was observed at %d (advance)", t, obs.val[k])
		default:
			c.add(Fencing, ev, "write token=%d accepted after a write with token=%d was accepted", t, obs.val[k])
		}
	}
}

// checkFenceBeforeGrant: a grant of token t (its ok line G) while the fence
// was certainly below t, shown by
//   - (not partial) every advance invoked before G is ok and returned less
//     than t (or there is none: the fence was still 0);
//   - an advance invoked after G returned f <= t (the fence was below f then);
//   - a write with token t” < t invoked after G was accepted (the fence was
//     t” then).
//
// The fence never decreases, so each shows it was below t at G.
func (c *resCtx) checkFenceBeforeGrant() {
	var advUB, advOK, wrOK series // by invoke line
	for i, o := range c.ops {
		switch {
		case o.kind == kAdvance && o.res == history.OK:
			advUB.add(o.inv, c.out(i).Token, i)
			advOK.add(o.inv, c.out(i).Token, i)
		case o.kind == kAdvance && o.res == history.Info:
			advUB.add(o.inv, inf, i)
		case o.kind == kWrite && o.res == history.OK:
			wrOK.add(o.inv, c.in(i).Token, i)
		}
	}
	advUB.build()
	advOK.build()
	wrOK.build()
	for _, g := range c.grants {
		t := g.token
		gev := c.events(g.op)
		if !c.partial {
			k := advUB.maxBefore(g.okLine)
			if k < 0 {
				c.add(FenceBeforeGrant, gev, "grant token=%d observed while the fence was still 0 (no advance before it)", t)
				continue
			}
			if advUB.val[k] < t {
				c.add(FenceBeforeGrant, append(gev, c.events(advUB.ref[k])...),
					"grant token=%d observed while the fence was at most %d", t, advUB.val[k])
				continue
			}
		}
		if k := advOK.minAfter(g.okLine); k >= 0 && advOK.val[k] <= t {
			c.add(FenceBeforeGrant, append(gev, c.events(advOK.ref[k])...),
				"grant token=%d observed before the fence reached %d: a later advance returned %d", t, t, advOK.val[k])
			continue
		}
		if k := wrOK.minAfter(g.okLine); k >= 0 && wrOK.val[k] < t {
			c.add(FenceBeforeGrant, append(gev, c.events(wrOK.ref[k])...),
				"grant token=%d observed before the fence reached %d: a later write with token=%d was accepted", t, t, wrOK.val[k])
		}
	}
}

// checkIdempotentResult: two accepted writes of one resultId with different
// payloads, or two accepted writes of one task under different resultIds with
// different payloads. Outcomes alone decide it: no timing is involved.
func (c *resCtx) checkIdempotentResult() {
	byID := map[string]int{}   // resultId -> first accepted write
	byTask := map[string]int{} // task -> first accepted write
	for i, o := range c.ops {
		if o.kind != kWrite || o.res != history.OK {
			continue
		}
		v := c.in(i)
		if j, ok := byID[v.ResultID]; !ok {
			byID[v.ResultID] = i
		} else if w := c.in(j); w.Payload != v.Payload {
			c.add(IdempotentResult, append(c.events(j), c.events(i)...),
				"resultId=%s accepted with payload %s (token=%d) and with payload %s (token=%d)",
				quote(v.ResultID), quote(w.Payload), w.Token, quote(v.Payload), v.Token)
		}
		if v.Task == "" {
			continue
		}
		if j, ok := byTask[v.Task]; !ok {
			byTask[v.Task] = i
		} else if w := c.in(j); w.ResultID != v.ResultID && w.Payload != v.Payload {
			c.add(IdempotentResult, append(c.events(j), c.events(i)...),
				"task %s had results accepted under resultId=%s (payload %s) and resultId=%s (payload %s)",
				quote(v.Task), quote(w.ResultID), quote(w.Payload), quote(v.ResultID), quote(v.Payload))
		}
	}
}

// checkResourceIndependence: a write with token t rejected as fenced (lines
// W..F) where t is certainly the newest token granted and the fence was
// certainly t: an acquire granting t was ok before W; every acquire invoked
// before F failed or was ok with a token <= t (none info or open); every
// advance invoked before F was ok and returned <= t; and the fence was
// observed at t (an advance returning t or a write with token t accepted)
// before W.
func (c *resCtx) checkResourceIndependence() {
	var acq, adv, seen series // acq, adv by invoke line; seen by ok line
	for i, o := range c.ops {
		switch {
		case o.kind == kAcquire && o.res == history.OK:
			acq.add(o.inv, c.out(i).Token, i)
		case o.kind == kAcquire && o.res == history.Info:
			acq.add(o.inv, inf, i)
		case o.kind == kAdvance && o.res == history.OK:
			adv.add(o.inv, c.out(i).Token, i)
			seen.add(o.end, c.out(i).Token, i)
		case o.kind == kAdvance && o.res == history.Info:
			adv.add(o.inv, inf, i)
		case o.kind == kWrite && o.res == history.OK:
			seen.add(o.end, c.in(i).Token, i)
		}
	}
	acq.build()
	adv.build()
	seen.sortByLine()
	seen.build()
	for i, o := range c.ops {
		if o.kind != kWrite || o.res != history.Fail || c.out(i).Error != history.Fenced {
			continue
		}
		t := c.in(i).Token
		gs := c.tokenGrants[t]
		if len(gs) == 0 || c.grants[gs[0]].okLine > o.inv {
			continue
		}
		if k := acq.maxBefore(o.end); k >= 0 && acq.val[k] > t {
			continue
		}
		if k := adv.maxBefore(o.end); k >= 0 && adv.val[k] > t {
			continue
		}
		k := seen.maxBefore(o.inv)
		if k < 0 || seen.val[k] != t {
			continue
		}
		g := c.grants[gs[0]]
		c.add(ResourceIndependence, []int{g.okLine, c.ops[seen.ref[k]].end, o.inv, o.end},
			"write token=%d rejected as fenced although token=%d is the newest grant and the fence was observed at %d", t, t, t)
	}
}
