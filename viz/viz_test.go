package viz

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

func load(t *testing.T, name string) *history.History {
	t.Helper()
	h, err := history.ReadFile("testdata/" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// fencingViolation is what the checker reports on testdata/fencing-violation:
// the grant of token=2 (event 9) and the accepted write with token=1 (11).
var fencingViolation = []spec.Violation{{Invariant: spec.Fencing, Resource: "job-1",
	Message: "write token=1 accepted after grant token=2 was observed", Events: []int{9, 11}}}

func render(t *testing.T, h *history.History, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, h, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// between returns the text of s from the first from to the next to.
func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("no %q in output", from)
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		t.Fatalf("no %q after %q", to, from)
	}
	return s[i : i+j]
}

var laneName = regexp.MustCompile(`<text x="\d+" y="21" class="hname">(?:<title>[^<]*</title>)?([^<]*)</text>`)

func lanes(t *testing.T, page string) []string {
	head := between(t, page, `<div class="head">`, `</svg>`)
	var names []string
	for _, m := range laneName.FindAllStringSubmatch(head, -1) {
		names = append(names, m[1])
	}
	return names
}

func TestHTMLLanes(t *testing.T) {
	cases := []struct {
		file  string
		lanes []string
	}{
		{"takeover", []string{"coordinator", "w1", "w2", "sink"}},
		{"fencing-violation", []string{"coordinator", "w1", "w2", "sink", "nemesis"}},
		{"faults", []string{"coordinator", "reader#1; &lt;x&gt;", "w1", "w2", "sink", "nemesis"}},
	}
	for _, c := range cases {
		got := lanes(t, render(t, load(t, c.file), Options{}))
		if fmt.Sprint(got) != fmt.Sprint(c.lanes) {
			t.Errorf("%s: lanes %q, want %q", c.file, got, c.lanes)
		}
	}
}

func TestNaturalOrder(t *testing.T) {
	h, err := history.ReadAll("x", strings.NewReader(`{"time":0,"process":"w10","type":"info","f":"pause"}
{"time":0,"process":"w2","type":"info","f":"pause"}
{"time":0,"process":"a","type":"info","f":"pause"}
{"time":0,"process":"w02","type":"info","f":"pause"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := lanes(t, render(t, h, Options{})); fmt.Sprint(got) != "[a w2 w02 w10]" {
		t.Fatalf("lanes %q", got)
	}
}

// element returns the SVG element with the given id attribute.
func element(t *testing.T, page, id string) string {
	t.Helper()
	re := regexp.MustCompile(`<[a-z]+ [^>]*id="` + regexp.QuoteMeta(id) + `"[^>]*>`)
	m := re.FindAllString(page, -1)
	if len(m) != 1 {
		t.Fatalf("%d elements with id %q", len(m), id)
	}
	return m[0]
}

func TestHTMLHighlightsViolations(t *testing.T) {
	page := render(t, load(t, "fencing-violation"), Options{Violations: fencingViolation})
	for _, ev := range []string{"ev-9", "ev-11"} {
		if e := element(t, page, ev); !strings.Contains(e, " viol\"") {
			t.Errorf("%s is not marked: %s", ev, e)
		}
	}
	for _, ev := range []string{"ev-0", "ev-4", "ev-10", "ev-12"} {
		if e := element(t, page, ev); strings.Contains(e, "viol") {
			t.Errorf("%s is marked: %s", ev, e)
		}
	}
	rows := regexp.MustCompile(`<rect [^>]*class="hlrow" data-event="(\d+)" data-violation="fencing"`).FindAllStringSubmatch(page, -1)
	if len(rows) != 2 || rows[0][1] != "9" || rows[1][1] != "11" {
		t.Errorf("highlighted rows %q, want events 9 and 11", rows)
	}
	banner := between(t, page, `<section class="banner bad"`, `</section>`)
	for _, want := range []string{`<span class="inv">fencing</span>`, "on <b>job-1</b>",
		"write token=1 accepted after grant token=2 was observed", `<a href="#ev-9">#9</a>`, `<a href="#ev-11">#11</a>`} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	if strings.Contains(render(t, load(t, "fencing-violation"), Options{}), " viol\"") {
		t.Error("marks without violations")
	}
}

func TestHTMLBadViolationIndexes(t *testing.T) {
	page := render(t, load(t, "takeover"), Options{Violations: []spec.Violation{
		{Invariant: "x", Message: "m", Events: []int{-1, 99, 3}}}})
	if !strings.Contains(page, "#99 (not in the history)") || !strings.Contains(page, "2 violation event index(es) are outside") {
		t.Error("indexes outside the history are not reported")
	}
	if e := element(t, page, "ev-3"); !strings.Contains(e, "viol") {
		t.Errorf("event 3 not marked: %s", e)
	}
}

func TestHTMLLabels(t *testing.T) {
	page := render(t, load(t, "takeover"), Options{})
	for _, want := range []string{
		"acquire → token=1", "grant token=2 → w2", "advance fence→2", "fence→2",
		"renew token=1 → ok", "write token=2 → written", "write token=1 → fenced", "token=1 fenced",
		"release token=2 → ok", `class="bar fail"`, `href="#f-pause"`, `href="#f-resume"`,
		`class="span pause"`, "t=13", "&#43;5",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// A fenced write is red, on the caller's lane and on the sink's.
	if n := strings.Count(page, `class="lbl t-fail">`); n != 2 {
		t.Errorf("%d red labels, want 2", n)
	}
}

func TestHTMLLeases(t *testing.T) {
	// Granted at t=1 with ttl 5 and renewed at t=3: valid until 8. w2's
	// lease is released before its deadline: no expiry is drawn.
	page := render(t, load(t, "takeover"), Options{})
	if !strings.Contains(page, "token=1 expires t=8") {
		t.Error("w1's renewed lease does not expire at t=8")
	}
	if strings.Contains(page, "token=2 expires") {
		t.Error("a released lease is drawn as expiring")
	}
	if !strings.Contains(page, "lease token=2: from t=10 (#10), ttl=5, deadline t=15; released at #17") {
		t.Error("w2's lease tooltip is missing")
	}
	page = render(t, load(t, "fencing-violation"), Options{})
	for _, want := range []string{"token=1 expires t=6", "token=2 expires t=15"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// A deadline after the last event is drawn open.
	page = render(t, load(t, "faults"), Options{})
	if !strings.Contains(page, "token=1 expires t=102") {
		t.Error("the faults history's lease")
	}
}

func TestHTMLFaultsAndOpenOps(t *testing.T) {
	page := render(t, load(t, "faults"), Options{})
	for _, want := range []string{
		`href="#f-partition"`, `href="#f-heal"`, `href="#f-drop"`, `href="#f-duplicate"`, `href="#f-crash"`,
		`href="#f-restart"`, `href="#f-clock"`, `class="span partition"`, `class="span crash"`,
		`class="bar info"`, `class="bar open"`, `class="openend"`, `class="arr nem"`, "clock -20 w1", "@job-2",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestHTMLEscapes(t *testing.T) {
	h := load(t, "faults") // a payload and the note carry <script>alert(1)</script>
	page := render(t, h, Options{
		Title:      `<img src=x onerror=alert(1)>`,
		Violations: []spec.Violation{{Invariant: `<b>x</b>`, Message: `"><script>alert(2)</script>`, Events: []int{9}}},
		Links:      []Link{{Text: "porcupine", Href: "javascript:alert(3)"}, {Text: "model <i>", Href: "porcupine.html"}},
	})
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d script elements, want only the page's own", n)
	}
	for _, bad := range []string{"<img", "<b>x</b>", "javascript:", "<i>"} {
		if strings.Contains(page, bad) {
			t.Errorf("unescaped %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;",
		`href="porcupine.html"`, "model &lt;i&gt;", "reader#1; &lt;x&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestHTMLDeterministic(t *testing.T) {
	for _, name := range []string{"takeover", "fencing-violation", "faults"} {
		opt := Options{Violations: append(fencingViolation, spec.Violation{Invariant: "b", Message: "m", Events: []int{3, 9, 1}})}
		a, b := render(t, load(t, name), opt), render(t, load(t, name), opt)
		if a != b {
			t.Errorf("%s: two renderings differ", name)
		}
		var m1, m2 bytes.Buffer
		if err := Mermaid(&m1, load(t, name), opt); err != nil {
			t.Fatal(err)
		}
		if err := Mermaid(&m2, load(t, name), opt); err != nil {
			t.Fatal(err)
		}
		if m1.String() != m2.String() {
			t.Errorf("%s: two Mermaid renderings differ", name)
		}
	}
}

func TestHTMLHeader(t *testing.T) {
	h := load(t, "fencing-violation")
	page := render(t, h, Options{Title: "counterexample", Links: []Link{{Text: "linearizability", Href: "lin.html"}}})
	for _, want := range []string{"<title>counterexample</title>", "variant <b>check-then-write</b>", "seed <b>7</b>",
		"expected to violate <b>fencing</b>", `<a href="lin.html">linearizability</a>`, "w1&#39;s stale write",
		"No violation to highlight."} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	page = render(t, h, Options{Variant: "other", Seed: 99, Note: "mine"})
	for _, want := range []string{"variant <b>other</b>", "seed <b>99</b>", `<p class="note">mine</p>`} {
		if !strings.Contains(page, want) {
			t.Errorf("options do not override the header: lacks %q", want)
		}
	}
}

// long builds a history of n events: reads by two workers.
func long(n int) *history.History {
	h := &history.History{}
	for i := 0; i < n; i++ {
		p := "w" + fmt.Sprint(1+i/2%2)
		e := history.Event{Time: int64(i / 4), Process: p, F: history.Read, Resource: "r", Index: int64(i)}
		if i%2 == 0 {
			e.Type, e.Value = history.Invoke, history.Value{ResultID: "r"}
		} else {
			e.Type = history.OK
		}
		h.Events = append(h.Events, e)
	}
	return h
}

func TestHTMLTruncates(t *testing.T) {
	h := long(8000)
	page := render(t, h, Options{MaxEvents: 1000, Violations: []spec.Violation{{Invariant: "fencing", Message: "late", Events: []int{7001, 7003}}}})
	if !strings.Contains(page, "The history has 8000 events: showing #6751–#7750 only.") {
		t.Errorf("no truncation note")
	}
	if strings.Contains(page, `id="ev-6750"`) || strings.Contains(page, `id="ev-7751"`) || !strings.Contains(page, `id="ev-6751"`) {
		t.Error("window is not #6751–#7750")
	}
	if e := element(t, page, "ev-7003"); !strings.Contains(e, "viol") {
		t.Errorf("violation outside the window: %s", e)
	}
	// Without a violation the window starts at the beginning; a page of a
	// thousand events stays under a megabyte.
	page = render(t, h, Options{MaxEvents: 1000})
	if !strings.Contains(page, "showing #0–#999 only.") {
		t.Error("window does not start at 0")
	}
	if len(page) > 1<<20 {
		t.Errorf("page of %d bytes for 1000 events", len(page))
	}
}

func TestHTMLEmpty(t *testing.T) {
	page := render(t, &history.History{}, Options{})
	if !strings.Contains(page, "<b>0</b> events") || !strings.HasSuffix(page, "</html>\n") {
		t.Error("empty history")
	}
}

func TestNemesisTargetGetsLane(t *testing.T) {
	h, err := history.ReadAll("x", strings.NewReader(`{"time":0,"process":"nemesis","type":"info","f":"pause","value":{"target":"w9"}}
{"time":4,"process":"nemesis","type":"info","f":"crash","value":{"target":"coordinator"}}`))
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, h, Options{})
	if got := lanes(t, page); fmt.Sprint(got) != "[coordinator w9 nemesis]" {
		t.Errorf("lanes %q", got)
	}
	if !strings.Contains(page, `class="span pause"`) || !strings.Contains(page, `class="span crash"`) || !strings.Contains(page, "<b>1</b> processes") {
		t.Error("the nemesis's targets are not drawn")
	}
}

func TestHTMLWideTimes(t *testing.T) {
	h, err := history.ReadAll("x", strings.NewReader(`{"time":1700000000123456789,"process":"w1","type":"info","f":"pause"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<text x="(\d+)" y="\d+" class="time end">t=1700000000123456789</text>`).FindStringSubmatch(render(t, h, Options{}))
	if m == nil {
		t.Fatal("no time label")
	}
	if x, _ := strconv.Atoi(m[1]); x < 7*len("t=1700000000123456789")+20 {
		t.Errorf("time label ends at x=%d: it overlaps the event index", x)
	}
}
