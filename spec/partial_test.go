package spec

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
)

// Partial histories: a window of a longer history, from some event on, with
// "partial": true. Every request in it may have been attempted before its
// first event (newResCtx): a window must not be judged as if its first
// attempts were the first.

var (
	windowsN       = flag.Int("windows.n", 1000, "TestPartialWindowsOfCorrectHistories: simulated histories")
	windowsAllCuts = flag.Bool("windows.allcuts", false, "TestPartialWindowsOfCorrectHistories: cut at every event, also where an operation other than an acquire is under way (what a partial window does not model: see the test)")
)

// The probe's story: w2's acquire b1 was granted token 1 (at 0, for 10) and
// its reply lost; w1 is granted token 2 at 20; w2 retries b1 at 22 and the
// coordinator, deduplicating, replays token 1. The window from 20 on saw
// only the retry, and was judged as if b1 had been granted at 22:
// exclusive-lease, token-monotonic (and renew-validity with w1's renew at
// 24) were reported on a correct history.
const replayFull = `{"format":"fencecheck-history","version":1}
{"time":0,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":1,"process":"w2","type":"info","f":"acquire","resource":"job","value":{}}
{"time":5,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":1}}
{"time":12,"process":"w3","type":"fail","f":"acquire","resource":"job","value":{"error":"held"}}
`

const replayWindow = `{"time":20,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":20,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":20,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":20,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":22,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":22,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
`

const replayRenew = `{"time":24,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":2,"ttl":10}}
{"time":24,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`

const partialHeader = `{"format":"fencecheck-history","version":1,"partial":true}` + "\n"

func TestPartialWindowReplay(t *testing.T) {
	expect(t, replayFull+replayWindow)
	expect(t, replayFull+replayWindow+replayRenew)
	expect(t, partialHeader+replayWindow)
	expect(t, partialHeader+replayWindow+replayRenew)
	// The same window as a complete history: b1 was first attempted at 22,
	// after token 2 was granted; both were valid during [22, 30).
	expect(t, replayWindow, ExclusiveLease, TokenMonotonic)
	// A renew of a token never granted in a partial history: w1 may have
	// been granted token 3 before the first event, and after the grant of
	// token 1 (which may date from before it too).
	expect(t, partialHeader+`{"time":20,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":20,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":22,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":3,"ttl":10}}
{"time":22,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`)
	// Tokens 3 and 4, granted before the first event, both renewed: both
	// valid during [22, 30). Not renew-validity: a request under way at
	// the first event (its completion left out of the window) may have
	// granted token 4 between the two renews (TestPartialWindowHiddenGrant).
	renews := `{"time":20,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":3,"ttl":10}}
{"time":20,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
{"time":22,"process":"w9","type":"invoke","f":"renew","resource":"job","value":{"owner":"w9","incarnation":1,"token":4,"ttl":10}}
{"time":22,"process":"w9","type":"ok","f":"renew","resource":"job","value":{}}
`
	expect(t, partialHeader+renews, ExclusiveLease)
	// A request that only failed in a partial history may have been
	// attempted before the first event too, and that attempt (its outcome
	// unknown) may take effect at any instant: as a wild acquire in the
	// history, it may have granted token 3 or 4 again, for a short ttl, so
	// that neither lease certainly outlived it.
	expect(t, partialHeader+`{"time":19,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":19,"process":"w2","type":"fail","f":"acquire","resource":"job","value":{"error":"held"}}
`+renews)
}

// windowOf returns the partial history of h's events from position k on:
// what a recorder that started at event k would have written. A completion
// whose invoke comes before k is left out (it completes nothing in the
// window), and with it its operation; faults and apply events stay.
func windowOf(h *history.History, k int) *history.History {
	drop := map[int]bool{}
	for _, o := range h.Ops() {
		if o.Invoke < k && o.Complete >= k {
			drop[o.Complete] = true
		}
	}
	w := &history.History{HasHeader: true, Header: h.Header}
	w.Header.Partial = true
	for i := k; i < len(h.Events); i++ {
		if !drop[i] {
			e := h.Events[i]
			e.Index = int64(len(w.Events))
			w.Events = append(w.Events, e)
		}
	}
	return w
}

// reread encodes h and reads it back: the history as explore check would
// read it, or an error when it is not well formed.
func reread(h *history.History) (*history.History, string, error) {
	var buf bytes.Buffer
	if err := history.Encode(&buf, h); err != nil {
		return nil, "", err
	}
	r, err := history.ReadAll("window", strings.NewReader(buf.String()))
	return r, buf.String(), err
}

// windowHistory is a window of a simulated history (simHistory, with one
// resource and twice the operations), from a random event on: a partial
// history in which requests may have been attempted, and granted, before
// its first event, and operations be under way at it.
func windowHistory(rng *rand.Rand, maxOps int) *history.History {
	h := simOn(rng, 2*maxOps, "job")
	if len(h.Events) < 2 {
		return h
	}
	k := 1 + rng.IntN(len(h.Events)-1)
	w := windowOf(h, k)
	for ; len(w.Events) == 0 && k > 1; w = windowOf(h, k) { // only completions of operations before it: cut earlier
		k--
	}
	return w
}

// TestPartialWindowsOfCorrectHistories cuts histories of the simulator
// without injected bugs (complete ones) at every event where nothing but
// acquires is under way (sim.quiet), and checks each window as a partial
// history: whatever Check reports on the window, the brute force must find
// certain on the whole history (on a correct protocol, only the invariants
// its workers or sink break: absolute-validity, idempotent-result across
// result ids of one task, ...). The windows begin after lost grants, in
// the middle of retries, after leases, renews and releases: a window must
// not take a request's first attempt in it for its first.
//
// A window cut where a write, renew, release or advance is under way (its
// effect may come inside the window, which shows no operation for it) can
// be judged wrong: nothing in a partial history says what was under way at
// its first event. -windows.allcuts counts those too (not run by default).
func TestPartialWindowsOfCorrectHistories(t *testing.T) {
	start := time.Now()
	var histories, windows, retried, reported, bruteRuns, unknown int
	for seed := range uint64(*windowsN) {
		rng := rand.New(rand.NewPCG(seed, 0x9a27))
		s := simRun(rng, 6+rng.IntN(9), "job")
		if s.bugs != 0 || s.h.Header.Partial {
			continue
		}
		histories++
		h := s.h
		var brute *bruteVerdict
		for k := 1; k < len(h.Events); k++ {
			if !s.quiet[k] && !*windowsAllCuts {
				continue
			}
			win := windowOf(h, k)
			if len(win.Events) == 0 {
				continue
			}
			w, text, err := reread(win)
			if err != nil {
				t.Fatalf("seed %d, window from %d: %v\n%s", seed, k, err, text)
			}
			windows++
			if attemptedBefore(h, k) {
				retried++
			}
			rep := Check(w, Options{})
			if len(rep.Violations) > 0 {
				reported++
			}
			for _, v := range rep.Violations {
				if brute == nil {
					bruteRuns++
					vs := bruteByResource(h, *diffBudget)
					brute = &vs[0]
				}
				c, decided := brute.certain[v.Invariant]
				switch {
				case !decided:
					unknown++
				case !c:
					var whole bytes.Buffer
					history.Encode(&whole, h)
					t.Errorf("seed %d: false alarm on the window from event %d: %s %v %s\nwhole history:\n%swindow:\n%s",
						seed, k, v.Invariant, v.Events, v.Message, whole.String(), text)
				}
			}
		}
	}
	t.Logf("%d correct histories, %d windows (%d with a request attempted before the window and again in it), %d with a violation reported, brute force on %d whole histories (%d verdicts unknown), in %v",
		histories, windows, retried, reported, bruteRuns, unknown, time.Since(start).Round(time.Millisecond))
	if retried == 0 {
		t.Error("no window has a request attempted before it")
	}
}

// attemptedBefore reports whether some acquire request of h is attempted
// both before event k and at or after it.
func attemptedBefore(h *history.History, k int) bool {
	var before, after []reqKey
	for _, o := range h.Ops() {
		e := h.Events[o.Invoke]
		if e.F != history.Acquire {
			continue
		}
		r := reqKey{e.Value.Owner, e.Value.Incarnation, e.Value.RequestID}
		if o.Invoke < k {
			before = append(before, r)
		} else if o.Invoke >= k && slices.Contains(before, r) {
			after = append(after, r)
		}
	}
	return len(after) > 0
}

// hiddenGrant is a correct history: w3 holds token 1 and renews it at 6;
// w2's acquire, invoked at 3, is granted token 2 at 12 and renewed at 14.
// Its window from the renew at 6 on leaves the acquire out (its invoke is
// before the cut), so the grant of token 2 shows in no line of it.
const hiddenGrantBefore = `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"a1","ttl":8}}
{"time":1,"process":"w3","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":3,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
`

const hiddenGrantWindow = `{"time":6,"process":"w3","type":"invoke","f":"renew","resource":"job","value":{"owner":"w3","incarnation":1,"token":1,"ttl":3}}
{"time":6,"process":"w3","type":"ok","f":"renew","resource":"job","value":{}}
{"time":12,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":12,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
`

const hiddenGrantAfter = `{"time":14,"process":"w2","type":"invoke","f":"renew","resource":"job","value":{"owner":"w2","incarnation":1,"token":2,"ttl":10}}
{"time":14,"process":"w2","type":"ok","f":"renew","resource":"job","value":{}}
`

// TestPartialWindowHiddenGrant: renew-validity's rule 5 (two leases both
// renewed with no grant between) does not fire on a lease whose grant the
// window does not show: a request under way at the cut may have granted it
// anywhere in the window. With the grant in the window before the first
// renew, the rule still fires.
func TestPartialWindowHiddenGrant(t *testing.T) {
	const grant = `{"time":12,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}` + "\n"
	expect(t, "{\"format\":\"fencecheck-history\",\"version\":1}\n"+hiddenGrantBefore+hiddenGrantWindow+grant+hiddenGrantAfter)
	expect(t, partialHeader+hiddenGrantWindow+hiddenGrantAfter)
	// The grant of token 2 shown in the window, before w3's renew: w3's
	// renew at 6 and w2's at 14 cannot both be of the coordinator's lease.
	shown := `{"time":5,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":5,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":5,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":5,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
`
	expect(t, partialHeader+shown+hiddenGrantWindow[:strings.Index(hiddenGrantWindow, `{"time":12`)]+hiddenGrantAfter, RenewValidity)
}
