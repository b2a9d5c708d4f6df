package spec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"fencecheck/history"
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
