package spec

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
)

// The differential test: Check against the brute force (brute_test.go) on
// many small histories, from a simulator of the protocol (with injected
// bugs) and at random. The hard requirement is no false alarm: Check reports
// an invariant only where the brute force finds every timing violating it.
// Misses (the brute force certain, Check silent) are counted and logged: some
// of Check's rules are deliberately conservative (docs/invariants.md lists
// the known ones).
//
//	go test ./spec -run TestDifferential -diff.n=100000 -v
var (
	diffN      = flag.Int("diff.n", 3000, "differential test: histories per generator")
	diffSeed   = flag.Uint64("diff.seed", 1, "differential test: first seed")
	diffBudget = flag.Int("diff.budget", 200000, "differential test: timings the brute force tries per invariant before it gives up")
	diffShow   = flag.Int("diff.show", 2, "differential test: misses shown per invariant")
	diffGens   = flag.String("diff.gens", "", "differential test: run only the generators whose name this regular expression matches")
)

type simWorker struct {
	name     string
	inc      int
	token    []int64 // the token it believes it holds, by resource, 0 none
	reqs     int
	retry    string // request id of an info acquire to retry
	retryTT  int64
	retryRes int // and its resource
	op       *simOp
}

type simOp struct {
	w         int // worker index, -1 coordinator
	r         int // resource index
	f         string
	v         history.Value
	effected  bool
	completed bool // its completion line is written (an info one may still take effect)
	res       history.Value
	fail      bool
	dup       bool
}

// Bugs the simulator can inject, one or more per history.
const (
	bugNoExclusion = 1 << iota
	bugGrantBeforeAdvance
	bugNoDedup
	bugRenewNoCheck
	bugNoFence
	bugAcceptHigher
	bugWrittenAlways
	bugVolatileCounter
	bugTakeoverNoAdvance
	bugForeignFence // the sink's fence moves without an advance: one fence for every resource, also moved by others
	nBugs           = iota
)

// simRes is one resource of the simulated system: its lease at the
// coordinator and its part of the sink.
type simRes struct {
	name     string
	holder   string
	token    int64
	deadline int64
	fence    int64
	results  map[string]string
}

type sim struct {
	rng     *rand.Rand
	h       *history.History
	now     int64
	bugs    int
	applies bool
	fences  bool
	tasks   bool
	big     bool
	dedup   map[string][2]int64 // the coordinator's request id → grant (token, ttl), every resource's
	counter int64               // the coordinator's one token counter, for every resource
	res     []simRes
	ws      []simWorker
	pending []*simOp
	ops     int
	// quiet[k]: before event k was emitted, every operation that had not
	// taken effect was an acquire (or none was pending): a window of the
	// history from event k on misses no effect of an operation before it
	// but an acquire's (see windowOf).
	quiet []bool
}

// emit records an event on the resource named (none for a fault).
func (s *sim) emit(process, resource string, typ history.Type, f string, v history.Value) {
	q := true
	for _, o := range s.pending {
		q = q && (o.effected || o.f == history.Acquire)
	}
	s.quiet = append(s.quiet, q)
	s.h.Events = append(s.h.Events, history.Event{Time: s.now, Process: process, Type: typ, F: f, Resource: resource,
		Value: v, Index: int64(len(s.h.Events))})
}

// pick draws a resource; with one, it draws nothing, so that one resource's
// histories stay those of the one-resource simulator of old, seed for seed.
func (s *sim) pick() int {
	if len(s.res) == 1 {
		return 0
	}
	return s.rng.IntN(len(s.res))
}

// fence is the sink's fence for resource r: with bugForeignFence, one fence
// for every resource.
func (s *sim) fence(r int) *int64 {
	if s.bugs&bugForeignFence != 0 {
		return &s.res[0].fence
	}
	return &s.res[r].fence
}

func (s *sim) nextToken() int64 {
	if s.bugs&bugVolatileCounter != 0 && s.rng.IntN(3) == 0 {
		s.counter = 0
	}
	if s.big {
		s.counter += 1 + s.rng.Int64N(1<<40)
	} else {
		s.counter++
	}
	return s.counter
}

func (s *sim) advance(r int, v int64) {
	name, fence := s.res[r].name, s.fence(r)
	s.emit(history.Coordinator, name, history.Invoke, history.Advance, history.Value{})
	s.ops++
	if v <= *fence && s.bugs&bugVolatileCounter == 0 { // a raise that finds the fence at or above v: a no-op
		s.emit(history.Coordinator, name, history.Fail, history.Advance, history.Value{Error: history.Fenced})
		return
	}
	*fence = v
	s.emit(history.Coordinator, name, history.OK, history.Advance, history.Value{Token: v})
}

// effect applies op o to the simulated system and records its result.
func (s *sim) effect(o *simOp) {
	o.effected = true
	w := &s.ws[o.w]
	r := &s.res[o.r]
	who := w.name + "/" + o.v.Incarnation
	valid := r.holder != "" && s.now < r.deadline
	switch o.f {
	case history.Acquire:
		if g, ok := s.dedup[o.v.RequestID]; ok && s.bugs&bugNoDedup == 0 {
			o.res = history.Value{Token: g[0], TTL: g[1]}
			return
		}
		if valid && s.bugs&bugNoExclusion == 0 {
			o.fail, o.res = true, history.Value{Error: history.Held}
			return
		}
		t := s.nextToken()
		if s.bugs&(bugGrantBeforeAdvance|bugTakeoverNoAdvance) == 0 {
			s.advance(o.r, t)
		} else if s.bugs&bugGrantBeforeAdvance != 0 {
			s.pending = append(s.pending, &simOp{w: -1, r: o.r, f: history.Advance, res: history.Value{Token: t}})
		}
		r.holder, r.token, r.deadline = who, t, s.now+o.v.TTL
		s.dedup[o.v.RequestID] = [2]int64{t, o.v.TTL}
		o.res = history.Value{Token: t, TTL: o.v.TTL}
	case history.Renew:
		switch {
		case s.bugs&bugRenewNoCheck != 0:
			r.deadline = s.now + o.v.TTL
		case r.holder != who || r.token != o.v.Token:
			o.fail, o.res = true, history.Value{Error: history.NotHolder}
		case !valid:
			o.fail, o.res = true, history.Value{Error: history.Expired}
		default:
			r.deadline = s.now + o.v.TTL
		}
	case history.Release:
		if r.holder != who || r.token != o.v.Token {
			o.fail, o.res = true, history.Value{Error: history.NotHolder}
			return
		}
		r.holder = ""
	case history.Write:
		copies := 1
		if o.dup {
			copies = 2
		}
		for range copies {
			s.sinkWrite(o)
		}
	case history.Read:
		p, ok := r.results[o.v.ResultID]
		o.res = history.Value{Payload: p, HasPayload: ok}
	}
}

func (s *sim) sinkWrite(o *simOp) {
	w, r, fence := s.ws[o.w], &s.res[o.r], *s.fence(o.r)
	pass := o.v.Token == fence || s.bugs&bugNoFence != 0 || s.bugs&bugAcceptHigher != 0 && o.v.Token > fence
	o.fail, o.res = false, history.Value{}
	switch old, present := r.results[o.v.ResultID]; {
	case !pass:
		o.fail, o.res = true, history.Value{Error: history.Fenced}
	case present && old != o.v.Payload:
		o.fail, o.res = true, history.Value{Error: history.Conflict}
	case present:
		o.res.Outcome = history.Replayed
		if s.bugs&bugWrittenAlways != 0 {
			o.res.Outcome = history.Written
		}
	default:
		r.results[o.v.ResultID] = o.v.Payload
		o.res.Outcome = history.Written
	}
	if s.fences && s.rng.IntN(2) == 0 {
		o.res.Fence, o.res.HasFence = fence, true
	}
	if s.applies && s.rng.IntN(2) == 0 {
		a := history.Value{Writer: w.name, Token: o.v.Token, ResultID: o.v.ResultID, Payload: o.v.Payload,
			HasPayload: true, Task: o.v.Task, Outcome: o.res.Outcome, Error: o.res.Error}
		if s.fences {
			a.Fence, a.HasFence = fence, true
		}
		s.emit(history.Sink, r.name, history.Info, history.Apply, a)
	}
}

func (s *sim) invoke(wi int) {
	w := &s.ws[wi]
	inc := fmt.Sprint(w.inc)
	o := &simOp{w: wi, r: s.pick()}
	rng := s.rng
	ttl := int64(2 + rng.IntN(6))
	switch {
	case w.retry != "" && rng.IntN(3) > 0:
		o.f, o.r = history.Acquire, w.retryRes
		if rng.IntN(3) == 0 {
			w.retryTT = ttl
		}
		o.v = history.Value{Owner: w.name, Incarnation: inc, RequestID: w.retry, TTL: w.retryTT}
	case w.token[o.r] == 0 || rng.IntN(8) == 0:
		w.reqs++
		o.f = history.Acquire
		o.v = history.Value{Owner: w.name, Incarnation: inc, RequestID: fmt.Sprintf("%s.%d", w.name, w.reqs), TTL: ttl}
	default:
		tok := w.token[o.r]
		switch rng.IntN(10) {
		case 0:
			tok = max(1, tok-1)
		case 1:
			tok += 1 + rng.Int64N(3)
		}
		switch p := rng.IntN(100); {
		case p < 45:
			id := []string{"r", "s"}[rng.IntN(2)]
			o.f = history.Write
			o.v = history.Value{Token: tok, ResultID: id, Payload: fmt.Sprintf("%s@%d", w.name, tok), HasPayload: true}
			if rng.IntN(5) == 0 {
				o.v.Payload = "same"
			}
			if s.tasks {
				o.v.Task = "T"
			}
		case p < 72:
			o.f = history.Renew
			o.v = history.Value{Owner: w.name, Incarnation: inc, Token: tok, TTL: int64(1 + rng.IntN(7))}
			if rng.IntN(5) == 0 {
				o.v.TTL = 0
			}
		case p < 85:
			o.f = history.Release
			o.v = history.Value{Owner: w.name, Incarnation: inc, Token: tok}
		default:
			o.f = history.Read
			o.v = history.Value{ResultID: []string{"r", "s"}[rng.IntN(2)]}
		}
	}
	if o.f == history.Acquire {
		w.retry = ""
	}
	w.op = o
	s.ops++
	s.emit(w.name, s.res[o.r].name, history.Invoke, o.f, o.v)
	s.pending = append(s.pending, o)
}

func (s *sim) complete(o *simOp) {
	w := &s.ws[o.w]
	name := s.res[o.r].name
	rng := s.rng
	o.completed = true
	w.op = nil
	if !o.effected && rng.IntN(2) == 0 {
		s.effect(o)
	}
	if !o.effected || rng.IntN(7) == 0 { // a lost request or a lost reply
		s.emit(w.name, name, history.Info, o.f, history.Value{})
		if o.f == history.Acquire {
			w.retry, w.retryTT, w.retryRes = o.v.RequestID, o.v.TTL, o.r
		}
		return
	}
	s.removePending(o)
	v := o.res
	if o.fail {
		s.emit(w.name, name, history.Fail, o.f, history.Value{Error: v.Error, Fence: v.Fence, HasFence: v.HasFence})
		if o.f != history.Write || v.Error == history.Fenced {
			w.token[o.r] = 0
		}
		return
	}
	switch o.f {
	case history.Acquire:
		w.token[o.r] = v.Token
		if rng.IntN(2) == 0 {
			v = history.Value{Token: v.Token}
		}
	case history.Release:
		w.token[o.r] = 0
		v = history.Value{}
	case history.Renew:
		v = history.Value{}
	}
	s.emit(w.name, name, history.OK, o.f, v)
}

func (s *sim) removePending(o *simOp) {
	for i, p := range s.pending {
		if p == o {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return
		}
	}
}

// simHistory simulates the protocol on one resource with three workers:
// grants, renews with varying ttl, releases, writes (stale ones, big tokens,
// tasks), reads; lost requests and replies (info), requests retried with the
// same id (replayed, perhaps with another ttl), effects at any instant of an
// operation (even after an info), pauses, duplicate faults, apply events
// and reported fences, partial histories (with a past: a fence, a lease and
// a result from before the first event), and injected bugs.
func simHistory(rng *rand.Rand, maxOps int) *history.History {
	return simOn(rng, maxOps, "job")
}

// simHistory2 is simHistory on two resources with twice the operations (so
// that each resource has about as many as simHistory's one) and one token
// counter: each operation's resource is drawn at its invocation (a retry
// keeps its request's), so a worker holds a lease on either or both, and
// with bugForeignFence the sink has one fence that each resource's advances
// move.
func simHistory2(rng *rand.Rand, maxOps int) *history.History {
	return simOn(rng, 2*maxOps, "job", "job2")
}

// simOn is simHistory on the resources named.
func simOn(rng *rand.Rand, maxOps int, resources ...string) *history.History {
	return simRun(rng, maxOps, resources...).h
}

// simRun is simOn, returning the simulation (its history is s.h).
func simRun(rng *rand.Rand, maxOps int, resources ...string) *sim {
	s := &sim{rng: rng, h: &history.History{HasHeader: true, Header: history.Header{Format: history.Format, Version: history.Version}},
		dedup: map[string][2]int64{}}
	for _, name := range resources {
		s.res = append(s.res, simRes{name: name, results: map[string]string{}})
	}
	if rng.IntN(3) > 0 {
		s.bugs = 1 << rng.IntN(nBugs)
		if rng.IntN(4) == 0 {
			s.bugs |= 1 << rng.IntN(nBugs)
		}
	}
	s.applies, s.fences, s.tasks, s.big = rng.IntN(3) == 0, rng.IntN(3) == 0, rng.IntN(4) == 0, rng.IntN(6) == 0
	for i := range 3 {
		s.ws = append(s.ws, simWorker{name: fmt.Sprintf("w%d", i+1), inc: 1, token: make([]int64, len(resources))})
	}
	if rng.IntN(5) == 0 {
		s.h.Header.Partial = true
		s.counter = 3
		for i := range s.res {
			s.res[i].fence = 3
			s.res[i].results["r"] = "old"
		}
		if rng.IntN(2) == 0 {
			r := &s.res[0]
			r.holder, r.token, r.deadline = "w3/1", 3, int64(rng.IntN(6))
			s.ws[2].token[0] = 3
		}
	}
	for steps := 0; steps < 60*len(resources) && s.ops < maxOps; steps++ {
		s.now += int64(rng.IntN(2))
		switch p := rng.IntN(100); {
		case p < 30:
			var idle []int
			for i, w := range s.ws {
				if w.op == nil {
					idle = append(idle, i)
				}
			}
			if len(idle) > 0 {
				s.invoke(idle[rng.IntN(len(idle))])
			}
		case p < 55:
			var ready []*simOp
			for _, o := range s.pending {
				if !o.effected {
					ready = append(ready, o)
				}
			}
			if len(ready) > 0 {
				o := ready[rng.IntN(len(ready))]
				if o.w < 0 {
					s.removePending(o)
					s.advance(o.r, o.res.Token)
				} else {
					s.effect(o)
					if o.completed {
						s.removePending(o)
					}
				}
			}
		case p < 85:
			var open []*simOp
			for _, o := range s.pending {
				if o.w >= 0 && !o.completed {
					open = append(open, o)
				}
			}
			if len(open) > 0 {
				s.complete(open[rng.IntN(len(open))])
			}
		case p < 92:
			s.now += int64(1 + rng.IntN(4))
		case p < 95:
			if s.bugs&bugForeignFence != 0 {
				*s.fence(0) += 1 + rng.Int64N(2)
			}
		default:
			w := s.ws[rng.IntN(3)]
			if w.op != nil && w.op.f == history.Write && !w.op.effected && rng.IntN(2) == 0 {
				w.op.dup = true
				s.emit(history.Nemesis, "", history.Info, history.Duplicate, history.Value{Target: w.name})
			} else {
				s.emit(w.name, "", history.Info, history.Pause, history.Value{})
			}
		}
	}
	return s
}

// randomHistory is a well-formed history of random operations with random
// outcomes on one resource (no protocol at all), with random apply events,
// reported fences, faults and headers.
func randomHistory(rng *rand.Rand, maxOps int) *history.History {
	return randomOn(rng, maxOps, "job")
}

// randomHistory2 is randomHistory on two resources: each operation's is drawn
// at its invocation, so a process works on both, one operation at a time,
// and a duplicate of its requests applies to both.
func randomHistory2(rng *rand.Rand, maxOps int) *history.History {
	return randomOn(rng, maxOps, "job", "job2")
}

// randomOn is randomHistory on the resources named.
func randomOn(rng *rand.Rand, maxOps int, resources ...string) *history.History {
	h := &history.History{HasHeader: true, Header: history.Header{Format: history.Format, Version: history.Version,
		Partial: rng.IntN(4) == 0}}
	var now int64
	procs := []string{"w1", "w2", "w3", history.Coordinator}
	open := map[string]history.Event{}
	var writes []history.Event
	emit := func(e history.Event) {
		e.Time, e.Index = now, int64(len(h.Events))
		h.Events = append(h.Events, e)
	}
	resource := func() string {
		if len(resources) == 1 { // no draw: one resource's histories are randomHistory's of old, seed for seed
			return resources[0]
		}
		return resources[rng.IntN(len(resources))]
	}
	tok := func() int64 { return 1 + rng.Int64N(3) }
	ids, pays := []string{"r", "s"}, []string{"a", "b"}
	n := 0
	for steps := 0; steps < 40 && (n < maxOps || len(open) > 0); steps++ {
		now += int64(rng.IntN(3)) / 2 * int64(1+rng.IntN(3))
		p := procs[rng.IntN(len(procs))]
		if inv, ok := open[p]; ok {
			if rng.IntN(8) == 0 && n >= maxOps {
				delete(open, p) // stays open
				continue
			}
			if rng.IntN(3) == 0 && n < maxOps {
				continue
			}
			delete(open, p)
			e := history.Event{Process: p, F: inv.F, Type: history.OK, Resource: inv.Resource}
			switch r := rng.IntN(10); {
			case r < 2:
				e.Type = history.Info
			case r < 4 && inv.F != history.Advance && inv.F != history.Read:
				e.Type = history.Fail
			}
			switch {
			case e.Type == history.Fail:
				errs := map[string][]string{history.Acquire: {history.Held}, history.Renew: {history.Expired, history.NotHolder},
					history.Release: {history.NotHolder}, history.Write: {history.Fenced, history.Conflict, history.Expired}}[inv.F]
				e.Value.Error = errs[rng.IntN(len(errs))]
			case e.Type == history.OK:
				switch inv.F {
				case history.Acquire, history.Advance:
					e.Value.Token = tok()
				case history.Write:
					e.Value.Outcome = []string{history.Written, history.Replayed}[rng.IntN(2)]
				case history.Read:
					if rng.IntN(2) == 0 {
						e.Value.Payload, e.Value.HasPayload = pays[rng.IntN(2)], true
					}
				}
			}
			if inv.F == history.Write && e.Type != history.Info && rng.IntN(4) == 0 {
				e.Value.Fence, e.Value.HasFence = tok()-1, true
			}
			emit(e)
			continue
		}
		if n >= maxOps {
			continue
		}
		switch rng.IntN(12) {
		case 0:
			emit(history.Event{Process: history.Nemesis, Type: history.Info, F: history.Duplicate, Value: history.Value{Target: procs[rng.IntN(3)]}})
			continue
		case 1:
			if len(writes) > 0 {
				w := writes[rng.IntN(len(writes))]
				a := history.Value{Writer: w.Process, Token: w.Value.Token, ResultID: w.Value.ResultID, Payload: w.Value.Payload, HasPayload: true}
				if rng.IntN(2) == 0 {
					a.Outcome = []string{history.Written, history.Replayed}[rng.IntN(2)]
				} else {
					a.Error = []string{history.Fenced, history.Conflict, history.Expired}[rng.IntN(3)]
				}
				if rng.IntN(3) == 0 {
					a.Fence, a.HasFence = tok()-1, true
				}
				emit(history.Event{Process: history.Sink, Type: history.Info, F: history.Apply, Resource: w.Resource, Value: a})
			}
			continue
		}
		n++
		e := history.Event{Process: p, Type: history.Invoke, Resource: resource()}
		owner := p
		if p == history.Coordinator {
			e.F = history.Advance
		} else {
			switch r := rng.IntN(10); {
			case r < 3:
				e.F = history.Acquire
				e.Value = history.Value{Owner: owner, Incarnation: "1", RequestID: []string{"a", "b"}[rng.IntN(2)], TTL: int64(1 + rng.IntN(5))}
			case r < 5:
				e.F = history.Renew
				e.Value = history.Value{Owner: owner, Incarnation: "1", Token: tok(), TTL: int64(rng.IntN(5))}
			case r < 6:
				e.F = history.Release
				e.Value = history.Value{Owner: owner, Incarnation: "1", Token: tok()}
			case r < 9:
				e.F = history.Write
				e.Value = history.Value{Token: tok(), ResultID: ids[rng.IntN(2)], Payload: pays[rng.IntN(2)], HasPayload: true}
				if rng.IntN(4) == 0 {
					e.Value.Task = "T"
				}
			default:
				e.F = history.Read
				e.Value = history.Value{ResultID: ids[rng.IntN(2)]}
			}
		}
		emit(e)
		open[p] = e
		if e.F == history.Write {
			writes = append(writes, h.Events[len(h.Events)-1])
		}
	}
	return h
}

type diffStats struct {
	histories, invalid        int
	reported, certain         map[string]int
	falseAlarm, miss, unknown map[string]int
	missShown                 map[string]int
}

func TestDifferential(t *testing.T) {
	gens := []struct {
		name string
		gen  func(*rand.Rand, int) *history.History
	}{{"simulator", simHistory}, {"random", randomHistory}, {"simulator, two resources", simHistory2},
		{"random, two resources", randomHistory2}, {"simulator, partial windows", windowHistory}}
	only, err := regexp.Compile(*diffGens)
	if err != nil {
		t.Fatalf("-diff.gens: %v", err)
	}
	start := time.Now()
	for _, g := range gens {
		if !only.MatchString(g.name) {
			continue
		}
		st := diffStats{reported: map[string]int{}, certain: map[string]int{}, falseAlarm: map[string]int{},
			miss: map[string]int{}, unknown: map[string]int{}, missShown: map[string]int{}}
		for k := range *diffN {
			seed := *diffSeed + uint64(k)
			rng := rand.New(rand.NewPCG(seed, 0xd1ff))
			h0 := g.gen(rng, 3+rng.IntN(5))
			var buf bytes.Buffer
			if err := history.Encode(&buf, h0); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			h, err := history.ReadAll("gen", strings.NewReader(text))
			if err != nil {
				st.invalid++
				if st.invalid <= 3 {
					t.Logf("%s seed %d: invalid history (%v):\n%s", g.name, seed, err, text)
				}
				continue
			}
			st.histories++
			rep := Check(h, Options{})
			brute := bruteByResource(h, *diffBudget)
			for _, v := range rep.Violations {
				if _, ok := verdictOn(brute, v.Resource); !ok {
					t.Errorf("%s seed %d: %s reported on %q, a resource of no operation:\n%s", g.name, seed, v.Invariant, v.Resource, text)
				}
			}
			for _, b := range brute {
				got := map[string]bool{}
				for _, v := range rep.Violations {
					if v.Resource == b.resource {
						got[v.Invariant] = true
					}
				}
				st.judge(t, g.name, seed, text, rep, b, got)
			}
		}
		t.Logf("%s: %d histories (%d invalid), in %v", g.name, st.histories, st.invalid, time.Since(start).Round(time.Millisecond))
		t.Logf("  %-22s %8s %8s %8s %8s %8s   (each resource of a history counted apart)", "invariant", "reported", "certain", "false+", "missed", "unknown")
		for _, inv := range Invariants {
			id := inv.ID
			t.Logf("  %-22s %8d %8d %8d %8d %8d", id, st.reported[id], st.certain[id], st.falseAlarm[id], st.miss[id], st.unknown[id])
		}
	}
}

// judge compares what Check reported on one resource (got) with the brute
// force's verdict there, counting and showing false alarms and misses.
func (st *diffStats) judge(t *testing.T, gen string, seed uint64, text string, rep Report, b bruteVerdict, got map[string]bool) {
	t.Helper()
	for _, id := range b.unknown {
		st.unknown[id]++
	}
	for _, inv := range Invariants {
		id := inv.ID
		if got[id] {
			st.reported[id]++
		}
		c, decided := b.certain[id]
		if !decided {
			continue
		}
		if c {
			st.certain[id]++
		}
		switch {
		case got[id] && !c:
			st.falseAlarm[id]++
			if st.falseAlarm[id] <= 3 {
				t.Errorf("%s seed %d: false alarm %s on %s:\n%s%s", gen, seed, id, b.resource, text, describeReport(rep, id))
			}
		case c && !got[id]:
			st.miss[id]++
			if st.missShown[id] < *diffShow && testing.Verbose() {
				st.missShown[id]++
				t.Logf("%s seed %d: miss %s on %s:\n%s", gen, seed, id, b.resource, text)
			}
		}
	}
}

func describeReport(rep Report, id string) string {
	var b strings.Builder
	var vs []string
	for _, v := range rep.Violations {
		if v.Invariant == id {
			vs = append(vs, fmt.Sprintf("  %v %s", v.Events, v.Message))
		}
	}
	sort.Strings(vs)
	for _, v := range vs {
		b.WriteString(v + "\n")
	}
	return b.String()
}
