package history

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// sinkSample has apply events and write completions that carry the sink's
// fence (extensions of the format).
const sinkSample = `{"format":"fencecheck-history","version":1,"timeUnit":"tick"}
{"time":0,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"w1@1","task":"job-1"}}
{"time":1,"process":"sink","type":"info","f":"apply","resource":"job-1","value":{"writer":"w1","token":1,"resultId":"job-1","payload":"w1@1","outcome":"written","fence":1}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job-1","value":{"outcome":"written","fence":1}}
{"time":3,"process":"w2","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"w2@1"}}
{"time":3,"process":"sink","type":"info","f":"apply","resource":"job-1","value":{"writer":"w2","token":1,"resultId":"job-1","payload":"w2@1","error":"conflict"}}
{"time":4,"process":"w2","type":"fail","f":"write","resource":"job-1","value":{"error":"conflict","fence":0}}
{"time":5,"process":"sink","type":"info","f":"apply","resource":"job-2","value":{"writer":"w3","token":2,"resultId":"job-2","error":"fenced","fence":3}}
`

func TestApplyAndFence(t *testing.T) {
	h, err := ReadAll("sink", strings.NewReader(sinkSample))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 7 {
		t.Fatalf("events = %d, want 7", len(h.Events))
	}
	a := h.Events[1]
	if a.Process != Sink || a.Type != Info || a.F != Apply || a.Resource != "job-1" {
		t.Fatalf("apply event = %+v", a)
	}
	want := Value{Writer: "w1", Token: 1, ResultID: "job-1", Payload: "w1@1", HasPayload: true, Outcome: Written, Fence: 1, HasFence: true}
	if a.Value != want {
		t.Fatalf("apply value = %+v, want %+v", a.Value, want)
	}
	if v := h.Events[5].Value; v.Error != Conflict || v.Fence != 0 || !v.HasFence {
		t.Fatalf("fail with fence 0 = %+v", v)
	}
	if v := h.Events[6].Value; v.Error != Fenced || v.Fence != 3 || v.HasPayload || v.Writer != "w3" {
		t.Fatalf("fenced apply = %+v", v)
	}
	if v := h.Events[2].Value; v.Fence != 1 || !v.HasFence {
		t.Fatalf("ok with fence = %+v", v)
	}
	// Apply events complete nothing and open nothing.
	ops := h.Ops()
	if len(ops) != 2 || ops[0].Complete != 2 || ops[1].Complete != 5 {
		t.Fatalf("ops = %+v", ops)
	}
	if IsFault(Apply) || IsOperation(Apply) || !IsSinkEvent(Apply) || IsSinkEvent(Write) {
		t.Fatal("apply is a sink event, neither a fault nor an operation")
	}
	// Written back byte for byte (the sample uses the writer's key order).
	var out bytes.Buffer
	if err := Encode(&out, h); err != nil {
		t.Fatal(err)
	}
	if out.String() != sinkSample {
		t.Fatalf("round trip changed the file:\n%s\nwant\n%s", out.String(), sinkSample)
	}
}

// A fence elsewhere than on an apply or a write's ok or fail is not part of
// the format: it is ignored like any unknown key.
func TestFenceIgnoredElsewhere(t *testing.T) {
	in := `{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"r","value":{"fence":"x"}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"r","value":{"token":1,"fence":1}}`
	h, err := ReadAll("f", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if v := h.Events[1].Value; v.HasFence || v.Fence != 0 {
		t.Fatalf("value = %+v", v)
	}
}

func TestApplyMalformed(t *testing.T) {
	const pre = `{"time":1,"process":"sink","type":"info","f":"apply","resource":"r","value":`
	cases := []struct {
		name, input string
		field       string
	}{
		{"no writer", pre + `{"token":1,"resultId":"x","outcome":"written"}}`, "value.writer"},
		{"writer not string", pre + `{"writer":1,"token":1,"resultId":"x","outcome":"written"}}`, "value.writer"},
		{"empty writer", pre + `{"writer":"","token":1,"resultId":"x","outcome":"written"}}`, "value.writer"},
		{"no token", pre + `{"writer":"w","resultId":"x","outcome":"written"}}`, "value.token"},
		{"string token", pre + `{"writer":"w","token":"1","resultId":"x","outcome":"written"}}`, "value.token"},
		{"no resultId", pre + `{"writer":"w","token":1,"outcome":"written"}}`, "value.resultId"},
		{"neither outcome nor error", pre + `{"writer":"w","token":1,"resultId":"x"}}`, "value.outcome"},
		{"both outcome and error", pre + `{"writer":"w","token":1,"resultId":"x","outcome":"written","error":"fenced"}}`, "value.error"},
		{"unknown outcome", pre + `{"writer":"w","token":1,"resultId":"x","outcome":"maybe"}}`, "value.outcome"},
		{"unknown error", pre + `{"writer":"w","token":1,"resultId":"x","error":"held"}}`, "value.error"},
		{"fence string", pre + `{"writer":"w","token":1,"resultId":"x","outcome":"written","fence":"1"}}`, "value.fence"},
		{"fence negative", pre + `{"writer":"w","token":1,"resultId":"x","outcome":"written","fence":-1}}`, "value.fence"},
		{"fence float", pre + `{"writer":"w","token":1,"resultId":"x","outcome":"written","fence":1.5}}`, "value.fence"},
		{"payload int", pre + `{"writer":"w","token":1,"resultId":"x","payload":3,"outcome":"written"}}`, "value.payload"},
		{"no value", `{"time":1,"process":"sink","type":"info","f":"apply","resource":"r"}`, "value.writer"},
		{"no resource", `{"time":1,"process":"sink","type":"info","f":"apply","value":{"writer":"w","token":1,"resultId":"x","outcome":"written"}}`, "resource"},
		{"not info", `{"time":1,"process":"sink","type":"ok","f":"apply","resource":"r","value":{"writer":"w","token":1,"resultId":"x","outcome":"written"}}`, "type"},
		{"write ok fence string", `{"time":1,"process":"w1","type":"invoke","f":"write","resource":"r","value":{"token":1,"resultId":"x","payload":"p"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"r","value":{"outcome":"written","fence":true}}`, "value.fence"},
		{"write fail fence outside int64", `{"time":1,"process":"w1","type":"invoke","f":"write","resource":"r","value":{"token":1,"resultId":"x","payload":"p"}}
{"time":2,"process":"w1","type":"fail","f":"write","resource":"r","value":{"error":"fenced","fence":99999999999999999999}}`, "value.fence"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAll("f.jsonl", strings.NewReader(c.input))
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want *Error", err)
			}
			line := strings.Count(c.input, "\n") + 1
			if he.File != "f.jsonl" || he.Line != line || he.Field != c.field {
				t.Fatalf("err = %q (line %d field %q), want line %d field %q", err, he.Line, he.Field, line, c.field)
			}
		})
	}
}

func TestRecorderApply(t *testing.T) {
	var out bytes.Buffer
	var now int64
	r := NewRecorder(Header{TimeUnit: "tick"}, func() int64 { now++; return now }, &out)
	op := r.Invoke("w1", Write, "job-1", Value{Token: 2, ResultID: "job-1", Payload: "w1@2", HasPayload: true})
	r.Apply("job-1", Value{Writer: "w1", Token: 2, ResultID: "job-1", Payload: "w1@2", HasPayload: true, Outcome: Written, Fence: 2, HasFence: true})
	r.Complete(op, OK, Value{Outcome: Written, Fence: 2, HasFence: true})
	r.Apply("job-1", Value{Writer: "w2", Token: 1, ResultID: "job-1", Error: Fenced}) // a sink with no fence to report
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	h, err := ReadAll("recorded", &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rec := r.History()
	if len(h.Events) != 4 {
		t.Fatalf("events = %d", len(h.Events))
	}
	for i := range h.Events {
		a, b := h.Events[i], rec.Events[i]
		a.Line = 0
		if a != b {
			t.Fatalf("event %d read back as %+v, recorded %+v", i, a, b)
		}
	}
	if e := h.Events[1]; e.Process != Sink || e.F != Apply || e.Type != Info {
		t.Fatalf("apply = %+v", e)
	}

	for _, bad := range []Value{
		{Token: 1, ResultID: "x", Outcome: Written},
		{Writer: "w", ResultID: "x", Outcome: Written},
		{Writer: "w", Token: 1, Outcome: Written},
		{Writer: "w", Token: 1, ResultID: "x"},
		{Writer: "w", Token: 1, ResultID: "x", Outcome: Written, Error: Fenced},
		{Writer: "w", Token: 1, ResultID: "x", Error: Held},
	} {
		var out bytes.Buffer
		r := NewRecorder(Header{}, MonotonicClock(time.Nanosecond), &out)
		r.Apply("r", bad)
		if r.Err() == nil || len(r.History().Events) != 0 {
			t.Errorf("Apply(%+v) recorded without error", bad)
		}
		if _, err := ReadAll("recorded", &out); !errors.Is(err, ErrNoEvents) { // nothing recorded
			t.Errorf("misuse left a malformed history: %v", err)
		}
	}
}
