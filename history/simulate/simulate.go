// Package simulate makes large histories of the reference protocol without
// the model: a direct simulation, fast enough for millions of events, for
// the benchmarks of reading and checking histories (BENCHMARKS.md) and for
// tests that need a big history whose verdict is known.
package simulate

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/fencecheck/fencecheck/history"
)

// Reference simulates the reference protocol deterministically from seed:
// workers worker processes acquire, write, renew, release and read on
// resources resources, with the coordinator advancing each resource's fence
// before every grant (and, before one grant in 50, repeating the raise, which
// fails as fenced: docs/real-systems.md); about 2% of completions are info
// (taking effect or not, at random), a worker retries an info acquire with the same requestId (the
// coordinator replays the recorded grant), and workers sometimes forget their
// lease and let it expire, or crash and restart with a new incarnation. Every
// effect happens at the completion line, so the history is linearizable and
// the protocol's guarantees hold; only absolute-validity (the documented
// non-guarantee) may be violated. It stops at the first step that reaches
// events events; operations still open then stay open.
func Reference(seed uint64, events, resources, workers int) *history.History {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	h := &history.History{HasHeader: true, Header: history.Header{Format: history.Format, Version: history.Version,
		Seed: seed, TimeUnit: "tick", Note: "simulate.Reference: the reference protocol, simulated"}}
	h.Events = make([]history.Event, 0, events+8)

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
		v      history.Value
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
	emit := func(process string, typ history.Type, f, resource string, v history.Value) {
		h.Events = append(h.Events, history.Event{Time: now, Process: process, Type: typ, F: f, Resource: resource,
			Value: v, Index: int64(len(h.Events))})
	}
	advance := func(r *resState) int64 {
		emit(history.Coordinator, history.Invoke, history.Advance, r.name, history.Value{})
		r.fence++
		emit(history.Coordinator, history.OK, history.Advance, r.name, history.Value{Token: r.fence})
		if rng.IntN(50) == 0 { // the raise repeated finds the fence at its token: refused, no effect
			emit(history.Coordinator, history.Invoke, history.Advance, r.name, history.Value{})
			emit(history.Coordinator, history.Fail, history.Advance, r.name, history.Value{Error: history.Fenced})
		}
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
				emit(w.name, history.Info, history.Crash, "", history.Value{})
				emit(w.name, history.Info, history.Restart, "", history.Value{})
				w.inc++
				w.res = -1
				w.retry = ""
				continue
			case w.retry != "" && rng.IntN(2) == 0:
				w.op, w.target = history.Acquire, w.retryR
				w.v = history.Value{Owner: w.name, Incarnation: inc, RequestID: w.retry, TTL: ttl}
			case w.res < 0:
				w.reqs++
				w.op, w.target = history.Acquire, rng.IntN(resources)
				w.v = history.Value{Owner: w.name, Incarnation: inc, RequestID: fmt.Sprintf("%s.%d.%d", w.name, w.inc, w.reqs), TTL: ttl}
			default:
				w.target = w.res
				id := fmt.Sprintf("%s/task-%d", rs[w.res].name, rng.IntN(8))
				switch p := rng.IntN(100); {
				case p < 45:
					w.op, w.v = history.Write, history.Value{Token: w.token, ResultID: id, Payload: "v:" + id, HasPayload: true}
				case p < 70:
					w.op, w.v = history.Renew, history.Value{Owner: w.name, Incarnation: inc, Token: w.token, TTL: ttl}
				case p < 80:
					w.op, w.v = history.Release, history.Value{Owner: w.name, Incarnation: inc, Token: w.token}
				case p < 95:
					w.op, w.v = history.Read, history.Value{ResultID: id}
				default: // forget the lease: it will expire
					w.res = -1
					continue
				}
			}
			w.retry = ""
			w.open = true
			emit(w.name, history.Invoke, w.op, rs[w.target].name, w.v)
			continue
		}
		// Complete the open operation; info completions take effect or not.
		w.open = false
		r := &rs[w.target]
		info := rng.IntN(50) == 0
		effect := !info || rng.IntN(2) == 0
		typ := history.OK
		if info {
			typ = history.Info
		}
		done := func(v history.Value) {
			if info {
				v = history.Value{}
			}
			emit(w.name, typ, w.op, r.name, v)
		}
		fail := func(e string) { emit(w.name, history.Fail, w.op, r.name, history.Value{Error: e}) }
		valid := r.holder >= 0 && now < r.deadline
		mine := r.holder == wi && r.inc == w.inc && r.token == w.v.Token
		switch w.op {
		case history.Acquire:
			if t, ok := r.grants[w.v.RequestID]; ok { // a retry: replay the grant
				if !effect {
					done(history.Value{})
				} else if done(history.Value{Token: t, TTL: ttl}); !info {
					w.res, w.token = w.target, t
				}
				continue
			}
			if valid && !info {
				fail(history.Held)
				continue
			}
			if valid || !effect {
				done(history.Value{})
			} else {
				t := advance(r)
				r.holder, r.inc, r.token, r.deadline = wi, w.inc, t, now+ttl
				r.grants[w.v.RequestID] = t
				if done(history.Value{Token: t, TTL: ttl}); !info {
					w.res, w.token = w.target, t
				}
			}
			if info {
				w.retry, w.retryR = w.v.RequestID, w.target
			}
		case history.Renew:
			switch {
			case !mine && !info:
				fail(history.NotHolder)
				w.res = -1
			case !valid && !info:
				fail(history.Expired)
				w.res = -1
			default:
				if effect && mine && valid {
					r.deadline = now + ttl
				}
				done(history.Value{})
			}
		case history.Release:
			switch {
			case !mine && !info:
				fail(history.NotHolder)
			default:
				if effect && mine {
					r.holder = -1
				}
				done(history.Value{})
			}
			w.res = -1
		case history.Write:
			old, present := r.results[w.v.ResultID]
			switch {
			case w.v.Token != r.fence && !info:
				fail(history.Fenced)
				w.res = -1
			case present && old != w.v.Payload && !info:
				fail(history.Conflict)
			case !effect || w.v.Token != r.fence || present && old != w.v.Payload:
				done(history.Value{})
			case present:
				done(history.Value{Outcome: history.Replayed})
			default:
				r.results[w.v.ResultID] = w.v.Payload
				done(history.Value{Outcome: history.Written})
			}
		case history.Read:
			p, present := r.results[w.v.ResultID]
			done(history.Value{Payload: p, HasPayload: present})
		}
	}
	return h
}
