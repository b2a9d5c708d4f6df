package spec

import (
	"fmt"
	"hash/fnv"
	"html"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	iradix "github.com/hashicorp/go-immutable-radix/v2"

	"github.com/fencecheck/fencecheck/history"
)

// SinkInput is the input of one operation on the sequential fenced sink of
// the article (FencedSink, one per resource), or on the ideal end-to-end
// object of EndToEndModel.
type SinkInput struct {
	Resource string // the resource whose sink (or object) it acts on
	// Op is history.Advance, history.Write or history.Read; the end-to-end
	// object has history.Acquire in place of history.Advance.
	Op       string
	Token    int64  // write: the token it carries
	ResultID string // write, read: the result id
	Payload  string // write: the payload
}

// SinkOutput is the observed result of an operation.
type SinkOutput struct {
	// Known is false for an info or open operation: it may have taken
	// effect, with any result, or not at all.
	Known bool
	// Token is the fence an advance returned, or the token an acquire
	// granted.
	Token int64
	// Outcome is an accepted write's outcome, history.Written or
	// history.Replayed; Error a rejected write's error (history.Fenced,
	// history.Conflict or history.Expired; "" when accepted). Either is
	// set when the client may have seen another copy's answer (a duplicate
	// fault hit its process): written and replayed are then not told
	// apart.
	Outcome string
	Error   string
	Either  bool
	// Fence and HasFence: the fence the sink reported it compared the
	// write's token with (value.fence of the apply or the completion).
	Fence    int64
	HasFence bool
	// Payload and HasPayload are what a read returned (HasPayload false:
	// null, the result is absent).
	Payload    string
	HasPayload bool
}

// sinkState is the state of the fenced sink of one resource, as the models
// know it. It is immutable: Step returns a new value and never changes the
// map it shares with other states.
type sinkState struct {
	fence int64
	// atLeast: the fence is only known to be >= fence (an info advance
	// happened, or a partial history has not shown it yet).
	atLeast bool
	// not: while atLeast, a value the fence is known not to be (a fenced
	// rejection of that token); 0 for none.
	not int64
	// partial: a result id with no entry in res is unknown rather than
	// absent.
	partial bool
	res     *results
}

// results maps result ids to what is known of them, with a hash kept up to
// date so that states compare quickly. The map is persistent (a radix tree
// whose versions share what they did not change): a step that learns of
// one id costs a path of the tree, not a copy of every id known, which
// made porcupine's search quadratic in the writes of a resource (a
// 40,000-event history took 1 GB).
type results struct {
	t    *iradix.Tree[result]
	hash uint64
}

// equal reports whether x and y know the same of every id.
func (x *results) equal(y *results) bool {
	if x == y {
		return true
	}
	if x.hash != y.hash || x.t.Len() != y.t.Len() {
		return false
	}
	a, b := x.t.Root().Iterator(), y.t.Root().Iterator()
	for {
		ka, ra, more := a.Next()
		kb, rb, _ := b.Next()
		if !more {
			return true
		}
		if string(ka) != string(kb) || ra != rb {
			return false
		}
	}
}

// result is known: present with a payload, or absent; or (other) present
// with some payload other than payload — what a conflict shows of an id a
// partial history has not shown yet.
type result struct {
	payload string
	present bool
	other   bool
}

func entryHash(id string, r result) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0, 1})
	if r.present {
		h.Write([]byte(r.payload))
		h.Write([]byte{1})
	}
	if r.other {
		h.Write([]byte{2})
	}
	return h.Sum64()
}

// lookup returns what is known of id; known is false when it may be anything.
func (s sinkState) lookup(id string) (r result, known bool) {
	if r, ok := s.res.t.Get([]byte(id)); ok {
		return r, true
	}
	return result{}, !s.partial
}

// with returns a copy of s that knows r for id.
func (s sinkState) with(id string, r result) sinkState {
	t, old, had := s.res.t.Insert([]byte(id), r)
	hash := s.res.hash ^ entryHash(id, r)
	if had {
		hash ^= entryHash(id, old)
	}
	s.res = &results{t: t, hash: hash}
	return s
}

// sinkStep is the step of both models; grantOp is the operation that moves
// the fence: history.Advance (the sink) or history.Acquire (end to end).
func sinkStep(grantOp string, s sinkState, in SinkInput, out SinkOutput) (bool, sinkState) {
	switch in.Op {
	case grantOp:
		if !out.Known {
			// Took effect: the fence is now above its old value. (Not
			// taking effect is the same as being linearized last.)
			if s.fence < math.MaxInt64 {
				s.fence++
			}
			s.atLeast, s.not = true, 0
			return true, s
		}
		if out.Token <= s.fence {
			return false, s
		}
		s.fence, s.atLeast, s.not = out.Token, false, 0
		return true, s
	case history.Write:
		match := in.Token == s.fence || s.atLeast && in.Token > s.fence && (s.not == 0 || in.Token != s.not)
		if !out.Known {
			if match {
				s.fence, s.atLeast, s.not = in.Token, false, 0
				if r, known := s.lookup(in.ResultID); known && !r.present {
					s = s.with(in.ResultID, result{in.Payload, true, false})
				}
			}
			return true, s
		}
		if out.HasFence {
			// The sink says what its fence was at this instant.
			if out.Fence < s.fence || !s.atLeast && out.Fence != s.fence || s.atLeast && s.not != 0 && out.Fence == s.not {
				return false, s
			}
			s.fence, s.atLeast, s.not = out.Fence, false, 0
			match = in.Token == s.fence
		}
		switch out.Error {
		case history.Expired:
			// A sink that checks deadlines decides expiry on facts the spec
			// does not model (its clock, the lease's deadline) and may do so
			// before or after the token check: any state allows it, and it
			// changes nothing.
			return true, s
		case history.Fenced:
			// The token check failed: legal unless the fence is known to
			// equal the token. A fence known only from below is now known
			// not to be the token (one such value is kept).
			if !s.atLeast {
				return in.Token != s.fence, s
			}
			switch {
			case in.Token == s.fence && s.fence < math.MaxInt64:
				s.fence++
			case in.Token > s.fence && s.not == 0:
				s.not = in.Token
			}
			if s.not == s.fence && s.fence < math.MaxInt64 {
				s.fence, s.not = s.fence+1, 0
			}
			return true, s
		case history.Conflict:
			// The token check passed and the id holds another payload.
			if !match {
				return false, s
			}
			s.fence, s.atLeast, s.not = in.Token, false, 0
			r, known := s.lookup(in.ResultID)
			switch {
			case !known:
				return true, s.with(in.ResultID, result{in.Payload, true, true})
			case r.other:
				return true, s
			}
			return r.present && r.payload != in.Payload, s
		}
		if !match {
			return false, s
		}
		s.fence, s.atLeast, s.not = in.Token, false, 0
		// written: the id was absent and now holds the payload; replayed: it
		// held this payload already. When the network duplicates a write, the
		// copy that took effect and the copy whose reply the client saw can
		// differ, so a client hit by a duplicate fault may see replayed for
		// its own first write (or written for a retry): Either.
		r, known := s.lookup(in.ResultID)
		switch {
		case known && r.other:
			// Present with a payload other than r.payload: perhaps this one.
			if r.payload == in.Payload || out.Outcome == history.Written && !out.Either {
				return false, s
			}
			s = s.with(in.ResultID, result{in.Payload, true, false})
		case known && r.present:
			if r.payload != in.Payload || out.Outcome == history.Written && !out.Either {
				return false, s
			}
		case known:
			if out.Outcome == history.Replayed && !out.Either {
				return false, s
			}
			s = s.with(in.ResultID, result{in.Payload, true, false})
		default:
			s = s.with(in.ResultID, result{in.Payload, true, false})
		}
		return true, s
	case history.Read:
		if !out.Known {
			return true, s
		}
		r, known := s.lookup(in.ResultID)
		switch {
		case !known:
			return true, s.with(in.ResultID, result{out.Payload, out.HasPayload, false})
		case r.other:
			if !out.HasPayload || out.Payload == r.payload {
				return false, s
			}
			return true, s.with(in.ResultID, result{out.Payload, true, false})
		}
		return r.present == out.HasPayload && r.payload == out.Payload, s
	}
	return false, s
}

func sinkModel(partial bool, grantOp string) porcupine.Model {
	init := sinkState{partial: partial, atLeast: partial, res: &results{t: iradix.New[result]()}}
	return porcupine.Model{
		Partition: partitionByResource,
		Init:      func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			return sinkStep(grantOp, state.(sinkState), input.(SinkInput), output.(SinkOutput))
		},
		Equal: func(a, b any) bool {
			x, y := a.(sinkState), b.(sinkState)
			return x.fence == y.fence && x.atLeast == y.atLeast && x.not == y.not &&
				x.res.equal(y.res)
		},
		Hash: func(state any) uint64 {
			s := state.(sinkState)
			h := uint64(s.fence)*0x9e3779b97f4a7c15 ^ s.res.hash
			if s.atLeast {
				h ^= 0x5555 ^ uint64(s.not)*0xbf58476d1ce4e5b9
			}
			return h
		},
		DescribeOperation: func(input, output any) string { return describeSinkOp(input.(SinkInput), output.(SinkOutput)) },
		// porcupine's viewer inserts these two as HTML (a tooltip's
		// innerHTML), the operation's description as text.
		DescribeState: func(state any) string { return html.EscapeString(describeSinkState(state.(sinkState))) },
		DescribeOperationMetadata: func(info any) string {
			if m, ok := info.(opMeta); ok {
				return html.EscapeString(describeOpMeta(m))
			}
			return ""
		},
	}
}

// describeOpMeta names an operation's process and events, e.g. "w1: events
// 4-5" (one event when its outcome is unknown).
func describeOpMeta(m opMeta) string {
	if m.end < 0 {
		return fmt.Sprintf("%s: event %d", m.process, m.inv)
	}
	return fmt.Sprintf("%s: events %d-%d", m.process, m.inv, m.end)
}

// SinkModel is porcupine's sequential specification of the article's
// FencedSink, one per resource (Partition splits operations by
// SinkInput.Resource): advance sets the fence to the value it returns, which
// must exceed the old fence; write(token, resultId, payload) is accepted only
// if token == fence, and then stores the payload when the id is absent and
// accepts it again when the id holds the same payload (a different payload is
// a conflict, a failure); read returns the stored payload or null. The
// outcomes written and replayed are not told apart: when the network
// duplicates a write, the copy that took effect and the copy whose reply the
// client saw can differ.
//
// An operation with an unknown outcome (Known false) may take effect or not:
// its Step always succeeds and applies the effect if the state allows it (not
// taking effect is the same as being linearized last, which porcupine also
// tries, because such operations return at math.MaxInt64). Failed operations
// are left out: a fail certainly did not take effect, and its reason may come
// from checks outside this spec (a sink that also checks deadlines).
//
// partial: nothing is known of the fence and results at the start (the
// history's header says "partial": true); otherwise the fence starts at 0
// and no result is stored. Step is pure.
//
// DescribeState and DescribeOperationMetadata return HTML (the text with
// <, >, &, ' and " escaped), which porcupine's viewer inserts as HTML;
// DescribeOperation returns plain text, which it inserts as text.
func SinkModel(partial bool) porcupine.Model { return sinkModel(partial, history.Advance) }

// EndToEndModel is porcupine's specification of the ideal end-to-end object
// of one resource: grants and writes as one atomic fenced object. An acquire
// (SinkInput.Op history.Acquire) grants a token above every earlier one and
// makes it the fence; a write is accepted iff its token is the current one,
// with the same result rules as SinkModel; read as in SinkModel. A history is
// linearizable under it when the protocol as a whole behaved like that
// object. Build its operations with EndToEndOperations. Its descriptions
// are HTML or text as SinkModel's.
func EndToEndModel(partial bool) porcupine.Model { return sinkModel(partial, history.Acquire) }

func partitionByResource(ops []porcupine.Operation) [][]porcupine.Operation {
	idx := map[string]int{}
	var names []string
	var parts [][]porcupine.Operation
	for _, o := range ops {
		r := o.Input.(SinkInput).Resource
		k, ok := idx[r]
		if !ok {
			k = len(parts)
			idx[r] = k
			names = append(names, r)
			parts = append(parts, nil)
		}
		parts[k] = append(parts[k], o)
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	out := make([][]porcupine.Operation, len(parts))
	for i, k := range order {
		out[i] = parts[k]
	}
	return out
}

func describeSinkOp(in SinkInput, out SinkOutput) string {
	var b strings.Builder
	switch in.Op {
	case history.Write:
		fmt.Fprintf(&b, "write(token=%d, %s, %s)", in.Token, quote(in.ResultID), quote(in.Payload))
	case history.Read:
		fmt.Fprintf(&b, "read(%s)", quote(in.ResultID))
	default:
		fmt.Fprintf(&b, "%s()", in.Op)
	}
	switch {
	case !out.Known:
		b.WriteString(" -> ?")
	case in.Op == history.Write:
		b.WriteString(" -> " + out.Outcome)
	case in.Op == history.Read && out.HasPayload:
		b.WriteString(" -> " + quote(out.Payload))
	case in.Op == history.Read:
		b.WriteString(" -> null")
	default:
		fmt.Fprintf(&b, " -> %d", out.Token)
	}
	return b.String()
}

func describeSinkState(s sinkState) string {
	var b strings.Builder
	if s.atLeast {
		fmt.Fprintf(&b, "fence>=%d", s.fence)
		if s.not != 0 {
			fmt.Fprintf(&b, " fence!=%d", s.not)
		}
	} else {
		fmt.Fprintf(&b, "fence=%d", s.fence)
	}
	b.WriteString(" {")
	it := s.res.t.Root().Iterator() // in the order of the ids' bytes
	for i := 0; ; i++ {
		k, r, more := it.Next()
		if !more {
			break
		}
		id := string(k)
		if i > 0 {
			b.WriteString(", ")
		}
		if r.other {
			fmt.Fprintf(&b, "%s: not %s", quote(id), quote(r.payload))
		} else if r.present {
			fmt.Fprintf(&b, "%s: %s", quote(id), quote(r.payload))
		} else {
			fmt.Fprintf(&b, "%s: absent", quote(id))
		}
	}
	b.WriteString("}")
	return b.String()
}

// opsOf returns the operations on one resource, in invoke order.
func opsOf(h *history.History, resource string) []op {
	var ops []op
	for _, o := range h.Ops() {
		if e := &h.Events[o.Invoke]; e.Resource == resource {
			ops = append(ops, op{inv: o.Invoke, end: o.Complete, kind: kindOf(e.F), res: h.Result(o)})
		}
	}
	return ops
}

// opMeta is the metadata of a porcupine operation: its process and events
// (end -1: unknown outcome); the models describe it for visualizations.
type opMeta struct {
	process  string
	inv, end int
}

// SinkOperations returns the sink operations (advance, write, read) on one
// resource as porcupine operations for SinkModel: Call and Return are event
// positions (so that "before" is line order); an info or open operation
// returns at math.MaxInt64 with an unknown output; failed operations, info
// reads and info writes whose effect nothing could observe are left out. A
// failed write of a process that a duplicate fault hit counts as unknown: a
// copy of it may have taken effect.
// ClientId numbers the processes densely; Metadata names the events.
func SinkOperations(h *history.History, resource string) []porcupine.Operation {
	c := newResCtx(h, resource, opsOf(h, resource))
	c.setSink(duplicated(h), applyLines(h, resource))
	return c.sinkOperations(false, math.MaxInt)
}

// EndToEndOperations returns the operations on one resource as porcupine
// operations for EndToEndModel: each distinct grant is one acquire from its
// request's first attempt to its ok (replays of it are left out, and so are
// info attempts of a request that was granted later); other info or open
// acquires have unknown outputs; writes and reads as in SinkOperations;
// advances, renews and releases are left out.
func EndToEndOperations(h *history.History, resource string) []porcupine.Operation {
	c := newResCtx(h, resource, opsOf(h, resource))
	c.setSink(duplicated(h), applyLines(h, resource))
	return c.sinkOperations(true, math.MaxInt)
}

// SinkLinearization checks the sink operations of one resource and returns
// what porcupine.Visualize needs to draw them: the model, the verdict
// (porcupine.Unknown when timeout, if not 0, ran out) and the linearization
// info.
func SinkLinearization(h *history.History, resource string, timeout time.Duration) (porcupine.Model, porcupine.CheckResult, porcupine.LinearizationInfo) {
	m := SinkModel(h.Header.Partial)
	res, info := porcupine.CheckOperationsVerbose(m, SinkOperations(h, resource), timeout)
	return m, res, info
}

// sinkOperations builds the porcupine operations of the resource, as of event
// position cut: operations invoked after it are left out and those completed
// after it have unknown outputs. endToEnd builds them for EndToEndModel.
//
// Call and Return are twice the event positions (an operation pinned by an
// apply event at line a runs from 2a to 2a+1, so that it lies between the
// lines around a). Failed writes are operations with a known rejection
// (SinkModel judges fenced and conflict; expired is always allowed), except
// those of a process a duplicate fault hit, which are unknown. A failed
// advance (a raise that found the fence already at or above its token,
// docs/real-systems.md) had no effect and names no token: it is left out.
// endToEnd leaves every failure out. Apply events that match no write (before a partial
// history) are operations of their own when they name a payload.
func (c *resCtx) sinkOperations(endToEnd bool, cut int) []porcupine.Operation {
	pinned := func(i int) (apply, bool) {
		if k, ok := c.applyOf[i]; ok && !endToEnd {
			return c.applies[k], true
		}
		return apply{}, false
	}
	known := func(i int) bool {
		if a, ok := pinned(i); ok {
			return a.line <= cut
		}
		o := c.ops[i]
		if o.res == history.Fail && (endToEnd || c.dups.hit(c.h.Events[o.inv].Process)) {
			return false
		}
		return o.res != history.Info && o.end <= cut
	}
	// The effect of an info write (the id now holds its payload, the fence
	// is its token) can only help explain a read that returned that payload,
	// a replayed write of that payload or a conflict on that id: every other
	// operation accepts the states without it as well. When no such
	// operation exists, leaving the write out (the same as linearizing it
	// last) loses no linearization.
	type idPayload struct{ id, payload string }
	seen := map[idPayload]bool{}
	conflictOn := map[string]bool{}
	granted := map[reqKey]bool{}
	for i, o := range c.ops {
		if o.inv > cut || !known(i) {
			continue
		}
		switch {
		case o.kind == kRead && c.out(i).HasPayload:
			seen[idPayload{c.in(i).ResultID, c.out(i).Payload}] = true
		case o.kind == kWrite:
			if a, ok := pinned(i); ok {
				if a.taken {
					seen[idPayload{c.in(i).ResultID, c.in(i).Payload}] = true
				} else if a.v.Error == history.Conflict {
					conflictOn[c.in(i).ResultID] = true
				}
			} else if o.res == history.OK {
				seen[idPayload{c.in(i).ResultID, c.in(i).Payload}] = true
			} else if c.out(i).Error == history.Conflict {
				conflictOn[c.in(i).ResultID] = true
			}
		case o.kind == kAcquire && o.res == history.OK:
			granted[c.reqKeyOf(i)] = true
		}
	}
	clients := map[string]int{}
	clientOf := func(p string) int {
		id, ok := clients[p]
		if !ok {
			id = len(clients)
			clients[p] = id
		}
		return id
	}
	var out []porcupine.Operation
	for i, o := range c.ops {
		if o.inv > cut || (endToEnd || o.kind == kAdvance) && o.res == history.Fail {
			continue // a failed advance found the fence at or above its token: no effect
		}
		v := c.in(i)
		p := c.h.Events[o.inv].Process
		in := SinkInput{Resource: c.name, Op: c.h.Events[o.inv].F, Token: v.Token, ResultID: v.ResultID, Payload: v.Payload}
		res := SinkOutput{Known: known(i)}
		call, ret := 2*int64(o.inv), int64(math.MaxInt64)
		meta := opMeta{p, o.inv, -1}
		if res.Known {
			ret = 2 * int64(o.end)
			meta.end = o.end
		}
		switch o.kind {
		case kAdvance:
			if endToEnd {
				continue
			}
			res.Token = c.out(i).Token
		case kAcquire:
			if !endToEnd {
				continue
			}
			if res.Known {
				g := c.grants[c.grantOfOp[i]]
				if g.op != i {
					continue // a replay
				}
				call, res.Token = 2*int64(g.from), g.token
			} else if granted[c.reqKeyOf(i)] {
				continue // an attempt of a request granted later
			}
		case kWrite:
			a, isPinned := pinned(i)
			switch {
			case isPinned && res.Known:
				call, ret = 2*int64(a.line), 2*int64(a.line)+1
				res.Outcome, res.Error = a.v.Outcome, a.v.Error
				res.Fence, res.HasFence = c.reportedFence(i, a)
				meta.end = a.line
			case res.Known:
				ov := c.out(i)
				res.Outcome, res.Error, res.Fence, res.HasFence = ov.Outcome, ov.Error, ov.Fence, ov.HasFence
			case o.res == history.Fail && o.end > cut:
				continue // not failed yet: it took no effect, and nothing can rely on it
			case !seen[idPayload{v.ResultID, v.Payload}] && !conflictOn[v.ResultID]:
				continue
			}
			res.Either = c.dups.hit(p)
		case kRead:
			if !res.Known {
				continue
			}
			res.Payload, res.HasPayload = c.out(i).Payload, c.out(i).HasPayload
		default:
			continue
		}
		out = append(out, porcupine.Operation{ClientId: clientOf(p), Input: in, Call: call, Output: res, Return: ret, Metadata: meta})
	}
	if endToEnd {
		return out
	}
	for _, a := range c.applies {
		if a.op >= 0 || a.line > cut || a.taken && !a.v.HasPayload {
			continue
		}
		in := SinkInput{Resource: c.name, Op: history.Write, Token: a.v.Token, ResultID: a.v.ResultID, Payload: a.v.Payload}
		if a.v.Error == history.Conflict && !a.v.HasPayload {
			continue // a conflict with an unknown payload: nothing to judge
		}
		res := SinkOutput{Known: true, Outcome: a.v.Outcome, Error: a.v.Error, Fence: a.v.Fence, HasFence: a.v.HasFence,
			Either: c.dups.hit(a.v.Writer)}
		out = append(out, porcupine.Operation{ClientId: clientOf(history.Sink + "/" + a.v.Writer), Input: in,
			Call: 2 * int64(a.line), Output: res, Return: 2*int64(a.line) + 1, Metadata: opMeta{history.Sink, a.line, a.line}})
	}
	return out
}

// checkLinearizableSink runs porcupine on the resource's sink operations.
// When they have no linearization it looks for the shortest prefix (cut at
// the completion of an ok operation) that has none, and reports the
// operation completing there.
func (c *resCtx) checkLinearizableSink(opt Options) {
	if !c.partial {
		for _, a := range c.applies {
			if a.op < 0 && !a.copy {
				c.add(LinearizableSink, []int{a.line},
					"apply at event %d decides a write by %s (token=%d resultId=%s) that was not invoked before it",
					a.line, a.v.Writer, a.v.Token, quote(a.v.ResultID))
			}
		}
	}
	ops := c.sinkOperations(false, math.MaxInt)
	if len(ops) == 0 {
		return
	}
	m := SinkModel(c.partial)
	m.Partition = nil // the operations are those of one resource already
	switch porcupine.CheckOperationsTimeout(m, ops, opt.Timeout) {
	case porcupine.Ok:
		return
	case porcupine.Unknown:
		c.unknown = append(c.unknown, LinearizableSink)
		return
	}
	// Cuts: the lines where an operation's outcome becomes known (an ok or
	// fail completion, an apply), with the operation (-1 - apply index for
	// an apply that matches no write).
	var cuts []int
	byEnd := map[int]int{}
	for i, o := range c.ops {
		if o.kind != kAdvance && o.kind != kWrite && o.kind != kRead {
			continue
		}
		if k, ok := c.applyOf[i]; ok {
			cuts = append(cuts, c.applies[k].line)
			byEnd[c.applies[k].line] = i
		} else if o.res == history.OK || o.res == history.Fail && o.kind == kWrite {
			cuts = append(cuts, o.end)
			byEnd[o.end] = i
		}
	}
	for k, a := range c.applies {
		if a.op < 0 {
			cuts = append(cuts, a.line)
			byEnd[a.line] = -1 - k
		}
	}
	if len(cuts) == 0 { // cannot happen: unknown outcomes alone always linearize
		return
	}
	slices.Sort(cuts)
	lo, hi := -1, len(cuts)-1 // every prefix up to cuts[hi] is known to have no linearization
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if porcupine.CheckOperationsTimeout(m, c.sinkOperations(false, cuts[mid]), opt.Timeout) == porcupine.Illegal {
			hi = mid
		} else {
			lo = mid
		}
	}
	i := byEnd[cuts[hi]]
	if i < 0 {
		a := c.applies[-1-i]
		c.add(LinearizableSink, []int{a.line},
			"the sink's operations up to event %d have no linearization under the fenced-sink spec; the last is the apply of write token=%d resultId=%s by %s",
			cuts[hi], a.v.Token, quote(a.v.ResultID), a.v.Writer)
		return
	}
	ev := c.events(i)
	if k, ok := c.applyOf[i]; ok {
		ev = append(ev, c.applies[k].line)
	}
	c.add(LinearizableSink, ev,
		"the sink's operations up to event %d have no linearization under the fenced-sink spec; the last is %s",
		cuts[hi], c.describe(i))
}
