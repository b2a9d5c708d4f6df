package spec

import (
	"strings"
	"testing"
)

// TestAcquireIdempotentKeyIsRequestID: the contract's acquire-idempotent is
// "two different grants answer the same requestId", whoever sends it: one
// requestId granted to two owners, or to two incarnations of one owner, is
// violated (they passed, read as two requests); a retry answered with the
// grant it retries, and one requestId on two resources, are not. The brute
// force agrees on each.
func TestAcquireIdempotentKeyIsRequestID(t *testing.T) {
	const adv1 = `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"j","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"j","value":{"token":1}}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"j","value":{"owner":"w1","incarnation":1,"requestId":"a","ttl":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"j","value":{"token":1}}
`
	cases := []struct {
		name, jsonl string
		violated    bool
		message     string
	}{
		{"another owner", adv1 + `{"time":3,"process":"coordinator","type":"invoke","f":"advance","resource":"j","value":{}}
{"time":3,"process":"coordinator","type":"ok","f":"advance","resource":"j","value":{"token":2}}
{"time":3,"process":"w2","type":"invoke","f":"acquire","resource":"j","value":{"owner":"w2","incarnation":1,"requestId":"a","ttl":1}}
{"time":3,"process":"w2","type":"ok","f":"acquire","resource":"j","value":{"token":2}}
`, true, `requestId="a" answered by two grants: token=1 to w1/1 and token=2 to w2/1`},
		{"another incarnation", adv1 + `{"time":2,"process":"w1","type":"info","f":"crash","value":{}}
{"time":2,"process":"w1","type":"info","f":"restart","value":{}}
{"time":3,"process":"coordinator","type":"invoke","f":"advance","resource":"j","value":{}}
{"time":3,"process":"coordinator","type":"ok","f":"advance","resource":"j","value":{"token":2}}
{"time":3,"process":"w1","type":"invoke","f":"acquire","resource":"j","value":{"owner":"w1","incarnation":2,"requestId":"a","ttl":1}}
{"time":3,"process":"w1","type":"ok","f":"acquire","resource":"j","value":{"token":2}}
`, true, `requestId="a" answered by two grants: token=1 to w1/1 and token=2 to w1/2`},
		{"the same grant to another owner", adv1 + `{"time":0,"process":"w2","type":"invoke","f":"acquire","resource":"j","value":{"owner":"w2","incarnation":1,"requestId":"a","ttl":1}}
{"time":0,"process":"w2","type":"ok","f":"acquire","resource":"j","value":{"token":1}}
`, true, `requestId="a" answered by two grants: token=1 to w1/1 and token=1 to w2/1`},
		{"a retry replayed", adv1 + `{"time":1,"process":"w1","type":"invoke","f":"acquire","resource":"j","value":{"owner":"w1","incarnation":1,"requestId":"a","ttl":1}}
{"time":1,"process":"w1","type":"ok","f":"acquire","resource":"j","value":{"token":1}}
`, false, ""},
		{"two resources", adv1 + `{"time":3,"process":"coordinator","type":"invoke","f":"advance","resource":"k","value":{}}
{"time":3,"process":"coordinator","type":"ok","f":"advance","resource":"k","value":{"token":1}}
{"time":3,"process":"w2","type":"invoke","f":"acquire","resource":"k","value":{"owner":"w2","incarnation":1,"requestId":"a","ttl":1}}
{"time":3,"process":"w2","type":"ok","f":"acquire","resource":"k","value":{"token":1}}
`, false, ""},
	}
	for _, c := range cases {
		h := parse(t, c.jsonl)
		var got *Violation
		for i, v := range Check(h, Options{}).Violations {
			if v.Invariant == AcquireIdempotent {
				got = &Check(h, Options{}).Violations[i]
			}
		}
		if (got != nil) != c.violated || got != nil && got.Message != c.message {
			t.Errorf("%s: acquire-idempotent %+v, want violated %v: %q", c.name, got, c.violated, c.message)
		}
		brute := false
		for _, r := range bruteByResource(h, 1<<20) {
			brute = brute || r.certain[AcquireIdempotent]
		}
		if brute != c.violated {
			t.Errorf("%s: brute force acquire-idempotent %v, want %v", c.name, brute, c.violated)
		}
		if c.violated && !strings.Contains(got.Message, `requestId="a"`) {
			t.Errorf("%s: message %q does not name the requestId", c.name, got.Message)
		}
	}
}
