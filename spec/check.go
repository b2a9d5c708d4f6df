package spec

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fencecheck/fencecheck/history"
)

// MaxPerResource is the most violations of one invariant that Check lists for
// one resource; the rest are counted in Report.Omitted. A broken protocol
// tends to violate an invariant at nearly every operation of a long history,
// and the first few (in event order) show the problem.
const MaxPerResource = 5

// op is one operation of a history, as Check sees it.
type op struct {
	inv, end int          // event positions of the invoke and the completion (-1 while open)
	kind     opKind       // the operation
	res      history.Type // OK, Fail or Info (an open operation counts as Info)
}

type opKind uint8

const (
	kAcquire opKind = iota
	kRenew
	kRelease
	kAdvance
	kWrite
	kRead
)

func kindOf(f string) opKind {
	switch f {
	case history.Acquire:
		return kAcquire
	case history.Renew:
		return kRenew
	case history.Release:
		return kRelease
	case history.Advance:
		return kAdvance
	case history.Write:
		return kWrite
	}
	return kRead
}

// Check checks a history against every invariant, with no model: only what
// the events themselves show. Every rule is conservative — a violation is
// reported only when every timing consistent with the observed invoke and
// completion lines (and, for leases, times) violates the invariant — and is
// documented in docs/invariants.md. The header's expect list is not consulted.
//
// Resources are checked independently, on GOMAXPROCS goroutines; the report
// does not depend on their scheduling. Violations are ordered by the order of
// Invariants, then by their events; at most MaxPerResource are listed per
// invariant and resource. linearizable-sink runs porcupine once per resource,
// each bounded by opt.Timeout; a resource whose search runs out of time puts
// linearizable-sink in Report.Unknown instead of giving a verdict.
func Check(h *history.History, opt Options) Report {
	hops := h.Ops()
	rep := Report{Events: len(h.Events), Operations: len(hops), Violations: []Violation{}}

	// Group the operations by resource, in invoke order.
	byName := map[string]int{}
	var names []string
	var groups [][]op
	for _, o := range hops {
		e := &h.Events[o.Invoke]
		g, ok := byName[e.Resource]
		if !ok {
			g = len(names)
			byName[e.Resource] = g
			names = append(names, e.Resource)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], op{inv: o.Invoke, end: o.Complete, kind: kindOf(e.F), res: h.Result(o)})
	}

	appl := map[string][]int{}
	for i := range h.Events {
		if e := &h.Events[i]; e.F == history.Apply {
			if _, ok := byName[e.Resource]; !ok {
				byName[e.Resource] = len(names)
				names = append(names, e.Resource)
				groups = append(groups, nil)
			}
			appl[e.Resource] = append(appl[e.Resource], i)
		}
	}

	dups := duplicated(h)
	results := make([]resResult, len(names))
	var next atomic.Int64
	check := func() {
		for {
			g := int(next.Add(1) - 1)
			if g >= len(names) {
				return
			}
			c := newResCtx(h, names[g], groups[g])
			c.setSink(dups, appl[names[g]])
			c.checkAll(opt)
			results[g] = c.result()
			groups[g] = nil // let the memory go
		}
	}
	// The caller checks too: with one processor, or one resource, no
	// goroutine is started and waited for. (A random search checks a
	// history per run; such hand-offs on one processor starved the
	// goroutine that cancels it at Ctrl-C, until it yielded between runs:
	// checker.letOthersRun.)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(names)) - 1 {
		wg.Go(check)
	}
	check()
	wg.Wait()

	unknown := map[string]bool{}
	for _, r := range results {
		rep.Violations = append(rep.Violations, r.violations...)
		rep.Omitted += r.omitted
		for _, id := range r.unknown {
			unknown[id] = true
		}
	}
	sortViolations(rep.Violations)
	for _, inv := range Invariants {
		if unknown[inv.ID] {
			rep.Unknown = append(rep.Unknown, inv.ID)
		}
	}
	rep.OK = len(rep.Violations) == 0 && rep.Omitted == 0
	return rep
}

// invariantRank gives each invariant id its position in Invariants.
var invariantRank = func() map[string]int {
	m := map[string]int{}
	for i, inv := range Invariants {
		m[inv.ID] = i
	}
	return m
}()

// sortViolations orders violations by invariant (the order of Invariants),
// then by their events, then by resource and message.
func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := &vs[i], &vs[j]
		if ra, rb := invariantRank[a.Invariant], invariantRank[b.Invariant]; ra != rb {
			return ra < rb
		}
		if c := slices.Compare(a.Events, b.Events); c != 0 {
			return c < 0
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Message < b.Message
	})
}

// resResult is what checking one resource found.
type resResult struct {
	violations []Violation
	omitted    int
	unknown    []string
}

// resCtx is the state of checking the operations on one resource.
type resCtx struct {
	h       *history.History
	name    string
	partial bool
	ops     []op              // in invoke order
	found   map[string]*found // per invariant id
	unknown []string
	dups    dupSet

	// Indexes built once by newResCtx.
	grants       []grant         // distinct grants, in order of their first ok line
	grantOfOp    map[int]int     // op index of an ok acquire -> its grant
	firstWildAcq int             // invoke line of the first wild acquire (see wild; beforeFirst: a request's attempt before a partial history), or noLine
	wild         map[int]bool    // op index of an info/open acquire whose request has no single granted token
	preWild      []holderKey     // partial: the holders of requests whose attempt before the first event is wild
	tokenGrants  map[int64][]int // token -> its grants, in order
	byFrom       []int           // grant indexes by first attempt line (order0)
	applies      []apply         // the resource's apply events, in line order
	applyOf      map[int]int     // op index of a write -> index in applies of the apply that decided it
	noAdvances   bool            // not partial, and no advance: the fence is 0 throughout (noAdvanceNote)
}

// apply is a sink-side apply event: the instant the sink decided a write.
type apply struct {
	line  int
	op    int // the write it decided (op index), -1 when none matches
	v     *history.Value
	taken bool // the write was applied (outcome), else rejected (error)
	// copy: the apply decides no write, a duplicate fault hit the writer,
	// and the writer invoked a write of its values before it: the sink
	// decided a network copy of that write (a sink operation of its own,
	// invoked by no one). The original's own decision need not have an
	// apply line.
	copy bool
}

// dupSet names the processes whose messages a duplicate fault hit (all:
// every process, for a fault that names no target).
type dupSet struct {
	all   bool
	procs map[string]bool
}

func (d dupSet) hit(process string) bool { return d.all || d.procs[process] }

// duplicated collects the processes that duplicate faults hit: the fault's
// process, or its value.target when the process is the nemesis.
func duplicated(h *history.History) dupSet {
	var d dupSet
	for i := range h.Events {
		e := &h.Events[i]
		if e.F != history.Duplicate {
			continue
		}
		p := e.Process
		if p == history.Nemesis {
			p = e.Value.Target
		}
		if p == "" || p == history.Nemesis {
			d.all = true
			continue
		}
		if d.procs == nil {
			d.procs = map[string]bool{}
		}
		d.procs[p] = true
	}
	return d
}

// reqKey identifies an acquire request: the coordinator's deduplication key.
type reqKey struct{ owner, incarnation, requestID string }

// holderKey names a lease holder: an owner and incarnation.
type holderKey struct{ owner, incarnation string }

// Lines that no event holds.
const (
	// beforeFirst is the line of an attempt before the first event of a
	// partial history (see newResCtx): it comes before every line.
	beforeFirst = -1
	// noLine stands for "none" where a line is looked for: it comes after
	// every line.
	noLine = math.MaxInt
)

// grant is a distinct grant: the first ok acquire for one request and token.
// Later oks for the same request and token are replays of it. Its effect
// took place during one of its attempts: the request's info or open
// attempts and its ok attempts with the same token, invoked before the
// grant's ok line (an ok attempt with another token took effect as another
// grant; a fail never did). In a partial history the request may also have
// been attempted before the first event (see newResCtx).
type grant struct {
	op       int   // op index of the first ok
	token    int64 // the token granted
	ttl      int64 // the ok's ttl, else its invoke's (for messages)
	from     int   // invoke line of the first attempt that may have granted it (beforeFirst: one before a partial history)
	fromTime int64 // its time (negInf: unknown, before the first event's)
	shown    int   // invoke line of its first attempt in the history: the line violations name (from, unless beforeFirst)
	okLine   int
	okTime   int64
	key      reqKey
	attempts []int // op indexes of the attempts in the history that may have granted it
	// minEnd is the earliest deadline any of them can have set (invoke
	// time + ttl); maxTTL the largest ttl it can have been granted for.
	minEnd, maxTTL int64
	minTTL         int64 // the smallest ttl it can have been granted for
}

// newResCtx indexes the operations of one resource: its grants, and its wild
// acquires.
//
// A partial history is read as if every acquire request in it (every
// owner, incarnation and requestId of an acquire, whatever its outcomes)
// had one more attempt before the first event, with an unknown outcome
// (info), at an unknown time and for an unknown ttl: a retry in the history
// may be the replay of a grant made before it, or that attempt may take
// effect later, as any info one may. What the rules then conclude, they
// conclude of every history the partial one can be the end of. So in a
// partial history every grant may have taken effect before the first
// event, for any ttl (from is beforeFirst, fromTime negInf, minEnd about
// negInf, minTTL 1, maxTTL inf), and a request that has no single granted
// token has a wild attempt before the first event (firstWildAcq is
// beforeFirst; preWild names its holder).
func newResCtx(h *history.History, name string, ops []op) *resCtx {
	c := &resCtx{h: h, name: name, partial: h.Header.Partial, ops: ops, found: map[string]*found{},
		grantOfOp: map[int]int{}, firstWildAcq: noLine, wild: map[int]bool{}, tokenGrants: map[int64][]int{},
		applyOf: map[int]int{}}
	c.noAdvances = !c.partial && !slices.ContainsFunc(ops, func(o op) bool { return o.kind == kAdvance })
	type grantKey struct {
		reqKey
		token int64
	}
	seen := map[grantKey]int{}
	var oks []int
	reqAttempts := map[reqKey][]int{} // request -> its non-fail attempts, in invoke order
	reqTokens := map[reqKey]map[int64]bool{}
	var reqs []reqKey // every request, failed or not, in order of its first attempt
	for i, o := range ops {
		if o.kind != kAcquire {
			continue
		}
		k := c.reqKeyOf(i)
		if _, ok := reqAttempts[k]; !ok {
			reqs = append(reqs, k)
			reqAttempts[k] = nil
		}
		if o.res == history.Fail {
			continue
		}
		reqAttempts[k] = append(reqAttempts[k], i)
		if o.res == history.OK {
			oks = append(oks, i)
			if reqTokens[k] == nil {
				reqTokens[k] = map[int64]bool{}
			}
			reqTokens[k][c.out(i).Token] = true
		}
	}
	// An info or open attempt of a request with exactly one granted token
	// is that grant's effect or a replay of it. Any other (no ok at all, or
	// a coordinator that granted one request several tokens) may have
	// granted any token at any later instant: it is wild.
	if c.partial {
		for _, k := range reqs {
			if len(reqTokens[k]) != 1 {
				c.firstWildAcq = beforeFirst
				c.preWild = append(c.preWild, holderKey{k.owner, k.incarnation})
			}
		}
	}
	for i, o := range ops {
		if o.kind == kAcquire && o.res == history.Info && len(reqTokens[c.reqKeyOf(i)]) != 1 {
			c.wild[i] = true
			c.firstWildAcq = min(c.firstWildAcq, o.inv)
		}
	}
	// Grants are numbered in the order of their ok lines.
	sort.SliceStable(oks, func(a, b int) bool { return ops[oks[a]].end < ops[oks[b]].end })
	for _, i := range oks {
		o := ops[i]
		gk := grantKey{c.reqKeyOf(i), c.out(i).Token}
		if g, ok := seen[gk]; ok {
			c.grantOfOp[i] = g
			continue
		}
		g := grant{op: i, token: gk.token, ttl: c.grantTTL(i), okLine: o.end, okTime: h.Events[o.end].Time,
			key: gk.reqKey, from: noLine, shown: noLine, minEnd: inf, maxTTL: negInf, minTTL: inf}
		okTTL := c.out(i).TTL
		for _, a := range reqAttempts[gk.reqKey] {
			if ops[a].inv >= o.end || ops[a].res == history.OK && c.out(a).Token != gk.token {
				continue
			}
			g.attempts = append(g.attempts, a)
			if g.shown == noLine {
				g.shown = ops[a].inv
			}
			lo, hi := c.in(a).TTL, c.in(a).TTL
			if okTTL > 0 {
				lo, hi = min(lo, okTTL), max(hi, okTTL)
			}
			g.minEnd = min(g.minEnd, after(c.invTime(a), lo))
			g.maxTTL = max(g.maxTTL, hi)
			g.minTTL = min(g.minTTL, lo)
		}
		g.from, g.fromTime = g.shown, h.Events[g.shown].Time
		if c.partial { // the attempt before the first event: any time before it, any ttl (>= 1)
			g.from, g.fromTime = beforeFirst, negInf
			g.minEnd, g.minTTL, g.maxTTL = after(negInf, 1), 1, inf
		}
		seen[gk] = len(c.grants)
		c.grantOfOp[i] = len(c.grants)
		c.tokenGrants[g.token] = append(c.tokenGrants[g.token], len(c.grants))
		c.grants = append(c.grants, g)
	}
	return c
}

// in and out return the values of op i's invoke and completion.
func (c *resCtx) in(i int) *history.Value { return &c.h.Events[c.ops[i].inv].Value }
func (c *resCtx) out(i int) *history.Value {
	if c.ops[i].end < 0 {
		return &history.Value{}
	}
	return &c.h.Events[c.ops[i].end].Value
}

// reportedFence is the fence the sink reported for write i, which apply a
// decided: the apply's value.fence, else its completion's.
func (c *resCtx) reportedFence(i int, a apply) (int64, bool) {
	if a.v.HasFence {
		return a.v.Fence, true
	}
	ov := c.out(i)
	return ov.Fence, ov.HasFence
}

// invTime and endTime return the times of op i's invoke and completion.
func (c *resCtx) invTime(i int) int64 { return c.h.Events[c.ops[i].inv].Time }
func (c *resCtx) endTime(i int) int64 { return c.h.Events[c.ops[i].end].Time }

func (c *resCtx) reqKeyOf(i int) reqKey {
	v := c.in(i)
	return reqKey{v.Owner, v.Incarnation, v.RequestID}
}

// events returns op i's event positions (one for an open op).
func (c *resCtx) events(i int) []int {
	if c.ops[i].end < 0 {
		return []int{c.ops[i].inv}
	}
	return []int{c.ops[i].inv, c.ops[i].end}
}

// holder names the owner and incarnation of an op's invoke, as "owner/incarnation".
func (c *resCtx) holder(i int) string {
	v := c.in(i)
	return v.Owner + "/" + v.Incarnation
}

// found holds the violations of one invariant found on one resource: the
// first MaxPerResource in report order (sortViolations: by events, then
// message), and a count of the others. A rule may find a violation at
// nearly every pair of operations of a long history: only those the report
// shows are formatted and kept.
type found struct {
	shown   []Violation // in report order
	omitted int
}

// full reports whether f shows MaxPerResource violations already.
func (f *found) full() bool { return len(f.shown) >= MaxPerResource }

// after reports whether a violation with these events (sorted, without
// repeats) comes after every one f shows, whatever its message: when f is
// full, it would not be shown.
func (f *found) after(ev []int) bool {
	return f.full() && slices.Compare(ev, f.shown[len(f.shown)-1].Events) > 0
}

// normEvents sorts events and drops repeats, in place.
func normEvents(ev []int) []int {
	slices.Sort(ev)
	return slices.Compact(ev)
}

// foundOf returns the violations found of invariant inv.
func (c *resCtx) foundOf(inv string) *found {
	f := c.found[inv]
	if f == nil {
		f = &found{}
		c.found[inv] = f
	}
	return f
}

// add records a violation; events may repeat and come in any order. Its
// message is formatted only if the report may show it.
func (c *resCtx) add(inv string, events []int, format string, args ...any) {
	var buf [8]int
	ev := normEvents(append(buf[:0], events...))
	f := c.foundOf(inv)
	if f.after(ev) {
		f.omitted++
		return
	}
	v := Violation{Invariant: inv, Resource: c.name, Message: fmt.Sprintf(format, args...)}
	if (inv == FenceBeforeGrant || inv == LinearizableSink) && c.noAdvances {
		v.Message += noAdvanceNote
	}
	// Its place: after every violation with the same events and message
	// (the stable order of sortViolations).
	k := sort.Search(len(f.shown), func(k int) bool {
		w := &f.shown[k]
		if d := slices.Compare(ev, w.Events); d != 0 {
			return d < 0
		}
		return v.Message < w.Message
	})
	if k == MaxPerResource {
		f.omitted++
		return
	}
	v.Events = slices.Clone(ev)
	f.shown = slices.Insert(f.shown, k, v)
	if len(f.shown) > MaxPerResource {
		f.shown = f.shown[:MaxPerResource]
		f.omitted++
	}
}

// noAdvanceNote ends the message of a fence-before-grant or
// linearizable-sink violation on a resource whose history records no
// advance. The verdict stands (a history that is not partial records every
// advance, and its sink starts at fence 0), but a recorder that leaves the
// advances out gets these violations on every grant and accepted write, and
// the note tells its user why.
const noAdvanceNote = "; the history records no advance of this resource, so its fence is 0 throughout (a history that is not partial records every advance: docs/history-format.md, \"Start\")"

// omit counts n violations of invariant inv that the report does not show:
// each comes after every violation f shows (f.after).
func (c *resCtx) omit(inv string, n int) { c.foundOf(inv).omitted += n }

// checkAll runs every invariant's check on the resource.
func (c *resCtx) checkAll(opt Options) {
	c.checkFencing()
	c.checkExclusiveLease()
	c.checkTokenMonotonic()
	c.checkFenceBeforeGrant()
	c.checkIdempotentResult()
	c.checkRenewValidity()
	c.checkAcquireIdempotent()
	c.checkLinearizableSink(opt)
	c.checkResourceIndependence()
	c.checkAbsoluteValidity()
}

// result lists each invariant's first MaxPerResource violations and counts
// the rest.
func (c *resCtx) result() resResult {
	var r resResult
	for _, inv := range Invariants {
		if f := c.found[inv.ID]; f != nil {
			r.violations = append(r.violations, f.shown...)
			r.omitted += f.omitted
		}
	}
	r.unknown = c.unknown
	return r
}

// quote renders a string for a message.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// describe renders op i for a message, e.g. `write token=1 resultId="r"`.
func (c *resCtx) describe(i int) string {
	v := c.in(i)
	var b strings.Builder
	switch c.ops[i].kind {
	case kAcquire:
		fmt.Fprintf(&b, "acquire by %s", c.holder(i))
		if c.ops[i].res == history.OK {
			fmt.Fprintf(&b, " -> token=%d", c.out(i).Token)
		}
	case kRenew, kRelease:
		fmt.Fprintf(&b, "%s token=%d by %s", c.h.Events[c.ops[i].inv].F, v.Token, c.holder(i))
	case kAdvance:
		b.WriteString("advance")
		if c.ops[i].res == history.OK {
			fmt.Fprintf(&b, " -> %d", c.out(i).Token)
		}
	case kWrite:
		fmt.Fprintf(&b, "write token=%d resultId=%s payload=%s", v.Token, quote(v.ResultID), quote(v.Payload))
		if k, ok := c.applyOf[i]; ok {
			a := c.applies[k].v
			fmt.Fprintf(&b, " -> %s%s (applied at event %d)", a.Outcome, a.Error, c.applies[k].line)
			return b.String()
		}
		switch c.ops[i].res {
		case history.OK:
			fmt.Fprintf(&b, " -> %s", c.out(i).Outcome)
		case history.Fail:
			fmt.Fprintf(&b, " -> %s", c.out(i).Error)
		}
	case kRead:
		fmt.Fprintf(&b, "read resultId=%s", quote(v.ResultID))
		if c.ops[i].res == history.OK {
			if out := c.out(i); out.HasPayload {
				fmt.Fprintf(&b, " -> %s", quote(out.Payload))
			} else {
				b.WriteString(" -> null")
			}
		}
	}
	if c.ops[i].res != history.OK {
		fmt.Fprintf(&b, " (%s)", c.ops[i].res)
	}
	return b.String()
}

// setSink gives the context the duplicate faults and the lines of the
// resource's apply events, and matches those to their writes.
func (c *resCtx) setSink(d dupSet, lines []int) {
	c.dups = d
	c.applies = make([]apply, len(lines))
	for k, l := range lines {
		c.applies[k].line = l
	}
	c.indexApplies()
}

// applyLines returns the lines of the apply events on one resource.
func applyLines(h *history.History, resource string) []int {
	var out []int
	for i := range h.Events {
		if e := &h.Events[i]; e.F == history.Apply && e.Resource == resource {
			out = append(out, i)
		}
	}
	return out
}

// indexApplies matches each apply event of the resource (c.applies holds
// their lines) to the write it decided: a write by value.writer with the same
// token and resultId (and payload and task, where the apply names them),
// invoked before the apply line and not matched yet, whose outcome does not
// contradict the apply's (an ok write was applied, a failed one rejected,
// unless a duplicate fault hit its process; an info or open write either).
// The write whose invoke–completion window holds the apply line is preferred
// (a process has at most one such); else the latest earlier info write (the
// writer gave up on it and the sink decided it late). An apply that matches
// no write stays unmatched (op -1): a network copy (apply.copy) when a
// duplicate fault hit the writer, who invoked a write of its values before
// it; a write from before a partial history; or, in a history that is not
// partial, a linearizable-sink violation.
func (c *resCtx) indexApplies() {
	if len(c.applies) == 0 {
		return
	}
	type wkey struct {
		writer, resultID string
		token            int64
	}
	byKey := map[wkey][]int{} // the writes of one writer, token and resultId, in invoke order
	for i, o := range c.ops {
		if o.kind == kWrite {
			k := wkey{c.h.Events[o.inv].Process, c.in(i).ResultID, c.in(i).Token}
			byKey[k] = append(byKey[k], i)
		}
	}
	for k := range c.applies {
		a := &c.applies[k]
		a.v = &c.h.Events[a.line].Value
		a.taken = a.v.Outcome != ""
		a.op = -1
		ws := byKey[wkey{a.v.Writer, a.v.ResultID, a.v.Token}]
		dup := c.dups.hit(a.v.Writer)
		// From the latest write invoked before the apply backwards: the
		// first that fits is the one whose window holds the apply (only the
		// latest can), else the latest earlier info one.
		for j := sort.Search(len(ws), func(j int) bool { return c.ops[ws[j]].inv > a.line }) - 1; j >= 0; j-- {
			i := ws[j]
			o := c.ops[i]
			if _, used := c.applyOf[i]; used {
				continue
			}
			w := c.in(i)
			if a.v.HasPayload && w.Payload != a.v.Payload || a.v.Task != "" && w.Task != a.v.Task {
				continue
			}
			switch {
			case o.res == history.OK && !a.taken && !dup, o.res == history.Fail && a.taken && !dup:
				continue
			case o.end >= 0 && o.end < a.line && o.res != history.Info:
				continue
			}
			a.op = i
			c.applyOf[i] = k
			break
		}
		if a.op < 0 && dup {
			for _, i := range ws {
				w := c.in(i)
				if c.ops[i].inv < a.line && (!a.v.HasPayload || w.Payload == a.v.Payload) && (a.v.Task == "" || w.Task == a.v.Task) {
					a.copy = true
					break
				}
			}
		}
	}
}
