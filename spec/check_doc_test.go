package spec

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocExamples checks every example of docs/invariants.md: each section
// on an invariant has a jsonl history and a verdict line naming the
// invariant, the events and the message that Check must report.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/invariants.md")
	if err != nil {
		t.Fatal(err)
	}
	verdict := regexp.MustCompile("(?s)Verdict: `([a-z-]+)` \\[([0-9 ]*)\\] `(.*?)`")
	sections := strings.Split(string(doc), "\n## `")[1:]
	if len(sections) != len(Invariants) {
		t.Fatalf("%d invariant sections, want %d", len(sections), len(Invariants))
	}
	for i, sec := range sections {
		id := sec[:strings.Index(sec, "`")]
		if id != Invariants[i].ID {
			t.Errorf("section %d is %q, want %q (the order of Invariants)", i, id, Invariants[i].ID)
		}
		a := strings.Index(sec, "```jsonl\n")
		b := strings.Index(sec, "\n```\n")
		m := verdict.FindStringSubmatch(sec)
		if a < 0 || b < a || m == nil {
			t.Errorf("section %s: no example or no verdict", id)
			continue
		}
		rep := Check(parse(t, sec[a+len("```jsonl\n"):b+1]), Options{})
		found := false
		for _, v := range rep.Violations {
			if v.Invariant == m[1] && strings.Trim(fmt.Sprint(v.Events), "[]") == m[2] && v.Message == m[3] {
				found = true
			}
		}
		if m[1] != id || !found {
			t.Errorf("section %s: the verdict %q is not in the report:", id, m[0])
			for _, v := range rep.Violations {
				t.Errorf("  %s %v %s", v.Invariant, v.Events, v.Message)
			}
		}
	}
}
