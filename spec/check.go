package spec

import (
	"fmt"
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

	dups := duplicated(h)
	results := make([]resResult, len(names))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(names)) {
		wg.Go(func() {
			for {
				g := int(next.Add(1) - 1)
				if g >= len(names) {
					return
				}
				c := newResCtx(h, names[g], groups[g])
				c.dups = dups
				c.checkAll(opt)
				results[g] = c.result()
				groups[g] = nil // let the memory go
			}
		})
	}
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
	ops     []op // in invoke order
	found   map[string][]Violation
	unknown []string
	dups    dupSet

	// Indexes built once by newResCtx.
	grants       []grant         // distinct grants, in order of their first ok line
	grantOfOp    map[int]int     // op index of an ok acquire -> its grant
	firstAttempt map[reqKey]int  // request -> invoke line of its first non-fail attempt
	firstInfoAcq int             // invoke line of the first info/open acquire, or -1
	tokenGrants  map[int64][]int // token -> its grants, in order
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

// grant is a distinct grant: the first ok acquire for one request and token.
// Later oks for the same request and token are replays of it.
type grant struct {
	op       int   // op index of the first ok
	token    int64 // the token granted
	ttl      int64
	from     int   // invoke line of the request's first non-fail attempt
	fromTime int64 // its time
	okLine   int
	okTime   int64
	key      reqKey
}

func newResCtx(h *history.History, name string, ops []op) *resCtx {
	c := &resCtx{h: h, name: name, partial: h.Header.Partial, ops: ops, found: map[string][]Violation{},
		grantOfOp: map[int]int{}, firstAttempt: map[reqKey]int{}, firstInfoAcq: -1, tokenGrants: map[int64][]int{}}
	type grantKey struct {
		reqKey
		token int64
	}
	seen := map[grantKey]int{}
	var oks []int
	for i, o := range ops {
		if o.kind != kAcquire || o.res == history.Fail {
			continue
		}
		k := c.reqKeyOf(i)
		if _, ok := c.firstAttempt[k]; !ok {
			c.firstAttempt[k] = o.inv
		}
		if o.res == history.Info {
			if c.firstInfoAcq < 0 {
				c.firstInfoAcq = o.inv
			}
			continue
		}
		oks = append(oks, i)
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
		from := c.firstAttempt[gk.reqKey]
		g := grant{op: i, token: gk.token, ttl: c.out(i).TTL, from: from, fromTime: h.Events[from].Time,
			okLine: o.end, okTime: h.Events[o.end].Time, key: gk.reqKey}
		if g.ttl == 0 {
			g.ttl = c.in(i).TTL
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

// add records a violation; events may repeat and come in any order.
func (c *resCtx) add(inv string, events []int, format string, args ...any) {
	ev := slices.Clone(events)
	slices.Sort(ev)
	ev = slices.Compact(ev)
	c.found[inv] = append(c.found[inv], Violation{Invariant: inv, Resource: c.name,
		Message: fmt.Sprintf(format, args...), Events: ev})
}

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

// result sorts each invariant's violations, keeps the first MaxPerResource
// and counts the rest.
func (c *resCtx) result() resResult {
	var r resResult
	for _, inv := range Invariants {
		vs := c.found[inv.ID]
		sortViolations(vs)
		if len(vs) > MaxPerResource {
			r.omitted += len(vs) - MaxPerResource
			vs = vs[:MaxPerResource]
		}
		r.violations = append(r.violations, vs...)
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
		if c.ops[i].res == history.OK {
			fmt.Fprintf(&b, " -> %s", c.out(i).Outcome)
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
