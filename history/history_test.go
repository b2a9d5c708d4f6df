package history

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

const sample = `{"format":"fencecheck-history","version":1,"variant":"reference","seed":7,"expect":["absolute-validity"],"actions":["tick"]}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"w1-1","ttl":5}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":1}}
{"time":1,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1,"ttl":5}}

{"time":2,"process":"w1","type":"info","f":"pause","value":{}}
{"time":9,"process":"nemesis","type":"info","f":"resume","value":{"target":"w1"}}
{"time":9,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"a\"b","task":"job-1"}}
{"time":9,"process":"w1","type":"ok","f":"write","resource":"job-1","value":{"outcome":"written"}}
{"time":10,"process":"w2","type":"invoke","f":"read","resource":"job-1","value":{"resultId":"job-1"}}
{"time":10,"process":"w2","type":"ok","f":"read","resource":"job-1","value":{"payload":null}}
{"time":11,"process":"w2","type":"invoke","f":"renew","resource":"job-1","value":{"owner":"w2","incarnation":"i-2","token":1}}
`

func TestRoundTrip(t *testing.T) {
	h, err := ReadAll("sample", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if !h.HasHeader || h.Header.Variant != "reference" || h.Header.Seed != 7 || len(h.Header.Expect) != 1 {
		t.Fatalf("header = %+v", h.Header)
	}
	if len(h.Events) != 11 {
		t.Fatalf("events = %d, want 11", len(h.Events))
	}
	if e := h.Events[4]; e.Line != 7 || e.Index != 4 || e.F != Pause {
		t.Fatalf("event 4 = %+v", e)
	}
	if v := h.Events[6].Value; v.Payload != `a"b` || !v.HasPayload || v.Token != 1 {
		t.Fatalf("write value = %+v", v)
	}
	var out bytes.Buffer
	if err := Encode(&out, h); err != nil {
		t.Fatal(err)
	}
	first := out.String()
	h2, err := ReadAll("out", &out)
	if err != nil {
		t.Fatalf("re-read: %v\n%s", err, first)
	}
	var out2 bytes.Buffer
	if err := Encode(&out2, h2); err != nil {
		t.Fatal(err)
	}
	if first != out2.String() {
		t.Fatalf("encoding is not stable:\n%s\n%s", first, out2.String())
	}
	ops := h2.Ops()
	if len(ops) != 5 {
		t.Fatalf("ops = %v, want 5", ops)
	}
	if last := ops[4]; last.Complete != -1 || h2.Result(last) != Info {
		t.Fatalf("open renew = %+v", last)
	}
}

func TestEmptyEmptyExpect(t *testing.T) {
	h, err := ReadAll("x", strings.NewReader(`{"format":"fencecheck-history","version":1,"expect":[]}`+"\n"+`{"time":0,"process":"w","type":"info","f":"pause"}`))
	if err != nil || h.Header.Expect == nil || len(h.Header.Expect) != 0 || len(h.Events) != 1 {
		t.Fatalf("h=%+v err=%v", h, err)
	}
	b := AppendHeader(nil, h.Header)
	if !bytes.Contains(b, []byte(`"expect":[]`)) {
		t.Fatalf("empty expect lost: %s", b)
	}
}

func TestMalformed(t *testing.T) {
	ev := `{"time":1,"process":"w1","type":"invoke","f":"write","resource":"r","value":{"token":1,"resultId":"x","payload":"p"}}`
	cases := []struct {
		name, input string
		line        int
		field       string
	}{
		{"not json", "{nope", 1, ""},
		{"array", "[1]", 1, ""},
		{"missing time", `{"process":"w","type":"info","f":"pause"}`, 1, "time"},
		{"float time", `{"time":1.5,"process":"w","type":"info","f":"pause"}`, 1, "time"},
		{"huge time", `{"time":99999999999999999999,"process":"w","type":"info","f":"pause"}`, 1, "time"},
		{"negative time", `{"time":-1,"process":"w","type":"info","f":"pause"}`, 1, "time"},
		{"process type", `{"time":1,"process":3,"type":"info","f":"pause"}`, 1, "process"},
		{"unknown type", `{"time":1,"process":"w","type":"done","f":"pause"}`, 1, "type"},
		{"unknown f", `{"time":1,"process":"w","type":"invoke","f":"cas","resource":"r"}`, 1, "f"},
		{"fault not info", `{"time":1,"process":"w","type":"ok","f":"pause"}`, 1, "type"},
		{"no resource", `{"time":1,"process":"w","type":"invoke","f":"advance"}`, 1, "resource"},
		{"no token", `{"time":1,"process":"w","type":"invoke","f":"write","resource":"r","value":{"resultId":"x","payload":"p"}}`, 1, "value.token"},
		{"zero token", `{"time":1,"process":"w","type":"invoke","f":"write","resource":"r","value":{"token":0,"resultId":"x","payload":"p"}}`, 1, "value.token"},
		{"string token", `{"time":1,"process":"w","type":"invoke","f":"write","resource":"r","value":{"token":"1","resultId":"x","payload":"p"}}`, 1, "value.token"},
		{"second invoke", ev + "\n" + ev, 2, "type"},
		{"orphan completion", `{"time":1,"process":"w","type":"ok","f":"write","resource":"r","value":{"outcome":"written"}}`, 1, "type"},
		{"backwards", `{"time":5,"process":"w","type":"info","f":"pause"}` + "\n\n" + `{"time":4,"process":"w","type":"info","f":"resume"}`, 3, "time"},
		{"other format", `{"format":"jepsen","version":1}`, 1, "format"},
		{"other version", `{"format":"fencecheck-history","version":2}`, 1, "version"},
		{"duplicate key", `{"time":1,"time":2,"process":"w","type":"info","f":"pause"}`, 1, "time"},
		{"duplicate value key", `{"time":1,"process":"w","type":"info","f":"pause","value":{"target":"a","target":"b"}}`, 1, "value.target"},
		{"key in another case", `{"Time":1,"process":"w","type":"info","f":"pause"}`, 1, "time"},
		{"value not object", `{"time":1,"process":"w","type":"invoke","f":"advance","resource":"r","value":[]}`, 1, "value"},
		{"resource not string", `{"time":1,"process":"w","type":"invoke","f":"advance","resource":7}`, 1, "resource"},
		{"zero ttl", `{"time":1,"process":"w","type":"invoke","f":"acquire","resource":"r","value":{"owner":"w","incarnation":1,"requestId":"q","ttl":0}}`, 1, "value.ttl"},
		{"bad utf-8", "{\"time\":1,\"process\":\"w\xff\",\"type\":\"info\",\"f\":\"pause\"}", 1, "process"},
		{"header not first", `{"time":1,"process":"w","type":"info","f":"pause"}` + "\n" + `{"format":"fencecheck-history","version":1}`, 2, "format"},
		{"index not increasing", `{"time":1,"process":"w","type":"info","f":"pause","index":4}` + "\n" + `{"time":1,"process":"w","type":"info","f":"pause","index":4}`, 2, "index"},
		{"expect item", `{"format":"fencecheck-history","version":1,"expect":[1]}`, 1, "expect[0]"},
		{"truncated", `{"time":1,"process":"w"`, 1, ""},
		{"ok read without payload", `{"time":1,"process":"w1","type":"invoke","f":"read","resource":"r","value":{"resultId":"x"}}` + "\n" + `{"time":1,"process":"w1","type":"ok","f":"read","resource":"r","value":{}}`, 2, "value.payload"},
		{"ok read without value", `{"time":1,"process":"w1","type":"invoke","f":"read","resource":"r","value":{"resultId":"x"}}` + "\n" + `{"time":1,"process":"w1","type":"ok","f":"read","resource":"r"}`, 2, "value.payload"},
		{"ok read payload int", `{"time":1,"process":"w1","type":"invoke","f":"read","resource":"r","value":{"resultId":"x"}}` + "\n" + `{"time":1,"process":"w1","type":"ok","f":"read","resource":"r","value":{"payload":1}}`, 2, "value.payload"},
		{"bad outcome", ev + "\n" + `{"time":1,"process":"w1","type":"ok","f":"write","resource":"r","value":{"outcome":"maybe"}}`, 2, "value.outcome"},
		{"write error in capitals", ev + "\n" + `{"time":1,"process":"w1","type":"fail","f":"write","resource":"r","value":{"error":"FENCED"}}`, 2, "value.error"},
		{"acquire error of a renew", `{"time":1,"process":"w","type":"invoke","f":"acquire","resource":"r","value":{"owner":"w","incarnation":1,"requestId":"q","ttl":3}}` + "\n" + `{"time":1,"process":"w","type":"fail","f":"acquire","resource":"r","value":{"error":"expired"}}`, 2, "value.error"},
		{"release error", `{"time":1,"process":"w","type":"invoke","f":"release","resource":"r","value":{"owner":"w","incarnation":1,"token":1}}` + "\n" + `{"time":1,"process":"w","type":"fail","f":"release","resource":"r","value":{"error":"weird"}}`, 2, "value.error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAll("f.jsonl", strings.NewReader(c.input))
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if he.File != "f.jsonl" || he.Line != c.line || he.Field != c.field {
				t.Fatalf("err = %q (line %d field %q), want line %d field %q", err, he.Line, he.Field, c.line, c.field)
			}
		})
	}
}

// A read's payload may be null on ok (the result is absent) and missing on
// fail or info: only a missing payload on ok is an error.
func TestReadPayload(t *testing.T) {
	inv := `{"time":1,"process":"w1","type":"invoke","f":"read","resource":"r","value":{"resultId":"x"}}` + "\n"
	for _, done := range []string{
		`{"time":1,"process":"w1","type":"ok","f":"read","resource":"r","value":{"payload":null}}`,
		`{"time":1,"process":"w1","type":"ok","f":"read","resource":"r","value":{"payload":""}}`,
		`{"time":1,"process":"w1","type":"info","f":"read","resource":"r"}`,
		`{"time":1,"process":"w1","type":"fail","f":"read","resource":"r","value":{"error":"unavailable"}}`,
	} {
		if _, err := ReadAll("f", strings.NewReader(inv+done)); err != nil {
			t.Errorf("%s: %v", done, err)
		}
	}
}

// A history with no events is an input error that names the file.
func TestNoEvents(t *testing.T) {
	for _, c := range []struct {
		name, input string
		line        int
		says        string
	}{
		{"empty file", "", 1, "empty"},
		{"blank lines", "\n\n \r\n", 3, "blank"},
		{"header alone", `{"format":"fencecheck-history","version":1,"variant":"reference"}`, 1, "header"},
		{"header and blank lines", `{"format":"fencecheck-history","version":1}` + "\n\n\n", 3, "header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, read := range []func() error{
				func() error { _, err := ReadAll("h.jsonl", strings.NewReader(c.input)); return err },
				func() error { _, err := ReadAny("h.jsonl", strings.NewReader(c.input)); return err },
				func() error {
					r, err := NewReader("h.jsonl", strings.NewReader(c.input))
					if err != nil {
						return err
					}
					_, err = r.Next()
					return err
				},
			} {
				err := read()
				if !errors.Is(err, ErrNoEvents) {
					t.Fatalf("err = %v, want ErrNoEvents", err)
				}
				he := checkInputError(t, err, "h.jsonl")
				if he.Line != c.line || !strings.Contains(he.Msg, c.says) || !strings.HasPrefix(err.Error(), "h.jsonl:") {
					t.Fatalf("err = %q (line %d), want line %d, saying %q", err, he.Line, c.line, c.says)
				}
			}
		})
	}
	for _, in := range []string{"[]", "  [ ]\n"} {
		if _, err := ReadJepsen("j.json", strings.NewReader(in)); !errors.Is(err, ErrNoEvents) {
			t.Errorf("jepsen %q: err = %v, want ErrNoEvents", in, err)
		} else {
			checkInputError(t, err, "j.json")
		}
	}
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(path, []byte(`{"format":"fencecheck-history","version":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); !errors.Is(err, ErrNoEvents) || !strings.HasPrefix(err.Error(), path+":1:") {
		t.Fatalf("ReadFile: err = %v", err)
	}
}

// An Event of a million-event history is held a million times: its size is
// the history's memory. Grow it only knowingly (and then update the figure).
func TestEventSize(t *testing.T) {
	if n := unsafe.Sizeof(Event{}); n > 288 {
		t.Errorf("an Event takes %d bytes, up from 288", n)
	}
}

func TestSizeHint(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format":"fencecheck-history","version":1}` + "\n")
	for i := range 3000 {
		fmt.Fprintf(&b, `{"time":%d,"process":"w1","type":"info","f":"pause","value":{"target":"x"}}`+"\n\n", i)
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := sizeHint(f); n != 3001 { // the header is counted too
		t.Fatalf("sizeHint = %d, want 3001", n)
	}
	h, err := ReadAll(path, f)
	if err != nil || len(h.Events) != 3000 || cap(h.Events) != 3001 {
		t.Fatalf("err %v, %d events, capacity %d", err, len(h.Events), cap(h.Events))
	}
	if n := sizeHint(strings.NewReader(b.String())); n != 0 {
		t.Fatalf("sizeHint of a strings.Reader = %d", n)
	}
}

// Beyond the table of shared strings, strings are still read right.
func TestManyDistinctNames(t *testing.T) {
	var b strings.Builder
	const n = maxInterned + 5000
	for i := range n {
		fmt.Fprintf(&b, `{"time":0,"process":"p%d","type":"info","f":"pause","value":{"target":"t%d"}}`+"\n", i, i%7)
	}
	h, err := ReadAll("many", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range h.Events {
		if e.Process != fmt.Sprintf("p%d", i) || e.Value.Target != fmt.Sprintf("t%d", i%7) {
			t.Fatalf("event %d = %+v", i, e)
		}
	}
}

// TestErrorNamesFirstField reads lines with several faulty members again
// and again: the error must name the same one each time, the first as the
// line has them (invalid UTF-8) or the least pair in key order (a Jepsen
// key given twice), never the one a map's random order met first.
func TestErrorNamesFirstField(t *testing.T) {
	bad := "\x92\xad"
	var line strings.Builder
	line.WriteString(`{"format":"` + bad + `"`)
	for _, k := range []string{"at", "b", "c", "d", "e", "f", "g"} {
		line.WriteString(`,"` + k + `":"` + bad + `"`)
	}
	line.WriteString(`,"version":1}`)
	jepsen := `[{"type":"info","f":"pause","process":1,"time":1,":f":"pause",":type":"info",":time":1,":process":1}]`
	for range 40 {
		_, err := ReadAll("u.jsonl", strings.NewReader(line.String()+"\n"))
		if he := checkInputError(t, err, "u.jsonl"); he.Field != "format" {
			t.Fatalf("invalid UTF-8 in every member: the error names %q, want the first, \"format\": %v", he.Field, err)
		}
		_, err = ReadJepsen("j.json", strings.NewReader(jepsen))
		if he := checkInputError(t, err, "j.json"); he.Field != "f" || !strings.Contains(he.Msg, `as ":f" and "f"`) {
			t.Fatalf("four keys given twice: the error names %q (%s), want the least, \"f\"", he.Field, he.Msg)
		}
	}
}
