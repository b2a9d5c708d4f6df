package spec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

// parse reads an inline JSONL history; tabs and blank lines are layout.
func parse(t *testing.T, jsonl string) *history.History {
	t.Helper()
	h, err := history.ReadAll("inline", strings.NewReader(jsonl))
	if err != nil {
		t.Fatalf("bad test history: %v", err)
	}
	return h
}

// ids returns the invariants a report names, in report order, once each.
func ids(rep Report) []string {
	var out []string
	for _, v := range rep.Violations {
		if !slices.Contains(out, v.Invariant) {
			out = append(out, v.Invariant)
		}
	}
	return out
}

// expect checks that the history violates exactly the given invariants.
func expect(t *testing.T, jsonl string, want ...string) Report {
	t.Helper()
	rep := Check(parse(t, jsonl), Options{})
	got := ids(rep)
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("violated %v, want %v; report:", got, want)
		for _, v := range rep.Violations {
			t.Errorf("  %s %s %v: %s", v.Invariant, v.Resource, v.Events, v.Message)
		}
	}
	if rep.OK != (len(want) == 0) {
		t.Errorf("OK = %v with violations %v", rep.OK, got)
	}
	return rep
}

// clean is the article's story, by the reference protocol: w1 holds token 1,
// writes, renews; its lease expires (deadline 13); the fence is advanced to 2
// before w2 is granted token 2; w1's stale write is fenced; w2 replays the
// result, reads it, releases.
const clean = `{"format":"fencecheck-history","version":1,"expect":[]}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1,"ttl":10}}
{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r1","payload":"a"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":3,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1,"ttl":10}}
{"time":3,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
{"time":14,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":14,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":14,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":14,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":15,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r1","payload":"a"}}
{"time":15,"process":"w1","type":"fail","f":"write","resource":"job","value":{"error":"fenced"}}
{"time":16,"process":"w2","type":"invoke","f":"write","resource":"job","value":{"token":2,"resultId":"r1","payload":"a"}}
{"time":16,"process":"w2","type":"ok","f":"write","resource":"job","value":{"outcome":"replayed"}}
{"time":17,"process":"w2","type":"invoke","f":"read","resource":"job","value":{"resultId":"r1"}}
{"time":17,"process":"w2","type":"ok","f":"read","resource":"job","value":{"payload":"a"}}
{"time":18,"process":"w2","type":"invoke","f":"release","resource":"job","value":{"owner":"w2","incarnation":1,"token":2}}
{"time":18,"process":"w2","type":"ok","f":"release","resource":"job","value":{}}
`

func TestCleanHistory(t *testing.T) {
	rep := expect(t, clean)
	if rep.Events != 20 || rep.Operations != 10 {
		t.Errorf("events=%d operations=%d, want 20 and 10", rep.Events, rep.Operations)
	}
	if rep.Violations == nil {
		t.Error("Violations is nil; want [] so that JSON shows a list")
	}
}

func TestEmptyHistory(t *testing.T) {
	rep := Check(&history.History{}, Options{})
	if !rep.OK || rep.Events != 0 || rep.Operations != 0 || len(rep.Violations) != 0 {
		t.Errorf("empty history: %+v", rep)
	}
}

// The first lines shared by several histories below: w1 is granted token 1
// (ttl 100) after the fence is advanced to 1.
const grant1 = `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
`

// release1 has w1 release token 1, so that w2 may be granted token 2.
const release1 = `{"time":1,"process":"w1","type":"invoke","f":"release","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":1,"process":"w1","type":"ok","f":"release","resource":"job","value":{}}
`

func TestFencing(t *testing.T) {
	// grant-before-fence: w2 is granted token 2 before the fence is
	// advanced; w1's stale write with token 1, invoked after the grant was
	// observed, is accepted.
	rep := expect(t, grant1+release1+`{"time":2,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":100}}
{"time":2,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r1","payload":"a"}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":4,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":4,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
`, Fencing, FenceBeforeGrant)
	want := Violation{Invariant: Fencing, Resource: "job", Message: "write token=1 accepted after grant token=2 was observed", Events: []int{7, 8, 9}}
	if !reflect.DeepEqual(rep.Violations[0], want) {
		t.Errorf("got %+v\nwant %+v", rep.Violations[0], want)
	}

	// The sink's fence was observed at 2 by an advance before the write.
	expect(t, grant1+release1+`{"time":2,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":2,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r1","payload":"a"}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, Fencing, LinearizableSink)

	// Ambiguous: the write was invoked before the grant of token 2 was
	// observed, and may have taken effect before the fence moved.
	expect(t, grant1+release1+`{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r1","payload":"a"}}
{"time":2,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":100}}
{"time":2,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":2,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":2,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`)
}

func TestExclusiveLease(t *testing.T) {
	// worker-clock: w2 is granted token 2 at time 5 while w1's lease,
	// granted at time 0 for 10, is certainly valid until 10.
	rep := expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":5,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":5,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":5,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":5,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
`, ExclusiveLease)
	if got := rep.Violations[0].Message; got != "leases token=1 (w1/1) and token=2 (w2/1) were both certainly valid during [5, 10)" {
		t.Errorf("message %q", got)
	}

	// A renew that certainly took effect extends the certain interval: the
	// renew at 8 keeps token 1 valid until 18, past w2's grant at 12.
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":8,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":8,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
{"time":12,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":12,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":12,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":12,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
`, ExclusiveLease)

	// Ambiguous: w1's grant may have happened at 0 (deadline 10) or at 8
	// (deadline 18), w2's at 9 or at 11: only [8, 10) is certain for token
	// 1 and [11, 19) for token 2. w2's release, whose outcome is unknown,
	// may have ended token 2 at 12, before w3 is granted token 3 at 14.
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":8,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":9,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":9,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":9,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":11,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":12,"process":"w2","type":"invoke","f":"release","resource":"job","value":{"owner":"w2","incarnation":1,"token":2}}
{"time":13,"process":"w2","type":"info","f":"release","resource":"job","value":{}}
{"time":14,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":10}}
{"time":14,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":14,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":3}}
{"time":14,"process":"w3","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
`)
}

// TestInfoRenewTakesAGrantsTTL: a renew with no ttl of its own whose
// outcome is unknown may take effect after its info line, so its ttl is
// that of any grant of its token, as an open renew's is: w1's renew at 0
// can only extend token 1 (granted at 1 for 10), which is then certainly
// valid when w2 is granted token 2 at 5. (Its info line made it count only
// grants before it, of which there were none: its ttl read as unknown, and
// the overlap was missed.)
func TestInfoRenewTakesAGrantsTTL(t *testing.T) {
	const rest = `{"time":1,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":1,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":5,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":5,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":5,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":5,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
`
	const renew = `{"time":0,"process":"w0","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
`
	open := expect(t, renew+rest, ExclusiveLease)
	info := expect(t, renew+`{"time":0,"process":"w0","type":"info","f":"renew","resource":"job","value":{}}
`+rest, ExclusiveLease)
	if a, b := open.Violations[0].Message, info.Violations[0].Message; a != b || a != "leases token=1 (w1/1) and token=2 (w2/1) were both certainly valid during [5, 11)" {
		t.Errorf("open renew: %q\ninfo renew: %q", a, b)
	}
}

// TestRenewBeforeItsGrant: a renew accepted before its token was granted
// to the same holder is named so (the message said the token "was granted
// to" the renewer itself, as if to someone else).
func TestRenewBeforeItsGrant(t *testing.T) {
	rep := expect(t, `{"time":0,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1,"ttl":100}}
{"time":0,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
{"time":1,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":1,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
`, RenewValidity)
	if got := rep.Violations[0].Message; got != "renew token=1 by w1/1 accepted before token=1 was granted (to w1/1, first attempted at event 2)" {
		t.Errorf("message %q", got)
	}
}

func TestTokenMonotonic(t *testing.T) {
	// volatile-counter: after the coordinator restarts, its counter starts
	// again and token 1 is granted after token 2 was. (A complete history:
	// in a partial one request b1 may have been granted token 1 before the
	// first event, and its attempt at 10 be a replay.)
	volatile := `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":5}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":6,"process":"coordinator","type":"info","f":"restart"}
{"time":10,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":5}}
{"time":10,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
`
	expect(t, volatile, TokenMonotonic)
	expect(t, `{"format":"fencecheck-history","version":1,"partial":true}`+"\n"+volatile)

	// One token granted to two different requests.
	rep := expect(t, `{"format":"fencecheck-history","version":1,"partial":true}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":5}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
{"time":10,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":5}}
{"time":10,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
`, TokenMonotonic)
	if got := rep.Violations[0].Message; got != `token=3 granted twice: to w1/1 (requestId="a1") and to w2/1 (requestId="b1")` {
		t.Errorf("message %q", got)
	}

	// Ambiguous: overlapping acquires may have been granted in either
	// order; and a retry of request a1 may have been granted during its
	// first attempt (info), before token 2 was. A replay of a1's token is
	// not a second grant.
	expect(t, `{"format":"fencecheck-history","version":1,"partial":true}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":1}}
{"time":0,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":1}}
{"time":5,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":6,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":10,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":1}}
{"time":10,"process":"w4","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w4","incarnation":1,"requestId":"d1","ttl":1}}
{"time":11,"process":"w3","type":"info","f":"acquire","resource":"job","value":{}}
{"time":12,"process":"w4","type":"ok","f":"acquire","resource":"job","value":{"token":4}}
{"time":13,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":1}}
{"time":14,"process":"w3","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
{"time":15,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":1}}
{"time":16,"process":"w3","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
`)
}

func TestFenceBeforeGrant(t *testing.T) {
	// grant-before-fence: token 1 is granted while the fence is still 0;
	// the advance comes after.
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
`, FenceBeforeGrant)

	// In a partial history nothing is known of the fence at the start, but
	// an advance invoked after the grant of token 2 returned 2: the fence
	// was below 2 when the grant was observed.
	expect(t, `{"format":"fencecheck-history","version":1,"partial":true}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
`, FenceBeforeGrant)

	// Ambiguous: the advance overlaps the grant (it may have reached 2
	// first), and an advance with an unknown outcome may have moved the
	// fence to anything before the grant of token 5.
	expect(t, grant1+release1+`{"time":2,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":2,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":100}}
{"time":2,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":2,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":3,"process":"w2","type":"invoke","f":"release","resource":"job","value":{"owner":"w2","incarnation":1,"token":2}}
{"time":3,"process":"w2","type":"ok","f":"release","resource":"job","value":{}}
{"time":4,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":4,"process":"coordinator","type":"info","f":"advance","resource":"job","value":{}}
{"time":5,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":100}}
{"time":5,"process":"w3","type":"ok","f":"acquire","resource":"job","value":{"token":5}}
`)
}

func TestIdempotentResult(t *testing.T) {
	// request-id-key: the result key is the attempt's request id, so one
	// task's result is accepted twice with different payloads.
	rep := expect(t, grant1+release1+`{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"job#a1","payload":"x","task":"job"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":3,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":100}}
{"time":3,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":3,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":3,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":4,"process":"w2","type":"invoke","f":"write","resource":"job","value":{"token":2,"resultId":"job#b1","payload":"y","task":"job"}}
{"time":4,"process":"w2","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, IdempotentResult)
	if got := rep.Violations[0].Message; got != `task "job" had results accepted under resultId="job#a1" (payload "x") and resultId="job#b1" (payload "y")` {
		t.Errorf("message %q", got)
	}

	// One result id accepted with two payloads (the sink also breaks its
	// own spec).
	expect(t, grant1+`{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"x"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"y"}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, IdempotentResult, LinearizableSink)

	// Ambiguous: a conflicting payload whose write has an unknown outcome,
	// and one that failed as a conflict, were not certainly accepted.
	expect(t, grant1+`{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"x","task":"job"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"y","task":"job"}}
{"time":3,"process":"w1","type":"fail","f":"write","resource":"job","value":{"error":"conflict"}}
{"time":4,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r2","payload":"z","task":"job"}}
{"time":5,"process":"w1","type":"info","f":"write","resource":"job","value":{}}
`)
}

func TestRenewValidity(t *testing.T) {
	// renew-at-deadline: granted at 0 for 10, renewed at 10 (the deadline).
	rep := expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":10,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":10,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`, RenewValidity)
	if got := rep.Violations[0].Message; got != "renew token=1 by w1/1 invoked at time 10 accepted after the lease's deadline (10 at the latest)" {
		t.Errorf("message %q", got)
	}

	// renew-token-only: w1 restarted (incarnation 2) and renewed the token
	// its first incarnation held.
	expect(t, grant1+`{"time":5,"process":"w1","type":"info","f":"crash"}
{"time":6,"process":"w1","type":"info","f":"restart"}
{"time":7,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":2,"token":1}}
{"time":7,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`, RenewValidity)

	// A released lease is renewed.
	expect(t, grant1+release1+`{"time":2,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":2,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`, RenewValidity)

	// A lease taken over (w1's expired at 10, w2 got token 2 at 11) is
	// renewed. The coordinator then holds both leases valid at once.
	rep = expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":11,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":11,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":11,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":11,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":12,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":12,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`, ExclusiveLease, RenewValidity)
	if got := rep.Violations[1].Message; got != "renew token=1 by w1/1 accepted after the lease was taken over by grant token=2 (to w2/1)" {
		t.Errorf("message %q", got)
	}

	// Ambiguous: the renew invoked at 9 may have taken effect before the
	// deadline 10; the second, invoked at 20, may have followed a renew
	// whose outcome is unknown (invoked at 18, it may have taken effect at
	// 19 and moved the deadline to 29).
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":9,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":12,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
{"time":18,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":19,"process":"w1","type":"info","f":"renew","resource":"job","value":{}}
{"time":20,"process":"w1","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":20,"process":"w1","type":"ok","f":"renew","resource":"job","value":{}}
`)
}

func TestAcquireIdempotent(t *testing.T) {
	// no-acquire-dedup: a retry of request a1 is answered with a new token.
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":1}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":5,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":5,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":5,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":5,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
`, AcquireIdempotent)

	// Ambiguous, and clean: the first attempt's outcome is unknown (it may
	// have granted nothing), retries replay token 2, and another owner's
	// request of another id is another request (of the same id it is a
	// violation: TestAcquireIdempotentKeyIsRequestID).
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":1,"process":"w1","type":"info","f":"acquire","resource":"job","value":{}}
{"time":2,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":2,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":2,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":2,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":3,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":3,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":20,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":20,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":20,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":3}}
{"time":20,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
`)
}

func TestLinearizableSink(t *testing.T) {
	// A read after the write completed does not see it.
	rep := expect(t, grant1+`{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":1,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":2,"process":"w2","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":2,"process":"w2","type":"ok","f":"read","resource":"job","value":{"payload":null}}
`, LinearizableSink)
	want := Violation{Invariant: LinearizableSink, Resource: "job", Events: []int{6, 7},
		Message: `the sink's operations up to event 7 have no linearization under the fenced-sink spec; the last is read resultId="r" -> null`}
	if !reflect.DeepEqual(rep.Violations[0], want) {
		t.Errorf("got %+v\nwant %+v", rep.Violations[0], want)
	}

	// accept-higher-token: a worker supplies token 2, never granted, and
	// the sink (fence 1) accepts it.
	expect(t, grant1+`{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":2,"resultId":"r","payload":"a"}}
{"time":1,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, LinearizableSink)

	// Ambiguous: a read concurrent with the write may see it or not; a
	// write with an unknown outcome may have stored the payload that a
	// later replay finds; in a partial history the fence may already be 5.
	expect(t, grant1+`{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":1,"process":"w2","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":1,"process":"w3","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":1,"process":"w2","type":"ok","f":"read","resource":"job","value":{"payload":null}}
{"time":1,"process":"w3","type":"ok","f":"read","resource":"job","value":{"payload":"a"}}
{"time":1,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"s","payload":"b"}}
{"time":3,"process":"w1","type":"info","f":"write","resource":"job","value":{}}
{"time":4,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"s","payload":"b"}}
{"time":4,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"replayed"}}
`)
	expect(t, `{"format":"fencecheck-history","version":1,"partial":true}
{"time":0,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":5,"resultId":"r","payload":"a"}}
{"time":0,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"replayed"}}
{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":6}}
`)
}

func TestResourceIndependence(t *testing.T) {
	// global-fence: the grant on job-b moves the one fence, and job-a's
	// holder, with the newest token of job-a, is fenced.
	rep := expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-a","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-a","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-a","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job-a","value":{"token":1}}
{"time":1,"process":"w2","type":"invoke","f":"acquire","resource":"job-b","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":100}}
{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job-b","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job-b","value":{"token":2}}
{"time":1,"process":"w2","type":"ok","f":"acquire","resource":"job-b","value":{"token":2}}
{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job-a","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":2,"process":"w1","type":"fail","f":"write","resource":"job-a","value":{"error":"fenced"}}
`, LinearizableSink, ResourceIndependence) // fenced while job-a's fence equals the token: no linearization either
	if v := rep.Violations[1]; v.Resource != "job-a" || !slices.Equal(v.Events, []int{2, 3, 8, 9}) {
		t.Errorf("got %+v", v)
	}

	// Ambiguous: a takeover is under way (w2's acquire was invoked before
	// the write failed, and the fence was advanced for it), so the fence
	// may already have moved past the newest granted token.
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":5}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":10,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":5}}
{"time":10,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":10,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":10,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":10,"process":"w1","type":"fail","f":"write","resource":"job","value":{"error":"fenced"}}
{"time":10,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
`)
}

func TestAbsoluteValidity(t *testing.T) {
	// The article's non-guarantee: the lease expired (deadline 10), nobody
	// took over, and the stale write with token 1 is accepted at 12.
	rep := expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":12,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":12,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, AbsoluteValidity)
	if got := rep.Violations[0].Message; got != "write token=1 invoked at time 12 accepted after its lease's deadline (10 at the latest)" {
		t.Errorf("message %q", got)
	}

	// Ambiguous: the first write, invoked at 9, may have taken effect
	// before the deadline; a renew with an unknown outcome (still open) may
	// have moved the deadline past the second.
	expect(t, `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":9,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":12,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":12,"process":"w2","type":"invoke","f":"renew","resource":"job","value":{"owner":"w1","incarnation":1,"token":1}}
{"time":13,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"s","payload":"b"}}
{"time":13,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`)
	// Nothing is concluded once an acquire with an unknown outcome (it may
	// have granted token 1 late) precedes the write.
	expect(t, grant1+`{"time":1,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":2,"process":"w2","type":"info","f":"acquire","resource":"job","value":{}}
{"time":200,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":200,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`)
}

func TestDuplicateMakesFailedWritesUnknown(t *testing.T) {
	// The first copy of w1's duplicated write stored the payload; the
	// client saw the second copy's fenced. Without the fault the read
	// would have no explanation.
	ops := grant1 + `{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":1,"process":"nemesis","type":"info","f":"duplicate","value":{"target":"w1"}}
{"time":2,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":2,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":3,"process":"w1","type":"fail","f":"write","resource":"job","value":{"error":"fenced"}}
{"time":4,"process":"w2","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":4,"process":"w2","type":"ok","f":"read","resource":"job","value":{"payload":"a"}}
`
	expect(t, ops)
	expect(t, strings.Replace(ops, `"target":"w1"`, `"target":"w3"`, 1), LinearizableSink)
}

// TestUnrecordedAdvancesAreNamed: a history that records no advance of a
// resource (a recorder that left them out) keeps its verdicts, and the
// fence-before-grant and linearizable-sink messages say why; with one
// advance recorded, the same grant and write are clean, and another
// resource's advance does not count.
func TestUnrecordedAdvancesAreNamed(t *testing.T) {
	const head = `{"format":"fencecheck-history","version":1,"expect":[]}` + "\n"
	const grantWrite = `
{"time":1,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":100}}
{"time":2,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":4,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`
	const advance = `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"%s","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"%s","value":{"token":1}}
`
	for _, c := range []struct {
		name, jsonl string
		noted       bool
	}{
		{"none recorded", head + grantWrite, true},
		{"another resource's", head + strings.ReplaceAll(advance, "%s", "other") + grantWrite, true},
		{"recorded", head + strings.ReplaceAll(advance, "%s", "job") + grantWrite, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rep Report
			if c.noted {
				rep = expect(t, c.jsonl, FenceBeforeGrant, LinearizableSink)
			} else {
				rep = expect(t, c.jsonl)
			}
			for _, v := range rep.Violations {
				if !strings.HasSuffix(v.Message, noAdvanceNote) {
					t.Errorf("%s: %q does not say the history records no advance", v.Invariant, v.Message)
				}
			}
		})
	}
	// A recorded advance below the grant's token: violations, and no note.
	rep := expect(t, head+strings.ReplaceAll(advance, "%s", "job")+strings.Replace(grantWrite, `"token":1}`, `"token":2}`, 1),
		Fencing, FenceBeforeGrant)
	for _, v := range rep.Violations {
		if strings.Contains(v.Message, noAdvanceNote) {
			t.Errorf("%s: %q names unrecorded advances, but one is recorded", v.Invariant, v.Message)
		}
	}
}

// TestApplyWithoutFenceUsesTheCompletions: a write's reported fence is its
// apply's value.fence, else its completion's, for every rule alike: an
// apply line that names no fence does not hide the completion's from
// linearizable-sink (a fence of 2 reported for a write of token 1 accepted
// under fence 1) nor from resource-independence (a rejection under a
// reported fence 0 is not one under the fence 1 the advance set).
func TestApplyWithoutFenceUsesTheCompletions(t *testing.T) {
	const head = `{"format":"fencecheck-history","version":1,"expect":[]}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
`
	expect(t, head+`{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":2,"process":"sink","type":"info","f":"apply","resource":"job","value":{"writer":"w1","token":1,"resultId":"r","payload":"a","outcome":"written"}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written","fence":2}}
`, Fencing, LinearizableSink)
	expect(t, `{"format":"fencecheck-history","version":1,"expect":[]}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":2,"process":"sink","type":"info","f":"apply","resource":"job","value":{"writer":"w1","token":1,"resultId":"r","payload":"a","error":"fenced"}}
{"time":2,"process":"w1","type":"fail","f":"write","resource":"job","value":{"error":"fenced","fence":0}}
`, LinearizableSink)
}
