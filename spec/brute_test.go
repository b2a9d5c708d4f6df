package spec

import (
	"math"
	"slices"
	"sort"

	"github.com/fencecheck/fencecheck/history"
)

// A brute-force checker for small histories, the reference of the
// differential test (diff_test.go). It shares no code with Check: it pairs
// events with history.Ops, enumerates every concrete timing that fits the
// observations, evaluates each invariant's definition on each timing, and
// calls an invariant certain when every timing violates it — the contract's
// rule, applied literally.
//
// A concrete timing gives every operation that may have taken effect an
// effect point, or none:
//   - an ok operation (and a fail write: its rejection) takes effect once,
//     strictly between its invoke line and its completion line; a fail
//     acquire, renew or release never does;
//   - an info or open one takes effect after its invoke line (even after
//     its info line, even after the last line) or never;
//   - a write that an apply event decided takes effect at the apply line;
//   - a grant (the first ok of a request with a token) takes effect during
//     one of its attempts: the request's info or open attempts and its ok
//     attempts with that token, before the grant's ok line; its ttl is that
//     attempt's; the request's other attempts are replays (no effect);
//   - a wild acquire (info or open, of a request that has no single granted
//     token) may grant any token (one of the history's, or a fresh one) to
//     its owner, for its ttl, or nothing;
//   - in a partial history every request (every owner, incarnation and
//     requestId of an acquire) has one more attempt, info, before the first
//     event, at an unknown time, for an unknown ttl: a grant may take effect
//     before the first event (slot preSlot) or anywhere before its ok line,
//     and a request with no single granted token has a wild attempt that may
//     take effect there or anywhere after. The unknown ttl is the one least
//     violating for the invariant judged (each is monotone in it: the
//     shortest for exclusive-lease, the longest for renew-validity and
//     absolute-validity; the others do not read it), so an invariant is
//     certain when every ttl violates it; a grant before the first event
//     has expired by it (exclusive-lease) or never expires, and the lease a
//     renew speaks of is, at the first event, any renew's token and holder
//     (renew-validity).
//
// Between lines p and p+1 an effect has an integer time in [t_p, t_p+1] (the
// clock is the history's, in whole units); after the last line, up to the
// largest ttl + 1 later. Effects at one line gap and time may come in any
// order. The enumeration stops at the first timing that does not violate
// the invariant, and gives up (unknown) past a budget of timings.

// bOp is an operation as the brute force sees it.
type bOp struct {
	f        string
	proc     string
	inv, end int // end -1: open
	res      history.Type
	in, out  history.Value
	apply    int // line of the apply event that decided it, -1
	av       history.Value
}

type bReq struct{ owner, inc, id string }

type bGrant struct {
	token    int64
	holder   string
	okLine   int
	key      bReq
	attempts []int
}

type brute struct {
	h        *history.History
	n        int
	partial  bool
	ops      []bOp
	unpinned []int // lines of apply events matching no write
	grants   []bGrant
	wild     []int
	preWild  []int // partial: one op of each request with no single granted token (its attempt before the first event is wild)
	horizon  int64
	tokens   []int64 // every token value in the history
	dup      func(string) bool
	budget   int
	unknown  bool
}

const bBig = int64(math.MaxInt64 / 4)

func newBrute(h *history.History, budget int) *brute {
	b := &brute{h: h, n: len(h.Events), partial: h.Header.Partial, budget: budget}
	dups, all := map[string]bool{}, false
	var maxTTL int64
	tokSet := map[int64]bool{}
	for _, e := range h.Events {
		if e.F == history.Duplicate {
			p := e.Process
			if p == history.Nemesis {
				p = e.Value.Target
			}
			if p == "" || p == history.Nemesis {
				all = true
			}
			dups[p] = true
		}
		maxTTL = max(maxTTL, e.Value.TTL)
		if e.Value.Token > 0 {
			tokSet[e.Value.Token] = true
		}
		if e.Value.HasFence {
			tokSet[e.Value.Fence] = true
		}
	}
	b.dup = func(p string) bool { return all || dups[p] }
	b.horizon = maxTTL + 1
	for t := range tokSet {
		b.tokens = append(b.tokens, t)
	}
	slices.Sort(b.tokens)
	for _, o := range h.Ops() {
		e := h.Events[o.Invoke]
		op := bOp{f: e.F, proc: e.Process, inv: o.Invoke, end: o.Complete, res: h.Result(o), in: e.Value, apply: -1}
		if o.Complete >= 0 {
			op.out = h.Events[o.Complete].Value
		}
		b.ops = append(b.ops, op)
	}
	// Apply events: the write by value.writer with the same values, invoked
	// before, not yet decided, not contradicted; the one whose window holds
	// the apply, else the latest earlier info one.
	for a, e := range h.Events {
		if e.F != history.Apply {
			continue
		}
		v := e.Value
		taken := v.Outcome != ""
		best := -1
		for i := range b.ops {
			o := &b.ops[i]
			if o.f != history.Write || o.proc != v.Writer || o.inv > a || o.apply >= 0 || o.in.Token != v.Token ||
				o.in.ResultID != v.ResultID || v.HasPayload && o.in.Payload != v.Payload || v.Task != "" && o.in.Task != v.Task {
				continue
			}
			if !b.dup(v.Writer) && (o.res == history.OK && !taken || o.res == history.Fail && taken) {
				continue
			}
			if o.end >= 0 && o.end < a && o.res != history.Info {
				continue
			}
			best = i
			if o.end < 0 || o.end > a {
				break
			}
		}
		if best >= 0 {
			b.ops[best].apply, b.ops[best].av = a, v
		} else {
			b.unpinned = append(b.unpinned, a)
		}
	}
	// Grants and wild acquires.
	toks := map[bReq]map[int64]bool{}
	for _, o := range b.ops {
		if o.f == history.Acquire && o.res == history.OK {
			k := bReq{o.in.Owner, o.in.Incarnation, o.in.RequestID}
			if toks[k] == nil {
				toks[k] = map[int64]bool{}
			}
			toks[k][o.out.Token] = true
		}
	}
	if b.partial {
		reqSeen := map[bReq]bool{}
		for i, o := range b.ops {
			k := bReq{o.in.Owner, o.in.Incarnation, o.in.RequestID}
			if o.f == history.Acquire && !reqSeen[k] {
				reqSeen[k] = true
				if len(toks[k]) != 1 {
					b.preWild = append(b.preWild, i)
				}
			}
		}
	}
	seen := map[bReq]map[int64]bool{}
	order := []int{}
	for i, o := range b.ops {
		if o.f == history.Acquire && o.res == history.OK {
			order = append(order, i)
		}
		if o.f == history.Acquire && o.res == history.Info && len(toks[(bReq{o.in.Owner, o.in.Incarnation, o.in.RequestID})]) != 1 {
			b.wild = append(b.wild, i)
		}
	}
	sort.SliceStable(order, func(x, y int) bool { return b.ops[order[x]].end < b.ops[order[y]].end })
	for _, i := range order {
		o := b.ops[i]
		k := bReq{o.in.Owner, o.in.Incarnation, o.in.RequestID}
		if seen[k] == nil {
			seen[k] = map[int64]bool{}
		}
		if seen[k][o.out.Token] {
			continue
		}
		seen[k][o.out.Token] = true
		g := bGrant{token: o.out.Token, holder: o.in.Owner + "/" + o.in.Incarnation, okLine: o.end, key: k}
		for j, a := range b.ops {
			if a.f != history.Acquire || a.res == history.Fail || a.inv >= o.end ||
				(bReq{a.in.Owner, a.in.Incarnation, a.in.RequestID}) != k || a.res == history.OK && a.out.Token != g.token {
				continue
			}
			g.attempts = append(g.attempts, j)
		}
		b.grants = append(b.grants, g)
	}
	return b
}

func (b *brute) time(line int) int64 { return b.h.Events[line].Time }

// place is one way an item can take effect: in slot (2p+1: between lines p
// and p+1; 2a: at line a) at a time in [t0, t1], with a ttl.
type place struct {
	slot   int
	t0, t1 int64
	ttl    int64
}

// item is something that may take effect once in a timing.
type item struct {
	kind     int // one of the k* kinds below
	op       int // op index (grant: index in b.grants)
	places   []place
	optional bool
	choices  []int64 // wild: token; info advance: value
}

const (
	iGrant = iota
	iWild
	iRenew
	iRelease
	iAdvance
	iWrite // accepted
	iReject
	iStart // the lease at the first event of a partial history (renew-validity)
)

type beff struct {
	it     *item
	slot   int
	time   int64
	ttl    int64
	choice int64
}

// gaps returns the places between line from and line to (exclusive), or to
// the end and past it when to < 0.
func (b *brute) gaps(from, to int, ttl int64) []place {
	last := to - 1
	if to < 0 {
		last = b.n - 1
	}
	var ps []place
	for p := from; p <= last; p++ {
		t1 := b.time(p) + b.horizon
		if p+1 < b.n {
			t1 = b.time(p + 1)
		}
		ps = append(ps, place{2*p + 1, b.time(p), t1, ttl})
	}
	return ps
}

// opItem is the item of op i (a renew, release, advance or write), or nil
// when it cannot take effect.
func (b *brute) opItem(kind, i int) *item {
	o := b.ops[i]
	it := &item{kind: kind, op: i}
	// An apply pins the effect it shows; a duplicated write whose client
	// saw the other answer took that effect within its own window.
	if o.apply >= 0 && (kind == iWrite) == (o.av.Outcome != "") {
		it.places = []place{{2 * o.apply, b.time(o.apply), b.time(o.apply), 0}}
		return it
	}
	switch o.res {
	case history.OK, history.Fail:
		if o.res == history.Fail && kind != iReject {
			return nil
		}
		it.places = b.gaps(o.inv, o.end, o.in.TTL)
	default:
		it.places, it.optional = b.gaps(o.inv, -1, o.in.TTL), true
	}
	return it
}

// preSlot is the slot of an effect before the first event of a partial
// history (of a request's attempt before it).
const preSlot = -1

// prePlaces are the places of an attempt before the first event of a
// partial history, with the ttl given, that takes effect before line to (-1:
// at any instant): before the first event, or after it.
func (b *brute) prePlaces(to int, ttl int64) []place {
	var t0 int64
	if b.n > 0 {
		t0 = b.time(0)
	}
	ps := []place{{preSlot, t0, t0, ttl}}
	if b.n > 0 {
		ps = append(ps, b.gaps(0, to, ttl)...)
	}
	return ps
}

// grantItems returns an item per grant. In a partial history each may take
// effect before the first event or anywhere before its ok line (the
// request's attempt before the first event), for preTTL, the ttl least
// violating for the invariant judged: that covers its attempts in the
// history, each with its own ttl.
func (b *brute) grantItems(preTTL int64) []*item {
	var out []*item
	for gi, g := range b.grants {
		it := &item{kind: iGrant, op: gi}
		if b.partial {
			it.places = b.prePlaces(g.okLine, preTTL)
			out = append(out, it)
			continue
		}
		for _, a := range g.attempts {
			o := b.ops[a]
			to := o.end
			if o.res != history.OK {
				to = -1
			}
			for _, p := range b.gaps(o.inv, to, o.in.TTL) {
				if p.slot < 2*g.okLine {
					it.places = append(it.places, p)
				}
			}
		}
		out = append(out, it)
	}
	return out
}

// wildItems returns an item per wild acquire, granting one of choices to
// its owner (-1 last: also a fresh token of its own) or nothing; in a
// partial history also one per request with no single granted token (its
// attempt before the first event), at any instant, for preTTL (as in
// grantItems).
func (b *brute) wildItems(choices []int64, preTTL int64) []*item {
	var out []*item
	for _, i := range b.wild {
		out = append(out, b.opItem(iWild, i))
	}
	for _, i := range b.preWild {
		out = append(out, &item{kind: iWild, op: i, places: b.prePlaces(-1, preTTL), optional: true})
	}
	for k, it := range out {
		it.choices = choices
		if len(choices) > 0 && choices[len(choices)-1] == -1 {
			// -1 stands for a fresh token: one of its own for each.
			it.choices = append(slices.Clone(choices[:len(choices)-1]), int64(-1-k))
		}
	}
	return out
}

// certain enumerates the timings of items and reports whether every one
// violates (pred returns true for a violating timing). timed: enumerate the
// times within each place; else every effect takes its place's first time.
func (b *brute) certain(items []*item, timed bool, pred func([]beff) bool) bool {
	var cur []beff
	count := 0
	leaf := func() bool { // false: a non-violating timing exists
		seq := slices.Clone(cur)
		sort.SliceStable(seq, func(x, y int) bool {
			if seq[x].slot != seq[y].slot {
				return seq[x].slot < seq[y].slot
			}
			return seq[x].time < seq[y].time
		})
		// Permute each run of equal (slot, time).
		var rec func(k int) bool
		rec = func(k int) bool {
			if k >= len(seq) {
				count++
				if count > b.budget {
					b.unknown = true
					return false
				}
				return pred(seq)
			}
			e := k
			for e < len(seq) && seq[e].slot == seq[k].slot && seq[e].time == seq[k].time {
				e++
			}
			if e-k == 1 {
				return rec(e)
			}
			return permute(seq[k:e], 0, func() bool { return rec(e) })
		}
		return rec(0)
	}
	var dfs func(k int) bool
	dfs = func(k int) bool {
		if b.unknown {
			return false
		}
		if k == len(items) {
			return leaf()
		}
		it := items[k]
		if it.optional && !dfs(k+1) {
			return false
		}
		choices := it.choices
		if len(choices) == 0 {
			choices = []int64{0}
		}
		for _, p := range it.places {
			t1 := p.t1
			if !timed {
				t1 = p.t0
			}
			for t := p.t0; t <= t1; t++ {
				for _, c := range choices {
					cur = append(cur, beff{it, p.slot, t, p.ttl, c})
					ok := dfs(k + 1)
					cur = cur[:len(cur)-1]
					if !ok {
						return false
					}
				}
			}
		}
		return true
	}
	return dfs(0)
}

// permute calls f for every order of s (in place); false from f stops it.
func permute(s []beff, k int, f func() bool) bool {
	if k == len(s) {
		return f()
	}
	for i := k; i < len(s); i++ {
		s[k], s[i] = s[i], s[k]
		ok := permute(s, k+1, f)
		s[k], s[i] = s[i], s[k]
		if !ok {
			return false
		}
	}
	return true
}

func (b *brute) opsOf(f string, kind int) []*item {
	var out []*item
	for i, o := range b.ops {
		if o.f == f {
			if it := b.opItem(kind, i); it != nil {
				out = append(out, it)
			}
		}
	}
	return out
}

// accepted reports whether op i was certainly accepted by the sink.
func (b *brute) accepted(i int) bool {
	o := b.ops[i]
	if o.f != history.Write {
		return false
	}
	return o.apply >= 0 && o.av.Outcome != "" || o.res == history.OK
}

// Certain returns, per invariant id, whether every timing violates it, and
// the ids it could not decide within its budget.
func (b *brute) Certain() (map[string]bool, []string) {
	out := map[string]bool{}
	var unknown []string
	run := func(id string, f func() bool) {
		b.unknown = false
		v := f()
		if b.unknown {
			unknown = append(unknown, id)
			return
		}
		out[id] = v
	}
	run(Fencing, b.fencing)
	run(ExclusiveLease, b.exclusiveLease)
	run(TokenMonotonic, b.tokenMonotonic)
	run(FenceBeforeGrant, b.fenceBeforeGrant)
	run(IdempotentResult, b.idempotentResult)
	run(RenewValidity, b.renewValidity)
	run(AcquireIdempotent, b.acquireIdempotent)
	run(LinearizableSink, b.linearizableSink)
	run(ResourceIndependence, b.resourceIndependence)
	run(AbsoluteValidity, b.absoluteValidity)
	return out, unknown
}

// bruteVerdict is the brute force's verdict on one resource: per invariant
// id, whether every timing violates it, and the ids it could not decide.
type bruteVerdict struct {
	resource string
	certain  map[string]bool
	unknown  []string
}

// bruteByResource runs the brute force on each resource of h alone (in the
// order they first appear): the resource's events and the events that name
// none (the faults), in their order. Every rule compares operations on one
// resource (docs/invariants.md), and a timing of h is a timing of each
// resource chosen independently, so an invariant is certain on h exactly
// where it is certain on one resource. This split is written apart from
// Check's grouping, which it checks.
func bruteByResource(h *history.History, budget int) []bruteVerdict {
	var out []bruteVerdict
	for _, r := range resourcesOf(h) {
		sub, _ := aloneOn(h, r)
		c, u := newBrute(sub, budget).Certain()
		out = append(out, bruteVerdict{r, c, u})
	}
	return out
}

// resourcesOf lists the resources h's events name, in the order they first
// appear.
func resourcesOf(h *history.History) []string {
	var rs []string
	for _, e := range h.Events {
		if e.Resource != "" && !slices.Contains(rs, e.Resource) {
			rs = append(rs, e.Resource)
		}
	}
	return rs
}

// aloneOn returns the history of resource r's events and the events that
// name none (the faults), in their order, and each one's position in h.
func aloneOn(h *history.History, r string) (*history.History, []int) {
	sub := &history.History{HasHeader: h.HasHeader, Header: h.Header}
	var pos []int
	for i, e := range h.Events {
		if e.Resource == r || e.Resource == "" {
			sub.Events = append(sub.Events, e)
			pos = append(pos, i)
		}
	}
	return sub, pos
}

// verdictOn returns the verdict on resource r, and whether there is one.
func verdictOn(vs []bruteVerdict, r string) (bruteVerdict, bool) {
	i := slices.IndexFunc(vs, func(v bruteVerdict) bool { return v.resource == r })
	if i < 0 {
		return bruteVerdict{}, false
	}
	return vs[i], true
}

// fencing: an accepted write with token t takes effect after a line that
// showed the fence above t (an ok acquire of t' > t, an ok advance to f > t,
// a line showing a write of t” > t accepted, a reported fence f > t), or is
// accepted with its own reported fence above t. Each write's effect is
// independent of the others: certain iff one write violates wherever its
// effect lies.
func (b *brute) fencing() bool {
	type obs struct {
		line int
		val  int64
	}
	var os []obs
	for i, o := range b.ops {
		switch {
		case o.res == history.OK && (o.f == history.Acquire || o.f == history.Advance):
			os = append(os, obs{o.end, o.out.Token})
		case b.accepted(i) && o.apply >= 0 && o.av.Outcome != "":
			os = append(os, obs{o.apply, o.in.Token})
		case b.accepted(i):
			os = append(os, obs{o.end, o.in.Token})
		}
		if o.f == history.Write && o.res != history.Info && o.out.HasFence {
			os = append(os, obs{o.end, o.out.Fence})
		}
	}
	for i, e := range b.h.Events {
		if e.F == history.Apply {
			if e.Value.HasFence {
				os = append(os, obs{i, e.Value.Fence})
			}
			if e.Value.Outcome != "" && slices.Contains(b.unpinned, i) {
				os = append(os, obs{i, e.Value.Token})
			}
		}
	}
	check := func(t int64, slot int, fence int64, hasFence bool) bool {
		if hasFence && fence > t {
			return true
		}
		for _, x := range os {
			if 2*x.line < slot && x.val > t {
				return true
			}
		}
		return false
	}
	for i, o := range b.ops {
		if !b.accepted(i) {
			continue
		}
		fence, has := o.out.Fence, o.out.HasFence && o.res == history.OK
		if o.apply >= 0 && o.av.Outcome != "" && o.av.HasFence {
			fence, has = o.av.Fence, true
		}
		all := true
		for _, p := range b.opItem(iWrite, i).places {
			if !check(o.in.Token, p.slot, fence, has) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	for _, a := range b.unpinned {
		v := b.h.Events[a].Value
		if v.Outcome != "" && check(v.Token, 2*a, v.Fence, v.HasFence) {
			return true
		}
	}
	return false
}

// exclusiveLease: a token is valid from a grant until a release or its
// deadline; every grant or renew that takes effect while the token is held
// sets the deadline to its instant + ttl (a renew in a partial history of a
// token neither granted nor released yet: the token was granted before the
// first event). Violated when, just after some effect, two different tokens
// are held with deadlines after its time.
func (b *brute) exclusiveLease() bool {
	items := b.grantItems(1)
	items = append(items, b.wildItems(append(slices.Clone(b.tokens), -1), 1)...)
	items = append(items, b.opsOf(history.Renew, iRenew)...)
	items = append(items, b.opsOf(history.Release, iRelease)...)
	return b.certain(items, true, func(seq []beff) bool {
		held, ever, rel := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
		dl, ttl := map[int64]int64{}, map[int64]int64{}
		for _, e := range seq {
			switch e.it.kind {
			case iGrant, iWild:
				t := e.choice
				if e.it.kind == iGrant {
					t = b.grants[e.it.op].token
				}
				held[t], ever[t], dl[t], ttl[t] = true, true, e.time+e.ttl, e.ttl
				if e.slot == preSlot { // before the first event: expired by it
					dl[t] = math.MinInt64
					continue
				}
			case iRenew:
				o := b.ops[e.it.op]
				t, l := o.in.Token, o.in.TTL
				if l == 0 {
					l = ttl[t]
				}
				if held[t] || b.partial && !ever[t] && !rel[t] {
					held[t], dl[t] = true, e.time+l
				}
			case iRelease:
				t := b.ops[e.it.op].in.Token
				held[t], rel[t] = false, true
			}
			valid := 0
			for t, h := range held {
				if h && e.time < dl[t] {
					valid++
				}
			}
			if valid >= 2 {
				return true
			}
		}
		return false
	})
}

// tokenMonotonic: one token granted to two requests, or a grant that takes
// effect after a grant of a larger token.
func (b *brute) tokenMonotonic() bool {
	by := map[int64]bReq{}
	for _, g := range b.grants {
		if k, ok := by[g.token]; ok && k != g.key {
			return true
		}
		by[g.token] = g.key
	}
	return b.certain(b.grantItems(0), false, func(seq []beff) bool {
		var top int64
		for _, e := range seq {
			t := b.grants[e.it.op].token
			if t < top {
				return true
			}
			top = max(top, t)
		}
		return false
	})
}

// fenceBeforeGrant: at a grant's first ok line the fence — the value of the
// last advance that took effect before it (an info advance: any value; none:
// 0, or in a partial history a value below the first advance that takes
// effect, anything if none does) — is below the token.
func (b *brute) fenceBeforeGrant() bool {
	if len(b.grants) == 0 {
		return false
	}
	items := b.opsOf(history.Advance, iAdvance)
	return b.certain(items, false, func(seq []beff) bool {
		val := func(e beff) int64 {
			if o := b.ops[e.it.op]; o.res == history.OK {
				return o.out.Token
			}
			return bBig
		}
		for _, g := range b.grants {
			fence := int64(0)
			if b.partial {
				fence = bBig
				if len(seq) > 0 {
					fence = val(seq[0]) - 1
				}
			}
			for _, e := range seq {
				if e.slot < 2*g.okLine {
					fence = val(e)
				}
			}
			if fence < g.token {
				return true
			}
		}
		return false
	})
}

// idempotentResult: two accepted writes of one id with different payloads,
// or of one task under different ids with different payloads.
func (b *brute) idempotentResult() bool {
	type w struct{ id, payload, task string }
	var ws []w
	for i, o := range b.ops {
		if b.accepted(i) {
			ws = append(ws, w{o.in.ResultID, o.in.Payload, o.in.Task})
		}
	}
	for _, a := range b.unpinned {
		if v := b.h.Events[a].Value; v.Outcome != "" && v.HasPayload {
			ws = append(ws, w{v.ResultID, v.Payload, v.Task})
		}
	}
	for i := range ws {
		for j := range i {
			x, y := ws[i], ws[j]
			if x.id == y.id && x.payload != y.payload || x.task != "" && x.task == y.task && x.id != y.id && x.payload != y.payload {
				return true
			}
		}
	}
	return false
}

// renewValidity: the coordinator's lease is the last grant that took effect
// (token, holder; a wild acquire grants its owner a token of its choice),
// its deadline set by the grant and by every renew of its token that takes
// effect, ended by a release of its token. An ok renew is invalid at its
// effect when the lease is another token's or holder's, released, or past
// its deadline; with no grant before it, invalid. In a partial history the
// lease at the first event is unknown: any renew's token and holder (the
// others make every renew invalid), unreleased, with no deadline.
func (b *brute) renewValidity() bool {
	has := false
	for _, o := range b.ops {
		if o.f == history.Renew && o.res == history.OK {
			has = true
		}
	}
	if !has {
		return false
	}
	items := b.grantItems(bBig)
	items = append(items, b.wildItems(append(slices.Clone(b.tokens), -1), bBig)...)
	items = append(items, b.opsOf(history.Renew, iRenew)...)
	items = append(items, b.opsOf(history.Release, iRelease)...)
	// In a partial history the lease at the first event is unknown: the
	// token and holder of any renew (those that can make one valid),
	// unreleased, never expiring; grants before the first event (preSlot)
	// are part of what made it.
	type pair struct {
		token  int64
		holder string
	}
	var starts []pair
	if b.partial {
		start := &item{kind: iStart, places: []place{{preSlot - 2, 0, 0, 0}}}
		for _, o := range b.ops {
			if p := (pair{o.in.Token, o.in.Owner + "/" + o.in.Incarnation}); o.f == history.Renew && !slices.Contains(starts, p) {
				start.choices = append(start.choices, int64(len(starts)))
				starts = append(starts, p)
			}
		}
		items = append([]*item{start}, items...)
	}
	return b.certain(items, true, func(seq []beff) bool {
		var lease struct {
			has      bool
			token    int64
			holder   string
			released bool
			dl, ttl  int64
		}
		for _, e := range seq {
			if e.slot == preSlot {
				continue // before the first event: part of the lease at it (iStart)
			}
			switch e.it.kind {
			case iStart:
				p := starts[e.choice]
				lease.has, lease.token, lease.holder, lease.dl, lease.ttl = true, p.token, p.holder, bBig, bBig
			case iGrant:
				g := b.grants[e.it.op]
				lease.has, lease.token, lease.holder, lease.released, lease.dl, lease.ttl = true, g.token, g.holder, false, e.time+e.ttl, e.ttl
			case iWild:
				o := b.ops[e.it.op]
				lease.has, lease.token, lease.holder, lease.released, lease.dl, lease.ttl = true, e.choice, o.in.Owner+"/"+o.in.Incarnation, false, e.time+e.ttl, e.ttl
			case iRenew:
				o := b.ops[e.it.op]
				if o.res == history.OK {
					valid := b.partial
					if lease.has {
						valid = lease.token == o.in.Token && lease.holder == o.in.Owner+"/"+o.in.Incarnation &&
							!lease.released && e.time < lease.dl
					}
					if !valid {
						return true
					}
				}
				if lease.has && lease.token == o.in.Token {
					l := o.in.TTL
					if l == 0 {
						l = lease.ttl
					}
					lease.dl = e.time + l
				}
			case iRelease:
				if lease.has && lease.token == b.ops[e.it.op].in.Token {
					lease.released = true
				}
			}
		}
		return false
	})
}

// acquireIdempotent: two distinct grants (a request's answers with two
// tokens, or two requests' of one requestId) answer one requestId.
func (b *brute) acquireIdempotent() bool {
	seen := map[string]bool{}
	for _, g := range b.grants {
		if seen[g.key.id] {
			return true
		}
		seen[g.key.id] = true
	}
	return false
}

// absoluteValidity: an accepted write with token t takes effect at or after
// its lease's deadline: the last grant of t (a wild acquire may grant t) or
// renew of t after one, its instant + ttl. Nothing when t was not granted
// before it.
func (b *brute) absoluteValidity() bool {
	var items []*item
	has := false
	for i := range b.ops {
		if b.accepted(i) {
			items = append(items, b.opItem(iWrite, i))
			has = true
		}
	}
	for _, a := range b.unpinned {
		if b.h.Events[a].Value.Outcome != "" {
			items = append(items, &item{kind: iWrite, op: -1 - a, places: []place{{2 * a, b.time(a), b.time(a), 0}}})
			has = true
		}
	}
	if !has {
		return false
	}
	items = append(items, b.grantItems(bBig)...)
	items = append(items, b.wildItems(append(slices.Clone(b.tokens), -1), bBig)...)
	items = append(items, b.opsOf(history.Renew, iRenew)...)
	return b.certain(items, true, func(seq []beff) bool {
		granted, dl, ttl := map[int64]bool{}, map[int64]int64{}, map[int64]int64{}
		for _, e := range seq {
			switch e.it.kind {
			case iGrant, iWild:
				t := e.choice
				if e.it.kind == iGrant {
					t = b.grants[e.it.op].token
				}
				granted[t], dl[t], ttl[t] = true, e.time+e.ttl, e.ttl
			case iRenew:
				o := b.ops[e.it.op]
				if t := o.in.Token; granted[t] {
					l := o.in.TTL
					if l == 0 {
						l = ttl[t]
					}
					dl[t] = e.time + l
				}
			case iWrite:
				var t int64
				if e.it.op >= 0 {
					t = b.ops[e.it.op].in.Token
				} else {
					t = b.h.Events[-1-e.it.op].Value.Token
				}
				if granted[t] && e.time >= dl[t] {
					return true
				}
			}
		}
		return false
	})
}

// mayBeCopy reports whether apply line a can be the sink deciding a network
// copy of a write: a duplicate fault hit its writer, who invoked a write of
// the apply's token, result id, payload and task before a.
func (b *brute) mayBeCopy(a int) bool {
	v := b.h.Events[a].Value
	if !b.dup(v.Writer) {
		return false
	}
	for _, o := range b.ops {
		if o.f == history.Write && o.proc == v.Writer && o.inv < a && o.in.Token == v.Token && o.in.ResultID == v.ResultID &&
			(!v.HasPayload || o.in.Payload == v.Payload) && (v.Task == "" || o.in.Task == v.Task) {
			return true
		}
	}
	return false
}

// resourceIndependence: a write with token t rejected as fenced (a fail
// fenced, between its lines; an apply with error fenced, at its line) when
// the largest token granted before the rejection is t (a wild acquire may
// grant a larger one) and the fence then is t: the fence the sink reported
// for that rejection, else the value of the last advance before it (an
// info advance: any value; none: 0, or unknown in a partial history). Or
// the sink reported a fence above t that no advance of this resource set:
// the last advance before the rejection returned at most t (none: 0 in a
// complete history; an info advance or none in a partial one: any value).
func (b *brute) resourceIndependence() bool {
	var items []*item
	for i, o := range b.ops {
		if o.f != history.Write {
			continue
		}
		if o.apply >= 0 && o.av.Error == history.Fenced || o.apply < 0 && o.res == history.Fail && o.out.Error == history.Fenced {
			items = append(items, b.opItem(iReject, i))
		}
	}
	var lone []int
	for _, a := range b.unpinned {
		if b.h.Events[a].Value.Error == history.Fenced {
			lone = append(lone, a)
		}
	}
	if len(items) == 0 && len(lone) == 0 {
		return false
	}
	items = append(items, b.grantItems(0)...)
	items = append(items, b.wildItems([]int64{bBig}, 0)...)
	items = append(items, b.opsOf(history.Advance, iAdvance)...)
	loneItems := []*item{}
	for _, a := range lone {
		loneItems = append(loneItems, &item{kind: iReject, op: -1 - a, places: []place{{2 * a, b.time(a), b.time(a), 0}}})
	}
	items = append(items, loneItems...)
	return b.certain(items, false, func(seq []beff) bool {
		var newest int64
		fence, known := int64(0), !b.partial
		for _, e := range seq {
			switch e.it.kind {
			case iGrant:
				newest = max(newest, b.grants[e.it.op].token)
			case iWild:
				newest = max(newest, e.choice)
			case iAdvance:
				if o := b.ops[e.it.op]; o.res == history.OK {
					fence, known = o.out.Token, true
				} else {
					fence, known = bBig, true
				}
			case iReject:
				var v history.Value
				var rep bool
				if e.it.op >= 0 {
					o := b.ops[e.it.op]
					v = o.in
					if o.apply >= 0 && o.av.HasFence { // the apply's reported fence, else its completion's
						rep = o.av.HasFence
						v.Fence = o.av.Fence
					} else {
						rep = o.out.HasFence
						v.Fence = o.out.Fence
					}
				} else {
					v = b.h.Events[-1-e.it.op].Value
					rep = v.HasFence
				}
				f, k := fence, known
				if rep {
					f, k = v.Fence, true
				}
				if newest == v.Token && k && f == v.Token {
					return true
				}
				if newest == v.Token && rep && v.Fence > v.Token && known && fence <= v.Token {
					return true
				}
			}
		}
		return false
	})
}

// linearizableSink: the sink operations (advances, writes — accepted or
// rejected —, reads; apply events that match no write, when they name a
// payload) have no sequential order that respects real time (line order;
// an apply pins its write at its line) under the fenced-sink spec: advance
// returns a value above the fence and sets it; a write is accepted iff its
// token equals the fence (written iff its id was absent, replayed iff it
// held this payload — either, for a process a duplicate fault hit), fenced
// iff the token differs, conflict iff it equals and the id holds another
// payload, expired always; a reported fence must equal the fence; a read
// returns the stored payload. Info operations (and failed writes of a
// duplicated process) take effect with the outcome the spec gives, or
// never. A partial history starts from any fence and any results; an apply
// that matches no write, in a history that is not partial, is a violation
// unless it can be a network copy: a duplicate fault hit its writer, which
// invoked a write of the same values before it (the copy is then a sink
// operation of its own, at its line).
func (b *brute) linearizableSink() bool {
	for _, a := range b.unpinned {
		if !b.partial && !b.mayBeCopy(a) {
			return true
		}
	}
	type sop struct {
		kind      string
		known     bool
		call, ret int64
		in        history.Value
		out       history.Value // outcome/error/fence or read result or advance token
		either    bool
	}
	var ops []sop
	ids := map[string]map[string]bool{}
	noteID := func(id, p string, has bool) {
		if ids[id] == nil {
			ids[id] = map[string]bool{}
		}
		if has {
			ids[id][p] = true
		}
	}
	for _, o := range b.ops {
		s := sop{kind: o.f, in: o.in, call: 2 * int64(o.inv), ret: math.MaxInt64, either: b.dup(o.proc)}
		switch o.f {
		case history.Advance:
			if o.res == history.Fail {
				continue
			}
			s.known = o.res == history.OK
		case history.Read:
			if o.res != history.OK {
				continue
			}
			s.known = true
			noteID(o.in.ResultID, o.out.Payload, o.out.HasPayload)
		case history.Write:
			noteID(o.in.ResultID, o.in.Payload, true)
			s.known = o.res == history.OK || o.res == history.Fail && !b.dup(o.proc)
			if o.apply >= 0 {
				s.known, s.call, s.ret = true, 2*int64(o.apply), 2*int64(o.apply)+1
				s.out = o.av
				if !s.out.HasFence { // the apply's reported fence, else its completion's
					s.out.Fence, s.out.HasFence = o.out.Fence, o.out.HasFence
				}
				ops = append(ops, s)
				continue
			}
		default:
			continue
		}
		if s.known {
			s.ret, s.out = 2*int64(o.end), o.out
		}
		ops = append(ops, s)
	}
	for _, a := range b.unpinned {
		v := b.h.Events[a].Value
		if v.Outcome != "" && !v.HasPayload || v.Error == history.Conflict && !v.HasPayload {
			continue
		}
		noteID(v.ResultID, v.Payload, true)
		ops = append(ops, sop{kind: history.Write, known: true, call: 2 * int64(a), ret: 2*int64(a) + 1,
			in: history.Value{Token: v.Token, ResultID: v.ResultID, Payload: v.Payload}, out: v, either: b.dup(v.Writer)})
	}
	// Candidate fence values: every token in the history, one above each,
	// 0 and a value above all.
	var vals []int64
	for _, t := range b.tokens {
		vals = append(vals, t, t+1)
	}
	vals = append(vals, 0, bBig)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	type state struct {
		fence int64
		res   map[string]string // absent key: absent
	}
	done := make([]bool, len(ops))
	count := 0
	var dfs func(s state) bool // true: a linearization exists
	dfs = func(s state) bool {
		count++
		if count > b.budget {
			b.unknown = true
			return true
		}
		// The earliest return among the known operations not yet done.
		minRet := int64(math.MaxInt64)
		all := true
		for i, o := range ops {
			if !done[i] && o.known {
				all = false
				minRet = min(minRet, o.ret)
			}
		}
		if all {
			return true
		}
		for i, o := range ops {
			if done[i] || o.call > minRet {
				continue
			}
			var nexts []state
			switch o.kind {
			case history.Advance:
				if o.known {
					if o.out.Token > s.fence {
						nexts = append(nexts, state{o.out.Token, s.res})
					}
				} else {
					for _, v := range vals {
						if v > s.fence {
							nexts = append(nexts, state{v, s.res})
						}
					}
				}
			case history.Read:
				p, ok := s.res[o.in.ResultID]
				if ok == o.out.HasPayload && p == o.out.Payload {
					nexts = append(nexts, s)
				}
			case history.Write:
				p, present := s.res[o.in.ResultID]
				match := o.in.Token == s.fence
				store := func() state {
					m := maps2(s.res)
					m[o.in.ResultID] = o.in.Payload
					return state{s.fence, m}
				}
				if !o.known {
					if match && !present {
						nexts = append(nexts, store())
					} else {
						nexts = append(nexts, s)
					}
					break
				}
				if o.out.HasFence && o.out.Fence != s.fence {
					break
				}
				switch o.out.Error {
				case history.Expired:
					nexts = append(nexts, s)
				case history.Fenced:
					if !match {
						nexts = append(nexts, s)
					}
				case history.Conflict:
					if match && present && p != o.in.Payload {
						nexts = append(nexts, s)
					}
				case "":
					if !match || present && p != o.in.Payload {
						break
					}
					switch {
					case present && (o.out.Outcome == history.Replayed || o.either):
						nexts = append(nexts, s)
					case !present && (o.out.Outcome == history.Written || o.either):
						nexts = append(nexts, store())
					}
				}
			}
			done[i] = true
			for _, n := range nexts {
				if dfs(n) {
					done[i] = false
					return true
				}
			}
			done[i] = false
		}
		return false
	}
	// Initial states.
	inits := []state{{0, map[string]string{}}}
	if b.partial {
		inits = nil
		idList := make([]string, 0, len(ids))
		for id := range ids {
			idList = append(idList, id)
		}
		slices.Sort(idList)
		var gen func(k int, m map[string]string)
		gen = func(k int, m map[string]string) {
			if k == len(idList) {
				for _, f := range vals {
					inits = append(inits, state{f, maps2(m)})
				}
				return
			}
			id := idList[k]
			gen(k+1, m)
			ps := []string{"\x00other"}
			for p := range ids[id] {
				ps = append(ps, p)
			}
			slices.Sort(ps)
			for _, p := range ps {
				m[id] = p
				gen(k+1, m)
				delete(m, id)
			}
		}
		gen(0, map[string]string{})
	}
	for _, s := range inits {
		if dfs(s) {
			return false
		}
	}
	return true
}

func maps2(m map[string]string) map[string]string {
	c := make(map[string]string, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}
