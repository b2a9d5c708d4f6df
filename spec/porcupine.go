package spec

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

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
	// Outcome is a write's outcome, history.Written or history.Replayed;
	// the models accept either (see SinkModel). Failed operations are not
	// given to the models (see SinkOperations).
	Outcome string
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
	// partial: a result id with no entry in res is unknown rather than
	// absent.
	partial bool
	res     *results
}

// results maps result ids to what is known of them, with a hash kept up to
// date so that states compare quickly.
type results struct {
	m    map[string]result
	hash uint64
}

// result is known: present with a payload, or absent.
type result struct {
	payload string
	present bool
}

func entryHash(id string, r result) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0, 1})
	if r.present {
		h.Write([]byte(r.payload))
		h.Write([]byte{1})
	}
	return h.Sum64()
}

// lookup returns what is known of id; known is false when it may be anything.
func (s sinkState) lookup(id string) (r result, known bool) {
	if r, ok := s.res.m[id]; ok {
		return r, true
	}
	return result{}, !s.partial
}

// with returns a copy of s that knows r for id.
func (s sinkState) with(id string, r result) sinkState {
	m := make(map[string]result, len(s.res.m)+1)
	maps.Copy(m, s.res.m)
	hash := s.res.hash
	if old, ok := m[id]; ok {
		hash ^= entryHash(id, old)
	}
	m[id] = r
	s.res = &results{m: m, hash: hash ^ entryHash(id, r)}
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
			s.atLeast = true
			return true, s
		}
		if out.Token <= s.fence {
			return false, s
		}
		s.fence, s.atLeast = out.Token, false
		return true, s
	case history.Write:
		match := in.Token == s.fence || s.atLeast && in.Token > s.fence
		if !out.Known {
			if match {
				s.fence, s.atLeast = in.Token, false
				if r, known := s.lookup(in.ResultID); known && !r.present {
					s = s.with(in.ResultID, result{in.Payload, true})
				}
			}
			return true, s
		}
		if !match {
			return false, s
		}
		s.fence, s.atLeast = in.Token, false
		// written and replayed are both "the result now holds this
		// payload": when the network duplicates a write, the copy that took
		// effect and the copy whose reply the client saw can differ, so a
		// client may see replayed for its own first write (or written for a
		// retry). The sequential spec therefore does not tell them apart.
		r, known := s.lookup(in.ResultID)
		switch {
		case known && r.present:
			if r.payload != in.Payload {
				return false, s
			}
		case known:
			s = s.with(in.ResultID, result{in.Payload, true})
		default:
			s = s.with(in.ResultID, result{in.Payload, true})
		}
		return true, s
	case history.Read:
		if !out.Known {
			return true, s
		}
		r, known := s.lookup(in.ResultID)
		if !known {
			return true, s.with(in.ResultID, result{out.Payload, out.HasPayload})
		}
		return r.present == out.HasPayload && r.payload == out.Payload, s
	}
	return false, s
}

func sinkModel(partial bool, grantOp string) porcupine.Model {
	init := sinkState{partial: partial, atLeast: partial, res: &results{}}
	return porcupine.Model{
		Partition: partitionByResource,
		Init:      func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			return sinkStep(grantOp, state.(sinkState), input.(SinkInput), output.(SinkOutput))
		},
		Equal: func(a, b any) bool {
			x, y := a.(sinkState), b.(sinkState)
			return x.fence == y.fence && x.atLeast == y.atLeast &&
				(x.res == y.res || x.res.hash == y.res.hash && maps.Equal(x.res.m, y.res.m))
		},
		Hash: func(state any) uint64 {
			s := state.(sinkState)
			h := uint64(s.fence)*0x9e3779b97f4a7c15 ^ s.res.hash
			if s.atLeast {
				h ^= 0x5555
			}
			return h
		},
		DescribeOperation: func(input, output any) string { return describeSinkOp(input.(SinkInput), output.(SinkOutput)) },
		DescribeState:     func(state any) string { return describeSinkState(state.(sinkState)) },
		DescribeOperationMetadata: func(info any) string {
			m, ok := info.(opMeta)
			switch {
			case !ok:
				return ""
			case m.end < 0:
				return fmt.Sprintf("%s: event %d", m.process, m.inv)
			}
			return fmt.Sprintf("%s: events %d-%d", m.process, m.inv, m.end)
		},
	}
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
func SinkModel(partial bool) porcupine.Model { return sinkModel(partial, history.Advance) }

// EndToEndModel is porcupine's specification of the ideal end-to-end object
// of one resource: grants and writes as one atomic fenced object. An acquire
// (SinkInput.Op history.Acquire) grants a token above every earlier one and
// makes it the fence; a write is accepted iff its token is the current one,
// with the same result rules as SinkModel; read as in SinkModel. A history is
// linearizable under it when the protocol as a whole behaved like that
// object. Build its operations with EndToEndOperations.
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
	} else {
		fmt.Fprintf(&b, "fence=%d", s.fence)
	}
	ids := slices.Sorted(maps.Keys(s.res.m))
	b.WriteString(" {")
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		if r := s.res.m[id]; r.present {
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
	c.dups = duplicated(h)
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
	c.dups = duplicated(h)
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
func (c *resCtx) sinkOperations(endToEnd bool, cut int) []porcupine.Operation {
	known := func(i int) bool {
		return c.ops[i].res == history.OK && c.ops[i].end <= cut
	}
	// The effect of an info write (the id now holds its payload, the fence
	// is its token) can only help explain a read that returned that payload:
	// every other operation accepts the states without it as well. When no
	// such read exists, leaving the write out (the same as linearizing it
	// last) loses no linearization.
	type idPayload struct{ id, payload string }
	seen := map[idPayload]bool{}
	granted := map[reqKey]bool{}
	for i, o := range c.ops {
		if o.inv > cut || !known(i) {
			continue
		}
		switch {
		case o.kind == kRead && c.out(i).HasPayload:
			seen[idPayload{c.in(i).ResultID, c.out(i).Payload}] = true
		case o.kind == kAcquire:
			granted[c.reqKeyOf(i)] = true
		}
	}
	clients := map[string]int{}
	var out []porcupine.Operation
	for i, o := range c.ops {
		// A duplicated request breaks the premise that a fail took no
		// effect: the first copy may have written and the client seen the
		// second copy's fenced or conflict. Such a fail counts as unknown.
		failUnknown := o.kind == kWrite && c.dups.hit(c.h.Events[o.inv].Process)
		if o.inv > cut || o.res == history.Fail && !failUnknown {
			continue
		}
		v := c.in(i)
		in := SinkInput{Resource: c.name, Op: c.h.Events[o.inv].F, Token: v.Token, ResultID: v.ResultID, Payload: v.Payload}
		res := SinkOutput{Known: known(i)}
		call, ret := int64(o.inv), int64(math.MaxInt64)
		if res.Known {
			ret = int64(o.end)
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
				call, res.Token = int64(g.from), g.token
			} else if granted[c.reqKeyOf(i)] {
				continue // an attempt of a request granted later
			}
		case kWrite:
			if res.Known {
				res.Outcome = c.out(i).Outcome
			} else if !seen[idPayload{v.ResultID, v.Payload}] {
				continue
			}
		case kRead:
			if !res.Known {
				continue
			}
			res.Payload, res.HasPayload = c.out(i).Payload, c.out(i).HasPayload
		default:
			continue
		}
		p := c.h.Events[o.inv].Process
		id, ok := clients[p]
		if !ok {
			id = len(clients)
			clients[p] = id
		}
		meta := opMeta{p, o.inv, -1}
		if res.Known {
			meta.end = o.end
		}
		out = append(out, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: res, Return: ret, Metadata: meta})
	}
	return out
}

// checkLinearizableSink runs porcupine on the resource's sink operations.
// When they have no linearization it looks for the shortest prefix (cut at
// the completion of an ok operation) that has none, and reports the
// operation completing there.
func (c *resCtx) checkLinearizableSink(opt Options) {
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
	var cuts []int // completion lines of ok sink operations, with their op
	byEnd := map[int]int{}
	for i, o := range c.ops {
		if o.res == history.OK && (o.kind == kAdvance || o.kind == kWrite || o.kind == kRead) {
			cuts = append(cuts, o.end)
			byEnd[o.end] = i
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
	c.add(LinearizableSink, c.events(i),
		"the sink's operations up to event %d have no linearization under the fenced-sink spec; the last is %s",
		cuts[hi], c.describe(i))
}
