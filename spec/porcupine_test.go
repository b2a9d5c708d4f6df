package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/history/simulate"
)

func TestEndToEndModel(t *testing.T) {
	// The reference protocol behaves as the ideal object, including the
	// stale write accepted after expiry without takeover (the object knows
	// no deadlines), and a request retried after a lost grant.
	h := parse(t, clean+`{"time":40,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":10}}
{"time":40,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":40,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":3}}
{"time":41,"process":"w3","type":"info","f":"acquire","resource":"job","value":{}}
{"time":42,"process":"w3","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w3","incarnation":1,"requestId":"c1","ttl":10}}
{"time":42,"process":"w3","type":"ok","f":"acquire","resource":"job","value":{"token":3}}
{"time":60,"process":"w3","type":"invoke","f":"write","resource":"job","value":{"token":3,"resultId":"r2","payload":"b"}}
{"time":60,"process":"w3","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`)
	ops := EndToEndOperations(h, "job")
	if len(ops) != 7 { // 3 grants, 3 accepted writes, 1 read
		t.Errorf("%d end-to-end operations, want 7", len(ops))
	}
	if !porcupine.CheckOperations(EndToEndModel(false), ops) {
		t.Error("the reference protocol's history is not linearizable end to end")
	}

	// grant-before-fence: the stale write with token 1 is accepted after
	// token 2 was granted; no atomic fenced object does that, although the
	// sink alone (whose fence was still 1) is linearizable.
	h = parse(t, grant1+release1+`{"time":2,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":100}}
{"time":2,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":3,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r1","payload":"a"}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":4,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":4,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
`)
	if porcupine.CheckOperations(EndToEndModel(false), EndToEndOperations(h, "job")) {
		t.Error("grant-before-fence is linearizable end to end")
	}
	if !porcupine.CheckOperations(SinkModel(false), SinkOperations(h, "job")) {
		t.Error("grant-before-fence's sink is not linearizable")
	}
}

// TestFailedAdvanceHasNoEffect: a raise of the fence that finds a newer
// holder's raise already there is recorded as a failed advance
// (docs/real-systems.md) and had no effect. The sink stays linearizable;
// a CI run of realdb's Redis workers once reported it as a violation,
// counting the failed advance as one that returned token 0.
func TestFailedAdvanceHasNoEffect(t *testing.T) {
	h := parse(t, `{"format":"fencecheck-history","version":1,"expect":[]}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":10}}
{"time":1,"process":"w1/fence","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":20,"process":"w2","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":10}}
{"time":21,"process":"w2/fence","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":22,"process":"w2/fence","type":"ok","f":"advance","resource":"job","value":{"token":2}}
{"time":23,"process":"w2","type":"ok","f":"acquire","resource":"job","value":{"token":2}}
{"time":24,"process":"w2","type":"invoke","f":"write","resource":"job","value":{"token":2,"resultId":"r","payload":"b"}}
{"time":25,"process":"w2","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":30,"process":"w1/fence","type":"fail","f":"advance","resource":"job","value":{"error":"fenced"}}
{"time":31,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
{"time":32,"process":"w1","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":33,"process":"w1","type":"ok","f":"read","resource":"job","value":{"payload":"b"}}
`)
	ops := SinkOperations(h, "job")
	if len(ops) != 3 { // the advance to 2, the write, the read
		t.Errorf("%d sink operations, want 3 (the failed advance left out)", len(ops))
	}
	if !porcupine.CheckOperations(SinkModel(false), ops) {
		t.Error("a failed advance made the sink not linearizable")
	}
	for _, v := range Check(h, Options{}).Violations {
		t.Errorf("violated %s: %s", v.Invariant, v.Message)
	}
}

func TestSinkLinearizationVisualize(t *testing.T) {
	h := parse(t, grant1+`{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r","payload":"a"}}
{"time":1,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
{"time":2,"process":"w2","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":2,"process":"w2","type":"ok","f":"read","resource":"job","value":{"payload":null}}
{"time":3,"process":"w3","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"q","payload":"b"}}
`)
	m, res, info := SinkLinearization(h, "job", 0)
	if res != porcupine.Illegal {
		t.Fatalf("result %v, want Illegal", res)
	}
	var out bytes.Buffer
	if err := porcupine.Visualize(m, info, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`write(token=1, \"r\", \"a\") -\u003e written`, `read(\"r\") -\u003e null`, "fence=1", "w2: events 6-7"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("visualization lacks %q", want)
		}
	}
	// The open write of "q" is observed by nothing: it is left out.
	if ops := SinkOperations(h, "job"); len(ops) != 3 {
		t.Errorf("%d sink operations, want 3", len(ops))
	}
}

func TestSinkModelPartition(t *testing.T) {
	h := parse(t, strings.ReplaceAll(grant1, `"job"`, `"b"`)+strings.ReplaceAll(grant1, `"job"`, `"a"`))
	ops := append(SinkOperations(h, "b"), SinkOperations(h, "a")...)
	parts := SinkModel(false).Partition(ops)
	if len(parts) != 2 || parts[0][0].Input.(SinkInput).Resource != "a" || parts[1][0].Input.(SinkInput).Resource != "b" {
		t.Errorf("partitions %v", parts)
	}
	if !porcupine.CheckOperations(SinkModel(false), ops) {
		t.Error("two independent fences are not linearizable")
	}
}

// overlappingInfo builds n advances with unknown outcomes, all concurrent
// (they may take effect at any later instant), then a read that no state
// explains: porcupine must try all 2^n subsets of them before it can say
// there is no linearization.
func overlappingInfo(n int) string {
	var b strings.Builder
	b.WriteString(`{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
`)
	for i := range n {
		fmt.Fprintf(&b, `{"time":%d,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":%d,"process":"coordinator","type":"info","f":"advance","resource":"job","value":{}}
`, i+1, i+1)
	}
	fmt.Fprintf(&b, `{"time":%d,"process":"w1","type":"invoke","f":"read","resource":"job","value":{"resultId":"r"}}
{"time":%d,"process":"w1","type":"ok","f":"read","resource":"job","value":{"payload":"never written"}}
`, n+1, n+1)
	return b.String()
}

func TestTimeoutGivesUnknown(t *testing.T) {
	// 2^40 subsets cannot be searched in a millisecond on any machine, so
	// the verdict is always Unknown, never a violation and never OK by
	// default. (The search stops when the timeout cancels it.)
	rep := Check(parse(t, overlappingInfo(40)), Options{Timeout: time.Millisecond})
	if !slices.Equal(rep.Unknown, []string{LinearizableSink}) || len(rep.Violations) != 0 || !rep.OK {
		t.Errorf("report %+v, want no violation and linearizable-sink unknown", rep)
	}
	// With few of them and no bound, the search ends with a verdict.
	rep = Check(parse(t, overlappingInfo(6)), Options{})
	if ids := ids(rep); !slices.Equal(ids, []string{LinearizableSink}) || rep.Unknown != nil {
		t.Errorf("violated %v, unknown %v; want linearizable-sink only", ids, rep.Unknown)
	}
}

func TestCheckCapsViolations(t *testing.T) {
	// Seven stale writes accepted after the fence moved to 2: five are
	// listed, in event order, and two are counted as omitted.
	var b strings.Builder
	b.WriteString(grant1 + `{"time":1,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":1,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
`)
	for i := range 7 {
		fmt.Fprintf(&b, `{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r%d","payload":"a"}}
{"time":2,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, i)
	}
	rep := Check(parse(t, b.String()), Options{})
	var fencing []Violation
	for _, v := range rep.Violations {
		if v.Invariant == Fencing {
			fencing = append(fencing, v)
		}
	}
	if len(fencing) != MaxPerResource || rep.Omitted != 2 || rep.OK {
		t.Fatalf("%d fencing violations listed, %d omitted", len(fencing), rep.Omitted)
	}
	for i, v := range fencing {
		if want := []int{5, 6 + 2*i, 7 + 2*i}; !slices.Equal(v.Events, want) {
			t.Errorf("violation %d: events %v, want %v", i, v.Events, want)
		}
	}
}

func TestGeneratedHistoryHasNoFalseAlarm(t *testing.T) {
	// A correct simulation of the reference protocol, with info outcomes,
	// retries, crashes and expiries, violates nothing but the documented
	// non-guarantee. The history also survives the format's writer and
	// reader, and the report does not depend on the number of goroutines.
	h := simulate.Reference(7, 40000, 40, 12)
	var buf bytes.Buffer
	if err := history.Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	h2, err := history.ReadAll("generated", &buf)
	if err != nil {
		t.Fatalf("the generator wrote an invalid history: %v", err)
	}
	rep := Check(h2, Options{})
	for _, v := range rep.Violations {
		if v.Invariant != AbsoluteValidity {
			t.Errorf("false alarm: %s %s %v: %s", v.Invariant, v.Resource, v.Events, v.Message)
		}
	}
	if rep.Events != len(h.Events) || rep.Unknown != nil {
		t.Errorf("events %d (want %d), unknown %v", rep.Events, len(h.Events), rep.Unknown)
	}
	var info int
	for _, e := range h.Events {
		if e.Type == history.Info && history.IsOperation(e.F) {
			info++
		}
	}
	if info < 100 {
		t.Errorf("only %d info completions: the generator does not exercise unknown outcomes", info)
	}
	prev := runtime.GOMAXPROCS(1)
	one := Check(h2, Options{})
	runtime.GOMAXPROCS(prev)
	if !reflect.DeepEqual(one, rep) {
		t.Error("the report depends on GOMAXPROCS")
	}
}

// hostile is a string that runs script wherever a page inserts it as HTML
// rather than as text.
const hostile = `<img src=x onerror="alert(1)">'&`

// hostileHistory has hostile strings in every field that reaches porcupine's
// picture of the resource: process names, the resource, result ids,
// payloads, a failed read's error. Its sink has no linearization (the read
// returns a payload never written), so porcupine draws partial
// linearizations and the states they reach.
func hostileHistory(t *testing.T) (h *history.History, resource string) {
	t.Helper()
	q := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	r := strings.NewReplacer("W1", q("w1"+hostile), "R1", q("reader"+hostile), "RES", q("job/"+hostile),
		"RID", q("r"+hostile), "PAY", q("p"+hostile), "ERR", q("broken"+hostile))
	return parse(t, r.Replace(`{"time":0,"process":W1,"type":"invoke","f":"acquire","resource":RES,"value":{"owner":W1,"incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":RES,"value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":RES,"value":{"token":1}}
{"time":0,"process":W1,"type":"ok","f":"acquire","resource":RES,"value":{"token":1}}
{"time":1,"process":W1,"type":"invoke","f":"write","resource":RES,"value":{"token":1,"resultId":RID,"payload":PAY}}
{"time":1,"process":W1,"type":"ok","f":"write","resource":RES,"value":{"outcome":"written"}}
{"time":2,"process":R1,"type":"invoke","f":"read","resource":RES,"value":{"resultId":RID}}
{"time":2,"process":R1,"type":"fail","f":"read","resource":RES,"value":{"error":ERR}}
{"time":3,"process":R1,"type":"invoke","f":"read","resource":RES,"value":{"resultId":RID}}
{"time":3,"process":R1,"type":"ok","f":"read","resource":RES,"value":{"payload":PAY}}
{"time":4,"process":R1,"type":"invoke","f":"read","resource":RES,"value":{"resultId":RID}}
{"time":4,"process":R1,"type":"ok","f":"read","resource":RES,"value":{"payload":"other"}}
`)), "job/" + hostile
}

// porcupinePageData is the data porcupine's viewer draws, as embedded in
// its page.
type porcupinePageData struct {
	Partitions []struct {
		History []struct {
			Description, Metadata string
		}
		PartialLinearizations [][]struct{ StateDescription string }
	}
	Annotations []struct{ Tag, Description, Details, TextColor, BackgroundColor string }
}

// porcupinePage decodes the data embedded in a page porcupine.Visualize
// wrote (the JSON after "const data = ").
func porcupinePage(t *testing.T, page []byte) porcupinePageData {
	t.Helper()
	_, rest, ok := bytes.Cut(page, []byte("const data = "))
	if !ok {
		t.Fatal("porcupine's page embeds no data")
	}
	var d porcupinePageData
	if err := json.NewDecoder(bytes.NewReader(rest)).Decode(&d); err != nil {
		t.Fatalf("porcupine's embedded data: %v", err)
	}
	return d
}

// TestPorcupineVisualizeEscapesHistoryStrings: porcupine's viewer puts each
// operation's Metadata and each state's StateDescription into a tooltip as
// HTML (innerHTML), so the model escapes them: process names, result ids and
// payloads from the history must not open a tag there. (Descriptions,
// annotations and lane names are set as text: escaping them would show
// "&lt;".)
func TestPorcupineVisualizeEscapesHistoryStrings(t *testing.T) {
	h, resource := hostileHistory(t)
	m, res, info := SinkLinearization(h, resource, 0)
	if res != porcupine.Illegal {
		t.Fatalf("result %v, want Illegal", res)
	}
	var out bytes.Buffer
	if err := porcupine.Visualize(m, info, &out); err != nil {
		t.Fatal(err)
	}
	d := porcupinePage(t, out.Bytes())
	var htmls []string // the strings the viewer inserts as HTML
	for _, p := range d.Partitions {
		for _, e := range p.History {
			htmls = append(htmls, e.Metadata)
			if strings.Contains(e.Description, "&lt;") || strings.Contains(e.Description, "&#") {
				t.Errorf("description %q is escaped, but the viewer shows it as text", e.Description)
			}
		}
		for _, lin := range p.PartialLinearizations {
			for _, s := range lin {
				htmls = append(htmls, s.StateDescription)
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range htmls {
		if strings.ContainsAny(s, `<>"'`) {
			t.Errorf("%q goes into the page as HTML unescaped", s)
		}
		for _, who := range []string{"w1", "reader", `"r`, `"p`} { // process names, a result id, a payload (quoted)
			if strings.Contains(html.UnescapeString(s), who+`<img src=x onerror=`) {
				seen[who] = true
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("the hostile strings do not all reach the HTML strings (found %d of 4): the test proves nothing", len(seen))
	}
}
