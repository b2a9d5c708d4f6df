package model_test

import (
	"fmt"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestStrikingReadsIsASimulation checks ReduceReads' proof by brute force
// on small bounds, for every built-in design it applies to, with an
// asynchronous and a partially synchronous network: the machine without
// reads simulates the machine with them, when every read and every step on
// its messages (their delivery, loss and duplication, the timeout that
// ends it) is matched by no step at all and every other step by the same
// step, naming the same message up to whether it is live (the read's start
// and timeout mark the worker's other messages dead, which its next
// operation does in the run without it). The match must have the same
// fact and every verdict of the step it matches, and a read's steps must
// have no verdict. Together with TestSimulatingStatesCoverFullSearch,
// whose full search runs without reads, it makes the check of the reduced
// search against brute force cover every reduction.
//
// The relation checked is the largest simulation, within a depth, over
// the pairs of states the two machines reach in step (a product search,
// then pairs with an unmatched step removed until none is), so that a
// choice among matching steps (two copies of a message, one live and one
// dead) cannot make it fail wrongly; it fails if the initial pair is
// removed.
func TestStrikingReadsIsASimulation(t *testing.T) {
	for _, k := range []struct {
		c     model.Config
		depth int
	}{
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2, Drops: 1, Dups: 1, Crashes: 1, Restarts: 1, Forgeries: 1}, 8},
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 2, InFlight: 2, Dups: 1, Delay: 1, Pause: 1}, 10},
	} {
		applied, pairs, struck := 0, 0, 0
		for _, v := range designs.All() {
			m, err := v.Machine(k.c)
			if err != nil {
				t.Fatal(err)
			}
			if m.Applies(model.ReduceReads) == 0 {
				continue
			}
			p := strikeReads(t, m, k.depth)
			if p.struck == 0 {
				t.Fatalf("%s %+v: no read step struck: the test checks nothing", v.Name, k.c)
			}
			if why := p.largestSimulation(); why != "" {
				t.Fatalf("%s %+v: striking reads is not a simulation: %s", v.Name, k.c, why)
			}
			applied++
			pairs += len(p.keys)
			struck += p.struck
		}
		t.Logf("%+v to depth %d, %d designs: %d pairs of states, %d read steps struck", k.c, k.depth, applied, pairs, struck)
	}
}

// maxPairs bounds a product search, so that a bound too large fails the
// test instead of exhausting memory.
const maxPairs = 4_000_000

// readProduct is the product of a machine with itself without reads, to a
// depth: its pairs of states (u, and v, which the run without reads reaches
// by the matching steps), and for each pair expanded, for each step of u,
// the pairs a matching step leads to (none: the step is unmatched).
type readProduct struct {
	keys   []string // pair -> the length of u's key (2 bytes), u's key, v's key
	groups []int32  // pair -> its first step in ends; pairs not expanded have none
	ends   []int32  // step -> the end of its successors in succ
	succ   []int32
	why    map[int32]string // pair -> its unmatched step
	struck int
}

// readStep reports whether a, enabled in u, is a read's step: the read, a
// step on its messages, or the timeout that ends it.
func readStep(u *model.State, a *model.Action) bool {
	switch a.Kind {
	case model.Read:
		return true
	case model.Deliver, model.Drop, model.Duplicate:
		return a.Msg.Kind == model.ReadReq || a.Msg.Kind == model.ReadRep
	case model.Timeout:
		return u.Workers[a.Worker].Pending == model.OpRead
	}
	return false
}

// strikeReads builds the product of m from its initial state, breadth
// first, expanding the pairs less than depth steps from it.
func strikeReads(t *testing.T, m *model.Machine, depth int) *readProduct {
	p := &readProduct{why: map[int32]string{}}
	index := map[string]int32{}
	var buf []byte
	add := func(u, v *model.State) int32 {
		buf = m.Encode(u, append(buf[:0], 0, 0))
		buf[0], buf[1] = byte(len(buf)-2), byte((len(buf)-2)>>8)
		buf = m.Encode(v, buf)
		if i, ok := index[string(buf)]; ok {
			return i
		}
		if len(p.keys) == maxPairs {
			t.Fatalf("more than %d pairs: the bound is too large for this test", maxPairs)
		}
		i := int32(len(p.keys))
		key := string(buf)
		index[key] = i
		p.keys = append(p.keys, key)
		return i
	}
	init := m.Init()
	add(&init, &init)
	var uacts, vacts []model.Action
	var s struct{ u, v model.State }
	for level, end := 0, 1; level < depth; level++ {
		start := len(p.groups)
		for i := start; i < end; i++ {
			p.groups = append(p.groups, int32(len(p.ends)))
			key := p.keys[i]
			ku := 2 + (int(key[0]) | int(key[1])<<8)
			if err := m.Decode([]byte(key[2:ku]), &s.u); err != nil {
				t.Fatal(err)
			}
			if err := m.Decode([]byte(key[ku:]), &s.v); err != nil {
				t.Fatal(err)
			}
			uacts = m.Enabled(&s.u, uacts[:0])
			vacts = m.Enabled(&s.v, vacts[:0])
			for _, a := range uacts {
				un := s.u
				f := m.Next(&un, &a)
				verdict := spec.Judge(m, &s.u, f, &un)
				if readStep(&s.u, &a) {
					if verdict != 0 {
						t.Fatalf("a read's step %v has the verdict %v", a, verdict.IDs())
					}
					p.struck++
					p.succ = append(p.succ, add(&un, &s.v))
					p.ends = append(p.ends, int32(len(p.succ)))
					continue
				}
				matched := len(p.succ)
				for _, b := range vacts {
					same := b
					if same.Msg.Live = a.Msg.Live; same != a {
						continue
					}
					vn := s.v
					g := m.Next(&vn, &b)
					if g != f || spec.Judge(m, &s.v, g, &vn)&verdict != verdict {
						continue
					}
					p.succ = append(p.succ, add(&un, &vn))
				}
				if len(p.succ) == matched {
					p.why[int32(i)] = "no step of the run without reads matches " + a.String()
				}
				p.ends = append(p.ends, int32(len(p.succ)))
			}
		}
		end = len(p.keys)
	}
	return p
}

// stepsRemoved is why a pair is removed whose steps are matched, one only
// by steps to pairs removed.
const stepsRemoved = "a step leads only to pairs removed"

// largestSimulation removes, until none is left, every expanded pair with
// a step of u that leads to no pair not removed, and returns why the
// initial pair was removed ("" if it was not). Pairs at the depth bound,
// not expanded, stay.
func (p *readProduct) largestSimulation() string {
	removed := make([]bool, len(p.keys))
	for changed := true; changed; {
		changed = false
		for i := range p.groups {
			if removed[i] {
				continue
			}
			last := int32(len(p.ends))
			if i+1 < len(p.groups) {
				last = p.groups[i+1]
			}
			from := int32(0)
			if g := p.groups[i]; g > 0 {
				from = p.ends[g-1]
			}
			for step := p.groups[i]; step < last; step++ {
				ok := false
				for _, j := range p.succ[from:p.ends[step]] {
					ok = ok || !removed[j]
				}
				from = p.ends[step]
				if !ok {
					removed[i], changed = true, true
					if p.why[int32(i)] == "" {
						p.why[int32(i)] = stepsRemoved
					}
					break
				}
			}
		}
	}
	if !removed[0] {
		return ""
	}
	for i := range p.groups { // the shallowest pair removed for a step of its own
		if why, ok := p.why[int32(i)]; removed[i] && ok && why != stepsRemoved {
			return fmt.Sprintf("%s, in the pair of states #%d (breadth-first)", why, i)
		}
	}
	return p.why[0]
}
