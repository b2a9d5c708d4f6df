package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jepsenArray is a pretty-printed Jepsen history in JSON, using keywords with
// and without colons, integer processes, the nemesis, a jepsen.independent
// pair and Jepsen's top-level :error.
const jepsenArray = `[
  {":type": ":invoke", ":f": ":acquire", ":process": 0, ":time": 1000, ":index": 0,
   ":value": {":owner": "w0", ":incarnation": 1, ":request-id": "q1", ":ttl": 5000000000, ":resource": "job-1"}},
  {"type": "ok", "f": "acquire", "process": 0, "time": 2000, "index": 1,
   "value": ["job-1", {"token": 7}]},
  {"type": "info", "f": "pause", "process": "nemesis", "time": 2500, "index": 2, "value": {"target": 0}},
  {"type": "invoke", "f": "write", "process": 1, "time": 3000, "index": 3, "resource": "job-1",
   "value": {"token": 7, "result-id": "r1", "payload": "done"}},
  {"type": "fail", "f": "write", "process": 1, "time": 4000, "index": 4, "resource": "job-1",
   "value": {"key": "job-1"}, "error": ":fenced"}
]`

func TestReadJepsenArray(t *testing.T) {
	h, err := ReadJepsen("h.json", strings.NewReader(jepsenArray))
	if err != nil {
		t.Fatal(err)
	}
	if !h.HasHeader || h.Header.TimeUnit != "ns" {
		t.Fatalf("header = %+v", h.Header)
	}
	want := []Event{
		{Time: 1000, Process: "0", Type: Invoke, F: Acquire, Resource: "job-1", Index: 0, Line: 2,
			Value: Value{Owner: "w0", Incarnation: "1", RequestID: "q1", TTL: 5000000000}},
		{Time: 2000, Process: "0", Type: OK, F: Acquire, Resource: "job-1", Index: 1, Line: 4, Value: Value{Token: 7}},
		{Time: 2500, Process: "nemesis", Type: Info, F: Pause, Index: 2, Line: 6, Value: Value{Target: "0"}},
		{Time: 3000, Process: "1", Type: Invoke, F: Write, Resource: "job-1", Index: 3, Line: 7,
			Value: Value{Token: 7, ResultID: "r1", Payload: "done", HasPayload: true}},
		{Time: 4000, Process: "1", Type: Fail, F: Write, Resource: "job-1", Index: 4, Line: 9, Value: Value{Error: Fenced}},
	}
	if len(h.Events) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(h.Events), len(want), h.Events)
	}
	for i := range want {
		if h.Events[i] != want[i] {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, h.Events[i], want[i])
		}
	}
	// The converted history is one of this format.
	var out bytes.Buffer
	if err := Encode(&out, h); err != nil {
		t.Fatal(err)
	}
	h2, err := ReadAll("out", &out)
	if err != nil || h2.Header.TimeUnit != "ns" || len(h2.Events) != len(want) || h2.Events[3].Value != want[3].Value {
		t.Fatalf("re-read: %v %+v", err, h2)
	}
}

func TestReadJepsenLines(t *testing.T) {
	in := `{"type":"invoke","f":"advance","process":"coordinator","time":0,"resource":"r"}

{"type":"ok","f":"advance","process":"coordinator","time":5,"resource":"r","value":{"token":2}}
`
	h, err := ReadJepsen("h.jsonl", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 2 || h.Events[1].Line != 3 || h.Events[1].Value.Token != 2 || h.Events[1].Index != 1 {
		t.Fatalf("events = %+v", h.Events)
	}
}

func TestReadJepsenErrors(t *testing.T) {
	op := func(s string) string {
		return `{"type":"invoke","f":"write","process":1,"time":1,"resource":"r","value":{"token":1,"resultId":"x","payload":"p"}` + s + "}"
	}
	cases := []struct {
		name, input string
		line        int
		field, msg  string
	}{
		{"not json", "[\n{nope}]", 2, "", "not valid JSON"},
		{"op not object", "[\n1]", 2, "", "must be a JSON object"},
		{"process float", `[{"type":"info","f":"pause","process":1.5,"time":1}]`, 1, "process", "integer"},
		{"process both ways", `[{"type":"info","f":"pause","process":3,"time":1},` + "\n" + `{"type":"info","f":"pause","process":"3","time":1}]`, 2, "process", "both as an integer and as a string"},
		{"type not string", `[{"type":1,"f":"pause","process":1,"time":1}]`, 1, "type", "must be a string"},
		{"unknown f", `[{"type":"invoke","f":"txn","process":1,"time":1,"value":[[":w",1,1]]}]`, 1, "value", "jepsen.independent"},
		{"unknown f object value", `[{"type":"invoke","f":":txn","process":1,"time":1}]`, 1, "f", "unknown operation"},
		{"keyword and string key", `[{":f":"pause","f":"pause","type":"info","process":1,"time":1}]`, 1, "f", "given twice"},
		{"alias and name", `[` + op(``)[:len(op(``))-2] + `,"result-id":"y"}}]`, 1, "value.resultId", "given twice"},
		{"duplicate key", `[{"f":"pause","f":"pause","type":"info","process":1,"time":1}]`, 1, "f", "twice"},
		{"resources disagree", `[` + op(`,"value":["s",{}]`) + `]`, 1, "value", "occurs twice"},
		{"resources disagree 2", `[{"type":"invoke","f":"advance","process":1,"time":1,"resource":"r","value":{"key":"s"}}]`, 1, "value.key", "names resource"},
		{"fail error not string", `[` + op(``) + ",\n" + `{"type":"fail","f":"write","process":1,"time":2,"resource":"r","error":["fenced","x"]}]`, 2, "error", "reason must be a string"},
		{"second invoke", op(``) + "\n" + op(``), 2, "type", "still open"},
		{"time backwards", `{"type":"info","f":"pause","process":1,"time":5}` + "\n" + `{"type":"info","f":"pause","process":1,"time":4}`, 2, "time", "backwards"},
		{"missing value field", `{"type":"invoke","f":"read","process":1,"time":5,"resource":"r"}`, 1, "value.resultId", "missing"},
		{"trailing data", "[]\n{}", 2, "", "after the JSON array"},
		{"unclosed array", "[\n" + `{"type":"info","f":"pause","process":1,"time":5}`, 2, "", "not closed"},
		{"too long", `[{"type":"info","f":"pause","process":1,"time":5,"value":{"note":"` + strings.Repeat("x", MaxLine) + `"}}]`, 1, "", "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadJepsen("h.json", strings.NewReader(c.input))
			if err == nil {
				t.Fatal("read without error")
			}
			he := checkInputError(t, err, "h.json")
			if he.Line != c.line || he.Field != c.field || !strings.Contains(he.Msg, c.msg) {
				t.Fatalf("err = %q (line %d, field %q), want line %d, field %q, message with %q", err, he.Line, he.Field, c.line, c.field, c.msg)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	cases := []struct {
		head string
		want Dialect
	}{
		{"", Native},
		{"\n\n  [", Jepsen},
		{`{"format":"fencecheck-history","version":1}`, Native},
		{`{"time":0,"process":"w1","type":"info","f":"pause"}` + "\n" + `{"process":1}`, Native},
		{`{"time":0,"process":1,"type":"invoke","f":"read"}`, Jepsen},
		{`{"time":0,"process":"w","type":":invoke","f":"read"}`, Jepsen},
		{`{"time":0,"process":"w","type":"invoke","f":":read"}`, Jepsen},
		{`{":time":0}`, Jepsen},
		{`{"time":0,"process":"w","type":"invoke","f":"read","value":["k",{}]}`, Jepsen},
		{`not json`, Native},
	}
	for _, c := range cases {
		if got := Sniff([]byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q) = %s, want %s", c.head, got, c.want)
		}
	}
}

func TestReadAny(t *testing.T) {
	h, err := ReadAny("j", strings.NewReader("\n\n"+jepsenArray))
	if err != nil || len(h.Events) != 5 || h.Events[0].Line != 4 {
		t.Fatalf("jepsen: %v %+v", err, h)
	}
	h, err = ReadAny("n", strings.NewReader(sample))
	if err != nil || h.Header.Variant != "reference" || len(h.Events) != 11 {
		t.Fatalf("native: %v %+v", err, h)
	}
	if _, err = ReadAny("e", strings.NewReader("")); !errors.Is(err, ErrNoEvents) {
		t.Fatalf("empty: %v", err)
	}
	_, err = ReadAny("bad", strings.NewReader("\n"+`{"time":0,"process":1,"type":"info","f":"nap"}`))
	if he := checkInputError(t, err, "bad"); he.Line != 2 || he.Field != "f" {
		t.Fatalf("err = %v", err)
	}
}

// TestJepsenDocExample checks the example of docs/jepsen.md: its first JSON
// block, read as a Jepsen history and encoded, gives its second.
func TestJepsenDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "jepsen.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, ex, _ := strings.Cut(string(doc), "## Example")
	var blocks []string
	for {
		var block string
		var ok bool
		if _, ex, ok = strings.Cut(ex, "```json\n"); !ok {
			break
		}
		block, ex, _ = strings.Cut(ex, "```")
		blocks = append(blocks, block)
	}
	if len(blocks) != 2 {
		t.Fatalf("the example has %d JSON blocks, want 2", len(blocks))
	}
	h, err := ReadJepsen("example", strings.NewReader(blocks[0]))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Encode(&out, h); err != nil {
		t.Fatal(err)
	}
	if out.String() != blocks[1] {
		t.Fatalf("the example reads as\n%s\nnot as the document says\n%s", out.String(), blocks[1])
	}
}

// FuzzReadJepsen feeds arbitrary bytes to ReadJepsen: no panic, errors are
// *Error, and what reads is a history that Encode and ReadAll keep as it is.
// A longer run: go test ./history -run XXX -fuzz FuzzReadJepsen -fuzztime 5m -parallel 1
func FuzzReadJepsen(f *testing.F) {
	f.Add([]byte(jepsenArray))
	f.Add([]byte(`{"type":"invoke","f":"read","process":1,"time":5,"value":["r",{"resultId":"x"}]}` + "\n" +
		`{"type":"ok","f":"read","process":1,"time":6,"value":["r",{"payload":null}]}`))
	f.Add([]byte(`[{"type":"info","f":"pause","process":3,"time":1},{"type":"info","f":"pause","process":"3","time":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadJepsen("fuzz.json", bytes.NewReader(data))
		if err != nil {
			checkInputError(t, err, "fuzz.json")
			return
		}
		var out bytes.Buffer
		if err := Encode(&out, h); err != nil {
			t.Fatal(err)
		}
		h2, err := ReadAll("again", &out)
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, out.Bytes())
		}
		if h2.Header.TimeUnit != "ns" || len(h2.Events) != len(h.Events) {
			t.Fatalf("re-read: %+v", h2)
		}
		for i := range h.Events {
			a, b := h.Events[i], h2.Events[i]
			a.Line, b.Line = 0, 0
			if a != b {
				t.Fatalf("event %d changed:\n%+v\n%+v", i, a, b)
			}
		}
	})
}
