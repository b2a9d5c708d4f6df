package viz

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

// TestNanosecondsShownInMilliseconds: a history in nanoseconds (explore
// real, Jepsen) is drawn in milliseconds, times and durations alike.
func TestNanosecondsShownInMilliseconds(t *testing.T) {
	h, err := history.ReadAll("x", strings.NewReader(`{"format":"fencecheck-history","version":1,"timeUnit":"ns"}
{"time":1000,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"r","ttl":20000000}}
{"time":12500000,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1,"ttl":20000000}}
{"time":13000000,"process":"nemesis","type":"info","f":"clock","value":{"target":"w1","offset":-1500000}}`))
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, h, Options{})
	for _, want := range []string{">t=0.001<", ">t=12.5<", ">t=13<", "ttl=20 ", "time unit <b>ms</b>", ">ms</text>", "valid until t=32.5", "clock -1.5"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, ">t=12500000<") || strings.Contains(page, "ttl=20000000 ") {
		t.Error("raw nanoseconds shown")
	}
	var b bytes.Buffer
	if err := Mermaid(&b, h, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "t=12.5 ") || strings.Contains(b.String(), "t=12500000") {
		t.Errorf("mermaid:\n%s", b.String())
	}
	tick := render(t, load(t, "takeover"), Options{})
	if !strings.Contains(tick, "time unit <b>tick</b>") {
		t.Error("a tick history is not shown in ticks")
	}
}
