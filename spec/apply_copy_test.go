package spec

import (
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

// TestApplyOfANetworkCopy: a write the network duplicated reaches the sink
// twice, and both decisions are recorded (apply): with the duplicate fault
// in the history the second is a copy, not a write nobody invoked; without
// it, it is.
func TestApplyOfANetworkCopy(t *testing.T) {
	body := func(dup bool) string {
		var b strings.Builder
		b.WriteString(`{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":1}}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"r1","ttl":3}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1,"ttl":3}}
{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"p"}}
`)
		if dup {
			b.WriteString(`{"time":1,"process":"nemesis","type":"info","f":"duplicate","value":{"target":"w1"}}
`)
		}
		b.WriteString(`{"time":1,"process":"sink","type":"info","f":"apply","resource":"job-1","value":{"writer":"w1","token":1,"resultId":"job-1","payload":"p","outcome":"written","fence":1}}
{"time":1,"process":"sink","type":"info","f":"apply","resource":"job-1","value":{"writer":"w1","token":1,"resultId":"job-1","payload":"p","outcome":"replayed","fence":1}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job-1","value":{"outcome":"written"}}
`)
		return b.String()
	}
	for _, dup := range []bool{true, false} {
		h, err := history.ReadAll("copy.jsonl", strings.NewReader(body(dup)))
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, v := range Check(h, Options{}).Violations {
			got = got || v.Invariant == LinearizableSink
		}
		if got == dup {
			t.Errorf("duplicate fault %v: linearizable-sink reported %v", dup, got)
		}
	}
}

// TestCopyWithoutTheOriginalsApply: a copy is judged by what its writer
// invoked, not by which decisions have apply lines. The sink's decision of
// the original is not recorded here, its copy's is, after the write
// returned: with the duplicate fault that is a copy; an apply of another
// payload is not a copy of the write, and has no linearization. Check and
// the brute force must both say so.
func TestCopyWithoutTheOriginalsApply(t *testing.T) {
	const head = `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":1}}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"r1","ttl":3}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1,"ttl":3}}
{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"p"}}
{"time":1,"process":"nemesis","type":"info","f":"duplicate","value":{"target":"w1"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job-1","value":{"outcome":"written"}}
`
	for _, c := range []struct {
		payload string
		want    bool
	}{{"p", false}, {"q", true}} {
		apply := `{"time":3,"process":"sink","type":"info","f":"apply","resource":"job-1","value":{"writer":"w1","token":1,"resultId":"job-1","payload":"` +
			c.payload + `","outcome":"replayed","fence":1}}` + "\n"
		h, err := history.ReadAll("copy.jsonl", strings.NewReader(head+apply))
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, v := range Check(h, Options{}).Violations {
			got = got || v.Invariant == LinearizableSink
		}
		if got != c.want {
			t.Errorf("apply of payload %q: linearizable-sink reported %v, want %v", c.payload, got, c.want)
		}
		// The brute force, which TestDifferential trusts, agrees.
		if certain, _ := newBrute(h, 200000).Certain(); certain[LinearizableSink] != c.want {
			t.Errorf("apply of payload %q: the brute force finds linearizable-sink certain: %v, want %v", c.payload, certain[LinearizableSink], c.want)
		}
	}
}
