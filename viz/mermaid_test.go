package viz

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

func mermaidOf(t *testing.T, h *history.History, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Mermaid(&b, h, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	participantLine = regexp.MustCompile(`^    participant ([A-Za-z][A-Za-z0-9_]*)(?: as (.+))?$`)
	messageLine     = regexp.MustCompile(`^ +([A-Za-z][A-Za-z0-9_]*)(->>|-->>|--x|--\))([A-Za-z][A-Za-z0-9_]*): (.+)$`)
	noteLine        = regexp.MustCompile(`^ +Note over ([A-Za-z][A-Za-z0-9_]*)(?:,([A-Za-z][A-Za-z0-9_]*))?: (.+)$`)
	// safeText is label text with no character Mermaid's grammar reads: any
	// '#' or ';' only inside an entity code.
	safeText = regexp.MustCompile(`^(?:[^#;<>&"%{}\\` + "`" + `]|#[0-9]+;)+$`)
)

// parseMermaid checks the structure of a diagram line by line and returns
// its participants (id -> label) in order, and its message and note texts.
func parseMermaid(t *testing.T, src string) (ids []string, labels map[string]string, texts []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if lines[0] != "sequenceDiagram" {
		t.Fatalf("first line %q", lines[0])
	}
	labels = map[string]string{}
	depth, body := 0, false
	for n, l := range lines[1:] {
		known := func(id string) {
			if _, ok := labels[id]; !ok && id != "" {
				t.Errorf("line %d: undeclared participant %q: %s", n+2, id, l)
			}
		}
		switch m := participantLine.FindStringSubmatch(l); {
		case m != nil:
			if _, dup := labels[m[1]]; dup {
				t.Errorf("participant %s declared twice", m[1])
			}
			if body {
				t.Errorf("line %d: participant after the first message", n+2)
			}
			ids = append(ids, m[1])
			labels[m[1]] = m[1]
			if m[2] != "" {
				labels[m[1]] = m[2]
				texts = append(texts, m[2])
			}
		case strings.HasPrefix(l, "    title "), strings.HasPrefix(l, "    %% "):
			texts = append(texts, l[strings.Index(l[4:], " ")+5:])
		case l == "    rect rgb(255, 215, 215)":
			depth, body = depth+1, true
		case l == "    end":
			depth--
			if depth < 0 {
				t.Fatalf("line %d: end without rect", n+2)
			}
		default:
			body = true
			if m := messageLine.FindStringSubmatch(l); m != nil {
				known(m[1])
				known(m[3])
				texts = append(texts, m[4])
			} else if m := noteLine.FindStringSubmatch(l); m != nil {
				known(m[1])
				known(m[2])
				texts = append(texts, m[3])
			} else {
				t.Errorf("line %d: not a participant, message, note or rect: %q", n+2, l)
			}
		}
	}
	if depth != 0 {
		t.Error("unbalanced rect")
	}
	for _, x := range texts {
		if !safeText.MatchString(x) {
			t.Errorf("unsanitized text %q", x)
		}
	}
	return ids, labels, texts
}

func TestMermaidStructure(t *testing.T) {
	cases := []struct {
		file string
		ids  string
	}{
		{"takeover", "coordinator w1 w2 sink"},
		{"fencing-violation", "coordinator w1 w2 sink nemesis"},
		{"faults", "coordinator reader_1___x_ w1 w2 sink nemesis"},
	}
	for _, c := range cases {
		src := mermaidOf(t, load(t, c.file), Options{})
		ids, labels, texts := parseMermaid(t, src)
		if strings.Join(ids, " ") != c.ids {
			t.Errorf("%s: participants %q, want %q", c.file, ids, c.ids)
		}
		h := load(t, c.file)
		// One line per event, plus notes for lease expiries and open ops.
		if len(texts) < len(h.Events) {
			t.Errorf("%s: %d statements for %d events", c.file, len(texts), len(h.Events))
		}
		if c.file == "faults" && labels["reader_1___x_"] != "reader#35;1#59; #60;x#62;" {
			t.Errorf("label %q", labels["reader_1___x_"])
		}
	}
}

func TestMermaidContent(t *testing.T) {
	src := mermaidOf(t, load(t, "takeover"), Options{})
	for _, want := range []string{
		"    w1->>coordinator: t=0 acquire ttl=5 inc=1 req=w1-1\n",
		"    coordinator->>sink: t=0 advance\n",
		"    sink-->>coordinator: t=9 advance fence→2\n",
		"    coordinator-->>w2: t=10 acquire → token=2\n",
		"    Note over w1: t=4 pause\n",
		"    Note over w1: t=8 lease token=1 expires\n",
		"    sink--xw1: t=13 write token=1 → fenced\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("diagram lacks %q", want)
		}
	}
	// The expiry note comes before the first event at or after the deadline.
	if i, j := strings.Index(src, "t=8 lease token=1 expires"), strings.Index(src, "t=9 acquire"); i < 0 || i > j {
		t.Error("expiry note out of order")
	}
	src = mermaidOf(t, load(t, "faults"), Options{})
	for _, want := range []string{
		"    coordinator--)w2: t=150 acquire → ? (info) @job-2\n",
		"    Note over w2: t=5 partition (by nemesis)\n",
		"    Note over nemesis: t=150 heal\n",
		"    Note over w1: renew token=1 inc=1 @job-1 still open at the end (counts as info)\n",
		"#60;script#62;alert(1)#60;/script#62;",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("diagram lacks %q", want)
		}
	}
}

func TestMermaidViolations(t *testing.T) {
	opt := Options{Violations: append(fencingViolation,
		spec.Violation{Invariant: "linearizable-sink", Message: "no linearization; see #3", Events: nil})}
	src := mermaidOf(t, load(t, "fencing-violation"), opt)
	parseMermaid(t, src)
	if n := strings.Count(src, "    rect rgb(255, 215, 215)\n"); n != 2 {
		t.Errorf("%d highlighted events, want 2", n)
	}
	want := "    rect rgb(255, 215, 215)\n        sink-->>w1: t=13 write token=1 → written\n    end\n" +
		"    Note over coordinator,sink: VIOLATION fencing @job-1: write token=1 accepted after grant token=2 was observed\n"
	if !strings.Contains(src, want) {
		t.Errorf("violation not marked after its last event:\n%s", src)
	}
	if !strings.HasSuffix(src, "    Note over coordinator,nemesis: VIOLATION linearizable-sink: no linearization#59; see #35;3\n") {
		t.Errorf("a violation without events is not noted over everyone at the end:\n%s", src)
	}
}

func TestMermaidIDs(t *testing.T) {
	h, err := history.ReadAll("x", strings.NewReader(`{"time":0,"process":"end","type":"info","f":"pause"}
{"time":0,"process":"Note-taker","type":"info","f":"pause"}
{"time":0,"process":"9lives","type":"info","f":"pause"}
{"time":0,"process":"a b","type":"info","f":"pause"}
{"time":0,"process":"a_b","type":"info","f":"pause"}
{"time":0,"process":"participant","type":"info","f":"pause"}
{"time":0,"process":"x%%y","type":"info","f":"pause"}`))
	if err != nil {
		t.Fatal(err)
	}
	src := mermaidOf(t, h, Options{Title: "a;b#c\nd"})
	ids, labels, _ := parseMermaid(t, src)
	if got := strings.Join(ids, " "); got != "p_9lives p_Note_taker a_b a_b_2 p_end p_participant x__y" {
		t.Errorf("ids %q", got)
	}
	if labels["a_b_2"] != "a_b" || labels["a_b"] != "a b" || labels["x__y"] != "x#37;#37;y" {
		t.Errorf("labels %q", labels)
	}
	if !strings.Contains(src, "    title a#59;b#35;c d\n") {
		t.Errorf("title not sanitized:\n%s", src)
	}
}
