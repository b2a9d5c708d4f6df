package history

// A generator of large histories for the reading benchmarks and for the
// end-to-end measurement of explore check (BENCHMARKS.md). It is a copy of
// spec's test generator (spec/gen_test.go, which history cannot import: it
// is a test file of another package), so that the file read here has the
// shape of the history spec's BenchmarkCheck1M checks.

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

var genFile = flag.String("history.gen", "", "TestGenerate writes a generated history of -history.gen.events events to this file")
var genEvents = flag.Int("history.gen.events", 1_000_000, "events of the history TestGenerate writes (over 1,000 resources and 50 processes)")

// TestGenerate writes the generated history of the end-to-end benchmark:
//
//	go test ./history -run TestGenerate -history.gen /tmp/h1m.jsonl
//	/usr/bin/time -v explore check /tmp/h1m.jsonl
func TestGenerate(t *testing.T) {
	if *genFile == "" {
		t.Skip("no -history.gen FILE")
	}
	h := genHistory(1, *genEvents, 1000, 50)
	f, err := os.Create(*genFile)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := Encode(w, h); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// genHistory simulates the reference protocol deterministically from seed:
// workers worker processes acquire, write, renew, release and read on
// resources resources, with the coordinator advancing each resource's fence
// before every grant; about 2% of completions are info (taking effect or not,
// at random), a worker retries an info acquire with the same requestId (the
// coordinator replays the recorded grant), and workers sometimes forget their
// lease and let it expire, or crash and restart with a new incarnation. Every
// effect happens at the completion line, so the history is linearizable and
// the protocol's guarantees hold; only absolute-validity (the documented
// non-guarantee) may be violated. It stops at the first step that reaches
// events events; operations still open then stay open.
func genHistory(seed uint64, events, resources, workers int) *History {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	h := &History{HasHeader: true, Header: Header{Format: Format, Version: Version,
		Seed: seed, TimeUnit: "tick", Note: "spec.genHistory: the reference protocol, simulated"}}
	h.Events = make([]Event, 0, events+8)

	type resState struct {
		name     string
		fence    int64
		holder   int // worker index, -1 none
		inc      int
		token    int64
		deadline int64
		results  map[string]string
		grants   map[string]int64 // requestId -> token (the coordinator's dedup record)
	}
	type workerState struct {
		name   string
		inc    int
		res    int // resource it believes it holds, -1 none
		token  int64
		open   bool
		op     string
		target int
		v      Value
		reqs   int
		retry  string // requestId to retry after an info acquire
		retryR int
	}
	rs := make([]resState, resources)
	for i := range rs {
		rs[i] = resState{name: fmt.Sprintf("job-%04d", i), holder: -1, results: map[string]string{}, grants: map[string]int64{}}
	}
	ws := make([]workerState, workers)
	for i := range ws {
		ws[i] = workerState{name: fmt.Sprintf("w%02d", i), inc: 1, res: -1}
	}
	var now int64
	emit := func(process string, typ Type, f, resource string, v Value) {
		h.Events = append(h.Events, Event{Time: now, Process: process, Type: typ, F: f, Resource: resource,
			Value: v, Index: int64(len(h.Events))})
	}
	advance := func(r *resState) int64 {
		emit(Coordinator, Invoke, Advance, r.name, Value{})
		r.fence++
		emit(Coordinator, OK, Advance, r.name, Value{Token: r.fence})
		return r.fence
	}
	const ttl = 300
	for len(h.Events) < events {
		now += int64(rng.IntN(3))
		wi := rng.IntN(workers)
		w := &ws[wi]
		inc := strconv.Itoa(w.inc)
		if !w.open {
			switch {
			case rng.IntN(500) == 0:
				emit(w.name, Info, Crash, "", Value{})
				emit(w.name, Info, Restart, "", Value{})
				w.inc++
				w.res = -1
				w.retry = ""
				continue
			case w.retry != "" && rng.IntN(2) == 0:
				w.op, w.target = Acquire, w.retryR
				w.v = Value{Owner: w.name, Incarnation: inc, RequestID: w.retry, TTL: ttl}
			case w.res < 0:
				w.reqs++
				w.op, w.target = Acquire, rng.IntN(resources)
				w.v = Value{Owner: w.name, Incarnation: inc, RequestID: fmt.Sprintf("%s.%d.%d", w.name, w.inc, w.reqs), TTL: ttl}
			default:
				w.target = w.res
				id := fmt.Sprintf("%s/task-%d", rs[w.res].name, rng.IntN(8))
				switch p := rng.IntN(100); {
				case p < 45:
					w.op, w.v = Write, Value{Token: w.token, ResultID: id, Payload: "v:" + id, HasPayload: true}
				case p < 70:
					w.op, w.v = Renew, Value{Owner: w.name, Incarnation: inc, Token: w.token, TTL: ttl}
				case p < 80:
					w.op, w.v = Release, Value{Owner: w.name, Incarnation: inc, Token: w.token}
				case p < 95:
					w.op, w.v = Read, Value{ResultID: id}
				default: // forget the lease: it will expire
					w.res = -1
					continue
				}
			}
			w.retry = ""
			w.open = true
			emit(w.name, Invoke, w.op, rs[w.target].name, w.v)
			continue
		}
		// Complete the open operation; info completions take effect or not.
		w.open = false
		r := &rs[w.target]
		info := rng.IntN(50) == 0
		effect := !info || rng.IntN(2) == 0
		typ := OK
		if info {
			typ = Info
		}
		done := func(v Value) {
			if info {
				v = Value{}
			}
			emit(w.name, typ, w.op, r.name, v)
		}
		fail := func(e string) { emit(w.name, Fail, w.op, r.name, Value{Error: e}) }
		valid := r.holder >= 0 && now < r.deadline
		mine := r.holder == wi && r.inc == w.inc && r.token == w.v.Token
		switch w.op {
		case Acquire:
			if t, ok := r.grants[w.v.RequestID]; ok { // a retry: replay the grant
				if !effect {
					done(Value{})
				} else if done(Value{Token: t, TTL: ttl}); !info {
					w.res, w.token = w.target, t
				}
				continue
			}
			if valid && !info {
				fail(Held)
				continue
			}
			if valid || !effect {
				done(Value{})
			} else {
				t := advance(r)
				r.holder, r.inc, r.token, r.deadline = wi, w.inc, t, now+ttl
				r.grants[w.v.RequestID] = t
				if done(Value{Token: t, TTL: ttl}); !info {
					w.res, w.token = w.target, t
				}
			}
			if info {
				w.retry, w.retryR = w.v.RequestID, w.target
			}
		case Renew:
			switch {
			case !mine && !info:
				fail(NotHolder)
				w.res = -1
			case !valid && !info:
				fail(Expired)
				w.res = -1
			default:
				if effect && mine && valid {
					r.deadline = now + ttl
				}
				done(Value{})
			}
		case Release:
			switch {
			case !mine && !info:
				fail(NotHolder)
			default:
				if effect && mine {
					r.holder = -1
				}
				done(Value{})
			}
			w.res = -1
		case Write:
			old, present := r.results[w.v.ResultID]
			switch {
			case w.v.Token != r.fence && !info:
				fail(Fenced)
				w.res = -1
			case present && old != w.v.Payload && !info:
				fail(Conflict)
			case !effect || w.v.Token != r.fence || present && old != w.v.Payload:
				done(Value{})
			case present:
				done(Value{Outcome: Replayed})
			default:
				r.results[w.v.ResultID] = w.v.Payload
				done(Value{Outcome: Written})
			}
		case Read:
			p, present := r.results[w.v.ResultID]
			done(Value{Payload: p, HasPayload: present})
		}
	}
	return h
}
