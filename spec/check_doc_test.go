package spec

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocExamples checks every example of docs/invariants.md: each section
// on an invariant has one or more jsonl histories, each followed by a
// verdict line: either the invariant, the events and the message that Check
// must report, or "Verdict: no `id`" for a history in which Check must not
// report the invariant. The brute force (brute_test.go), run on each resource
// alone, must find every invariant Check reports certain on that resource:
// the examples are differential cases too.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/invariants.md")
	if err != nil {
		t.Fatal(err)
	}
	verdict := regexp.MustCompile("(?s)^Verdict: `([a-z-]+)` \\[([0-9 ]*)\\] `(.*?)`")
	clean := regexp.MustCompile("^Verdict: no `([a-z-]+)`")
	sections := strings.Split(string(doc), "\n## `")[1:]
	if len(sections) != len(Invariants) {
		t.Fatalf("%d invariant sections, want %d", len(sections), len(Invariants))
	}
	for i, sec := range sections {
		id := sec[:strings.Index(sec, "`")]
		if id != Invariants[i].ID {
			t.Errorf("section %s is %q, want %q (the order of Invariants)", fmt.Sprint(i), id, Invariants[i].ID)
		}
		blocks := strings.Split(sec, "```jsonl\n")[1:]
		if len(blocks) == 0 {
			t.Errorf("section %s: no example", id)
		}
		for k, blk := range blocks {
			b := strings.Index(blk, "\n```\n")
			if b < 0 {
				t.Errorf("section %s, example %d: unterminated", id, k+1)
				continue
			}
			rest := blk[b+len("\n```\n"):]
			v := strings.Index(rest, "Verdict: ")
			if v < 0 {
				t.Errorf("section %s, example %d: no verdict", id, k+1)
				continue
			}
			rest = rest[v:]
			h := parse(t, blk[:b+1])
			rep := Check(h, Options{})
			brute := bruteByResource(h, 200000)
			for _, v := range rep.Violations {
				b, _ := verdictOn(brute, v.Resource)
				if c, decided := b.certain[v.Invariant]; decided && !c {
					t.Errorf("section %s, example %d: %s reported on %s, but the brute force finds a timing without it", id, k+1, v.Invariant, v.Resource)
				} else if !decided {
					t.Errorf("section %s, example %d: the brute force cannot decide %s on %s (%v)", id, k+1, v.Invariant, v.Resource, b.unknown)
				}
			}
			if m := clean.FindStringSubmatch(rest); m != nil {
				for _, v := range rep.Violations {
					if v.Invariant == m[1] {
						t.Errorf("section %s, example %d: %s reported: %v %s", id, k+1, m[1], v.Events, v.Message)
					}
				}
				continue
			}
			m := verdict.FindStringSubmatch(rest)
			if m == nil {
				t.Errorf("section %s, example %d: the verdict does not parse", id, k+1)
				continue
			}
			found := false
			for _, v := range rep.Violations {
				if v.Invariant == m[1] && strings.Trim(fmt.Sprint(v.Events), "[]") == m[2] && v.Message == m[3] {
					found = true
				}
			}
			if m[1] != id || !found {
				t.Errorf("section %s, example %d: the verdict %q is not in the report:", id, k+1, m[0])
				for _, v := range rep.Violations {
					t.Errorf("  %s %v %s", v.Invariant, v.Events, v.Message)
				}
			}
		}
	}
}
