package spec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

// TestDeadlinesPastInt64 checks histories whose deadlines (a time plus a
// ttl, each within int64 as the format allows) lie past the largest int64.
// Such a deadline is later than every event, so Check's verdicts must be
// those of the same history with every event moved as far down the time
// line and with ttls that reach past the last event without overflowing:
//   - moved in time: every time t becomes t + K, K putting the last
//     event at math.MaxInt64-1, so a deadline past the last event
//     overflows;
//   - huge ttls: every ttl becomes math.MaxInt64-1000+ttl, against
//     2^40+ttl (the order of the ttls kept, and both past every event).
//
// Before, time + ttl wrapped around to a negative deadline: a clean
// history with ttl 2^63-1 violated absolute-validity, and a takeover
// inside such a lease passed exclusive-lease.
func TestDeadlinesPastInt64(t *testing.T) {
	moved := func(h *history.History) *history.History {
		last := h.Events[len(h.Events)-1].Time
		k := int64(math.MaxInt64-1) - last
		return remap(h, func(t int64) int64 { return t + k }, func(ttl int64) int64 { return ttl })
	}
	ttls := func(base int64) func(*history.History) *history.History {
		return func(h *history.History) *history.History {
			return remap(h, func(t int64) int64 { return t }, func(ttl int64) int64 { return base + ttl })
		}
	}
	checked := 0
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 0x0f10))
		var h *history.History
		if seed%2 == 0 {
			h = simHistory2(rng, 3+rng.IntN(5))
		} else {
			h = randomHistory2(rng, 3+rng.IntN(5))
		}
		if len(h.Events) == 0 || !readable(h) {
			continue
		}
		checked++
		for _, c := range []struct {
			name      string
			want, got *history.History
		}{
			{"moved to the end of int64", h, moved(h)},
			{"ttls past int64", ttls(1 << 40)(h), ttls(math.MaxInt64 - 1000)(h)},
		} {
			if w, g := verdicts(c.want), verdicts(c.got); !slices.Equal(w, g) {
				t.Fatalf("seed %d, %s: violated %v, as the history %v", seed, c.name, g, w)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d histories readable", checked)
	}
	// The tester's two cases.
	clean := `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":1}}
{"time":1,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"w1-1","ttl":9223372036854775807}}
{"time":2,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"w1@1"}}
{"time":4,"process":"w1","type":"ok","f":"write","resource":"job-1","value":{"outcome":"written"}}
`
	expect(t, clean)
	takeover := `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":1}}
{"time":1,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"w1-1","ttl":9223372036854775807}}
{"time":2,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1}}
{"time":10,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":10,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":2}}
{"time":13,"process":"w2","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w2","incarnation":1,"requestId":"w2-1","ttl":5}}
{"time":14,"process":"w2","type":"ok","f":"acquire","resource":"job-1","value":{"token":2}}
`
	expect(t, takeover, ExclusiveLease)
	// An outside tester's: a lease that reaches past int64, renewed and
	// written under at the largest time itself. Its deadline saturates at
	// math.MaxInt64 (see after), which once read as a deadline that time
	// reached: renew-validity and absolute-validity, false alarms.
	last := `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"r","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"r","value":{"token":1}}
{"time":100,"process":"w1","type":"invoke","f":"acquire","resource":"r","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":9223372036854775757}}
{"time":101,"process":"w1","type":"ok","f":"acquire","resource":"r","value":{"token":1}}
{"time":9223372036854775807,"process":"w1","type":"invoke","f":"write","resource":"r","value":{"token":1,"resultId":"t","payload":"x"}}
{"time":9223372036854775807,"process":"w1","type":"ok","f":"write","resource":"r","value":{"outcome":"written"}}
{"time":9223372036854775807,"process":"w1","type":"invoke","f":"renew","resource":"r","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":9223372036854775807,"process":"w1","type":"ok","f":"renew","resource":"r","value":{}}
`
	expect(t, last)
}

// remap is a copy of h with every event's time and every positive ttl
// mapped.
func remap(h *history.History, time, ttl func(int64) int64) *history.History {
	c := *h
	c.Events = slices.Clone(h.Events)
	for i := range c.Events {
		e := &c.Events[i]
		e.Time = time(e.Time)
		if e.Value.TTL > 0 {
			e.Value.TTL = ttl(e.Value.TTL)
		}
	}
	return &c
}

// readable reports whether h reads back as a history (the generators make
// some that do not).
func readable(h *history.History) bool {
	var b []byte
	for _, e := range h.Events {
		b = history.AppendEvent(b, e)
	}
	_, err := history.ReadAll("gen", bytes.NewReader(b))
	return err == nil
}

// verdicts is the sorted "invariant on resource" list of what Check finds.
func verdicts(h *history.History) []string {
	var out []string
	for _, v := range Check(h, Options{}).Violations {
		out = append(out, v.Invariant+" on "+v.Resource)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
