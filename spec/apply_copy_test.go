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
