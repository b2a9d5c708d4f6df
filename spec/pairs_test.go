package spec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

// overlappingGrants is n grants of resource "job" in a row, each to its own
// worker, each after an advance to its token, all for a ttl far longer than
// the history: every two of them are certainly valid together. Each
// worker's request has its own id (one id for all would be an
// acquire-idempotent violation per later grant).
func overlappingGrants(t testing.TB, n int) *history.History {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"time":%d,"process":"w%d","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w%d","incarnation":1,"requestId":"q%d","ttl":1000000000}}
{"time":%d,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":%d,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":%d}}
{"time":%d,"process":"w%d","type":"ok","f":"acquire","resource":"job","value":{"token":%d}}
`, i, i, i, i, i, i, i+1, i, i, i+1)
	}
	h, err := history.ReadAll("overlapping", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOverlappingGrantsCounted: 3,000 grants that all overlap are 4,498,500
// pairs of tokens, each an exclusive-lease violation; the report shows the
// first five and counts the others, which are neither formatted nor kept
// (they were: 39 s and 1.9 GB).
func TestOverlappingGrantsCounted(t *testing.T) {
	const n = 3000
	rep := Check(overlappingGrants(t, n), Options{})
	if want := n*(n-1)/2 - MaxPerResource; rep.Omitted != want {
		t.Errorf("omitted %d, want %d", rep.Omitted, want)
	}
	want := []string{
		"[0 3 4 7] leases token=1 (w0/1) and token=2 (w1/1) were both certainly valid during [1, 1000000000)",
		"[0 3 8 11] leases token=1 (w0/1) and token=3 (w2/1) were both certainly valid when the later of the two grants took effect",
		"[0 3 12 15] leases token=1 (w0/1) and token=4 (w3/1) were both certainly valid when the later of the two grants took effect",
		"[0 3 16 19] leases token=1 (w0/1) and token=5 (w4/1) were both certainly valid when the later of the two grants took effect",
		"[0 3 20 23] leases token=1 (w0/1) and token=6 (w5/1) were both certainly valid when the later of the two grants took effect",
	}
	var got []string
	for _, v := range rep.Violations {
		got = append(got, fmt.Sprintf("%v %s", v.Events, v.Message))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("violations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// grantsHistory is a random history of many acquires on one resource: long
// and short ttls, requests retried (replays, info attempts: long windows),
// some tokens granted again, renews and releases, partial headers.
func grantsHistory(rng *rand.Rand, n int) *history.History {
	h := &history.History{HasHeader: true, Header: history.Header{Format: history.Format, Version: history.Version,
		Partial: rng.IntN(6) == 0}}
	var now int64
	emit := func(p string, typ history.Type, f string, v history.Value) {
		h.Events = append(h.Events, history.Event{Time: now, Process: p, Type: typ, F: f, Resource: "job", Value: v,
			Index: int64(len(h.Events))})
	}
	again, long := rng.IntN(3) == 0, rng.IntN(2) == 0
	procs := 4 + rng.IntN(30)
	var open []string // processes with an acquire open
	var tok int64
	for range n {
		now += int64(rng.IntN(3))
		p := fmt.Sprintf("w%d", rng.IntN(procs))
		busy := false
		for _, q := range open {
			busy = busy || q == p
		}
		switch r := rng.IntN(10); {
		case r < 5 && !busy:
			ttl := int64(1 + rng.IntN(20))
			if long && rng.IntN(2) == 0 {
				ttl = 1_000_000_000
			}
			emit(p, history.Invoke, history.Acquire, history.Value{Owner: p, Incarnation: "1",
				RequestID: fmt.Sprintf("r%d", rng.IntN(n/2+1)), TTL: ttl})
			open = append(open, p)
		case r < 8 && len(open) > 0:
			k := rng.IntN(len(open))
			p = open[k]
			open = append(open[:k], open[k+1:]...)
			if rng.IntN(5) == 0 {
				emit(p, history.Info, history.Acquire, history.Value{})
				continue
			}
			tok++
			t := tok
			if again && rng.IntN(3) == 0 {
				t = 1 + rng.Int64N(tok)
			}
			emit(p, history.OK, history.Acquire, history.Value{Token: t})
		case !busy && tok > 0:
			v := history.Value{Owner: p, Incarnation: "1", Token: 1 + rng.Int64N(tok)}
			f := history.Release
			if rng.IntN(2) == 0 {
				f, v.TTL = history.Renew, int64(1+rng.IntN(20))
			}
			emit(p, history.Invoke, f, v)
			emit(p, history.OK, f, history.Value{})
		}
	}
	return h
}

// TestGrantPairsCountedAsEnumerated: the pairs of grants that exclusive-lease
// counts without enumerating them (when no token is granted twice) give the
// report that enumerating them gives.
func TestGrantPairsCountedAsEnumerated(t *testing.T) {
	defer func() { pairsEnumerate = false }()
	many := 0 // histories with more exclusive-lease violations than the report shows
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 0x9a15))
		var buf bytes.Buffer
		if err := history.Encode(&buf, grantsHistory(rng, 20+rng.IntN(300))); err != nil {
			t.Fatal(err)
		}
		h, err := history.ReadAll("grants", strings.NewReader(buf.String()))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, buf.String())
		}
		pairsEnumerate = false
		counted := Check(h, Options{})
		pairsEnumerate = true
		enumerated := Check(h, Options{})
		if !reflect.DeepEqual(counted, enumerated) {
			t.Fatalf("seed %d: counted\n%+v\nenumerated\n%+v\n%s", seed, counted, enumerated, buf.String())
		}
		if counted.Omitted > 0 {
			many++
		}
	}
	if many < 10 {
		t.Errorf("only %d histories with violations omitted", many)
	}
}
