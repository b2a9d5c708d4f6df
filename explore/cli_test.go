package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/spec"
)

func TestHelpVerb(t *testing.T) {
	code, stdout, _ := explore(t, "help")
	if code != 0 || !strings.Contains(stdout, "usage: explore [VERB]") || !strings.Contains(stdout, "3  incomplete") {
		t.Fatalf("help: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, "help", "search")
	if code != 0 || !strings.Contains(stdout, "usage: explore search") || !strings.Contains(stdout, "--time") ||
		!strings.Contains(stdout, "exit status:") {
		t.Fatalf("help search: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := explore(t, "help", "nope"); code != exitUsage || stderr == "" {
		t.Fatalf("help nope: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"--help"}, {"check", "--help"}} {
		_, stdout, _ := explore(t, args...)
		for _, want := range []string{"0  nothing unexpected", "1  a violation", "2  usage or input error", "3  incomplete"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v does not document %q\n%s", args, want, stdout)
			}
		}
	}
}

// TestEveryVerbTakesHelpAndJSON: as the usage says, every verb, help
// included, takes --help (its usage, exit 0) and --json (one JSON object on
// standard output, nothing else there), --help --json too.
func TestEveryVerbTakesHelpAndJSON(t *testing.T) {
	type flagJSON struct{ Name, Default, Usage string }
	type helpJSON struct {
		Verb, Usage, Summary string
		Flags                []flagJSON
		ExitStatus           map[string]string
		Verbs                []struct{ Verb, Args, Summary string }
	}
	var all helpJSON
	for _, args := range [][]string{{"help", "--json"}, {"--help", "--json"}, {"help", "help", "--json"}} {
		code, stdout, _ := explore(t, args...)
		var got helpJSON
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != exitOK {
			t.Fatalf("%v: exit %d, not one JSON object: %v\n%s", args, code, err, stdout)
		}
		if len(got.Verbs) != len(verbs)+1 || got.Verbs[len(verbs)].Verb != "help" || len(got.ExitStatus) != 4 ||
			!strings.HasPrefix(got.ExitStatus["3"], "incomplete: stopped") || !strings.HasSuffix(got.ExitStatus["3"], "progress not checked") {
			t.Fatalf("%v: %+v", args, got)
		}
		all = got
	}
	for _, args := range [][]string{{"help", "--help"}, {"help", "help"}} {
		if code, stdout, _ := explore(t, args...); code != exitOK || !strings.Contains(stdout, "usage: explore [VERB]") {
			t.Errorf("%v: exit %d\n%s", args, code, stdout)
		}
	}
	for _, v := range all.Verbs[:len(verbs)] {
		for _, args := range [][]string{{"help", v.Verb, "--json"}, {v.Verb, "--help", "--json"}, {v.Verb, "--json", "--help"}} {
			code, stdout, _ := explore(t, args...)
			var got helpJSON
			if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != exitOK {
				t.Fatalf("%v: exit %d, not one JSON object: %v\n%s", args, code, err, stdout)
			}
			hasJSON := slices.ContainsFunc(got.Flags, func(f flagJSON) bool { return f.Name == "json" && f.Default == "false" })
			if got.Verb != v.Verb || !strings.HasPrefix(got.Usage, "explore "+v.Verb) || !hasJSON || len(got.ExitStatus) != 4 {
				t.Errorf("%v: %+v", args, got)
			}
		}
	}
}

func TestSearchWithoutVariant(t *testing.T) {
	code, stdout, stderr := explore(t, "search")
	if code != exitUsage || !strings.Contains(stderr, "--variant is required") || stdout != "" {
		t.Fatalf("exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
}

// TestErrorsUnderJSON: with --json an error is also one JSON object on
// standard output, with the file, line and field when known.
func TestErrorsUnderJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	body := `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"r","ttl":3}}
{"time":"soon","process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1}}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(t.TempDir(), "config.jsonl")
	if err := os.WriteFile(badConfig, []byte(`{"format":"fencecheck-history","version":1,"config":{"workers":9},"actions":["tick"]}
{"time":0,"process":"w1","type":"info","f":"pause"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	badExpect := filepath.Join(t.TempDir(), "expect.jsonl")
	if err := os.WriteFile(badExpect, []byte(`

{"format":"fencecheck-history","version":1,"expect":["fencing","fencng"]}
{"time":0,"process":"w1","type":"info","f":"pause"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	w99 := filepath.Join(t.TempDir(), "w99.jsonl")
	if err := os.WriteFile(w99, []byte(`{"format":"fencecheck-history","version":1,"variant":"reference","config":{"workers":2,"resources":1,"replicas":1,"ttl":3,"ops":2,"grants":2,"inFlight":2},"actions":["acquire w=99 r=0 c=0"]}
{"time":0,"process":"w1","type":"info","f":"pause"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ttlText := filepath.Join(t.TempDir(), "ttl.jsonl")
	if err := os.WriteFile(ttlText, []byte(`{"format":"fencecheck-history","version":1,"variant":"reference","config":{"workers":2,"ttl":"3"},"actions":["tick"]}
{"time":0,"process":"w1","type":"info","f":"pause"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	type jerr struct {
		Error string `json:"error"`
		File  string `json:"file"`
		Line  int    `json:"line"`
		Field string `json:"field"`
	}
	for _, c := range []struct {
		args []string
		want jerr
	}{
		{[]string{"check", "--json", path}, jerr{File: path, Line: 2, Field: "time"}},
		{[]string{"check", "--json", filepath.Dir(path)}, jerr{File: filepath.Dir(path)}},
		{[]string{"replay", "--json", badConfig}, jerr{File: badConfig, Line: 1, Field: "config"}},
		{[]string{"merge", "--json", badConfig}, jerr{File: badConfig}},
		{[]string{"search", "--json"}, jerr{}},
		{[]string{"search", "--json", "--variant", "nope"}, jerr{}},
		{[]string{"nope", "--json"}, jerr{}},
		{[]string{"check", "--json", badExpect}, jerr{File: badExpect, Line: 3, Field: "expect"}}, // a typo would expect nothing
		{[]string{"replay", "--json", badExpect}, jerr{File: badExpect, Line: 3, Field: "expect"}},
		{[]string{"replay", "--json", w99}, jerr{File: w99, Line: 1, Field: "actions[0]"}}, // no step of the machine
		{[]string{"replay", "--json", ttlText}, jerr{File: ttlText, Line: 1, Field: "config.ttl"}},
		{[]string{"help", "--json", "nope"}, jerr{}},
	} {
		code, stdout, stderr := explore(t, c.args...)
		var got jerr
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q, stdout not one JSON object: %v\n%s", c.args, code, stderr, err, stdout)
			continue
		}
		if got.Error == "" || got.File != c.want.File || got.Line != c.want.Line || got.Field != c.want.Field {
			t.Errorf("%v: %+v, want %+v", c.args, got, c.want)
		}
	}
}

// TestDirectoryArgument: a folder is an input error with no line number.
func TestDirectoryArgument(t *testing.T) {
	dir := t.TempDir()
	for _, verb := range []string{"check", "replay", "viz"} {
		code, _, stderr := explore(t, verb, dir)
		if code != exitUsage || !strings.Contains(stderr, dir+": is a directory") || strings.Contains(stderr, dir+":1") {
			t.Errorf("%s DIR: exit %d, stderr %q", verb, code, stderr)
		}
	}
}

func TestVariantsFit100Columns(t *testing.T) {
	code, stdout, _ := explore(t, "variants")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, l := range strings.Split(stdout, "\n") {
		if n := utf8.RuneCountInString(l); n > listWidth {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	for _, v := range designs.All() {
		if !strings.Contains(stdout, "\n"+v.Name+" ") && !strings.HasPrefix(stdout, v.Name+" ") {
			t.Errorf("variant %s is not listed", v.Name)
		}
	}
	long := variantRow{Name: "a-name-much-longer-than-any-built-in-variant-name", Summary: strings.Repeat("word ", 60), Violates: []string{"fencing"}}
	var b strings.Builder
	if err := printVariants(&b, []variantRow{long}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if utf8.RuneCountInString(l) > listWidth {
			t.Errorf("long name: %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
}

// fakeClock advances by step at every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time { c.t = c.t.Add(c.step); return c.t }

// TestProgressNotATerminal: when standard error is not a terminal, a
// report is a line of its own every env.every, and --quiet silences it.
func TestProgressNotATerminal(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0), step: time.Second}
	var errb strings.Builder
	m := newMeter(env{stderr: &errb, now: clock.now, every: 5 * time.Second}, false)
	calls := 0
	for range 12 { // the meter started at 1 s; the clock reads 2, 3, ..., 13 s
		m.update(func(el time.Duration) string { calls++; return "at " + el.String() })
	}
	m.done()
	if want := "progress: at 5s\nprogress: at 10s\n"; errb.String() != want || calls != 2 {
		t.Fatalf("got %q (%d lines made), want %q", errb.String(), calls, want)
	}
	errb.Reset()
	q := newMeter(env{stderr: &errb, now: clock.now, every: time.Second}, true)
	for range 10 {
		q.update(func(time.Duration) string { return "x" })
	}
	if errb.String() != "" {
		t.Fatalf("quiet: %q", errb.String())
	}
	tty := newMeter(env{stderr: &errb, tty: true, now: clock.now, every: time.Hour}, false)
	tty.update(func(time.Duration) string { return "x" })
	tty.done()
	if errb.String() != "\r\033[Kx\r\033[K" {
		t.Fatalf("terminal: %q", errb.String())
	}
}

// TestSearchReportsProgress: a search reports on standard error (not a
// terminal) as the clock advances; --quiet silences it; stdout stays one
// JSON object.
func TestSearchReportsProgress(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		clock := &fakeClock{t: time.Unix(0, 0), step: time.Second}
		var out, errb strings.Builder
		ctx := withEnv(context.Background(), env{stderr: &errb, now: clock.now, every: 5 * time.Second})
		args := []string{"search", "--variant", "reference", "--invariant", "fencing", "--runs", "60", "--steps", "100", "--json", "--out", t.TempDir()}
		if quiet {
			args = append(args, "--quiet")
		}
		code := run(ctx, args, &out, &errb, designs.All())
		var v map[string]any
		if code != 0 || json.Unmarshal([]byte(out.String()), &v) != nil {
			t.Fatalf("quiet=%v: exit %d\n%s", quiet, code, out.String())
		}
		lines := strings.Count(errb.String(), "progress: ")
		if quiet && lines != 0 || !quiet && (lines < 4 || !strings.Contains(errb.String(), "/60 runs")) {
			t.Fatalf("quiet=%v: %d progress lines:\n%s", quiet, lines, errb.String())
		}
	}
}

func TestProgressLines(t *testing.T) {
	if got := randomProgressLine(250, 1000, checker.Shard{}, 3*time.Second); got != "250/1000 runs (25%), 3s" {
		t.Errorf("random: %q", got)
	}
	if got := randomProgressLine(2, 10, checker.Shard{I: 1, N: 4}, 0); got != "2/3 runs (67%), 0s" {
		t.Errorf("random, shard 1/4 of 10 runs: %q", got)
	}
	p := checker.BFSProgress{States: 1000, Depth: 7, Frontier: 40, Expanded: 64, Marked: 40, Elapsed: 2 * time.Second, Rate: 500}
	if got := bfsProgressLine(p); got != "depth 7: 40/40 of the level, 1000 states, 500 states/s, 2s" {
		t.Errorf("bfs: %q", got)
	}
	p.Expanded, p.Marked = 0, 16
	if got := bfsProgressLine(p); got != "depth 7: marking subsumed states, 16/40 of the level, 1000 states, 500 states/s, 2s" {
		t.Errorf("bfs, marking: %q", got)
	}
	p.Marked, p.Heap, p.MaxMemory = 40, 3<<29, 2<<30
	if got := bfsProgressLine(p); got != "depth 7: 0/40 of the level, 1000 states, 500 states/s, 2s, heap 1.5GiB of 2GiB" {
		t.Errorf("bfs, a budget: %q", got)
	}
	p.OnDisk, p.CompactedAt, p.DenseAt, p.LayeredAt = true, 600, 900, 950
	if got := bfsProgressLine(p); got != "depth 7: 0/40 of the level, 1000 states, 500 states/s, 2s, heap 1.5GiB of 2GiB, levels on disk, hash-compact from 600 states, tables filled to 7/8 from 900 states, tables layered from 950 states" {
		t.Errorf("bfs, at the budget: %q", got)
	}
	p = checker.BFSProgress{States: 1000, Depth: 7, Frontier: 40, Expanded: 40, Marked: 40, Elapsed: 2 * time.Second, Rate: 500,
		Projection: checker.Projection{Made: true, States: 1_234_567_890, StatesHigh: 2_500_000_000}}
	if got := bfsProgressLine(p); got != "depth 7: 40/40 of the level, 1000 states, 500 states/s, 2s, projected 1.23 billion to 2.5 billion states in all" {
		t.Errorf("bfs, a projection: %q", got)
	}
}

// TestBFSProjection: a BFS stopped early says what its levels project of
// its total, or why they project nothing, in text and in --json; the
// search of tinyBFS stopped at 1500 of its 1624 states projects a range
// that holds 1624 within checker.ProjectionSlack.
func TestBFSProjection(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--out", t.TempDir()}, tinyBFS...)
	code, stdout, _ := explore(t, base...)
	if code != exitOK || !strings.Contains(stdout, "bfs: 1624 states") || strings.Contains(stdout, "projection") {
		t.Fatalf("the whole search: exit %d, want 1624 states and no projection\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(base, "--max-states", "10")...)
	if code != exitIncomplete || !strings.Contains(stdout, "\nprojection: none: fewer than 9 levels\n") {
		t.Errorf("10 states: exit %d, want no projection and why\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(base, "--max-states", "1500")...)
	if code != exitIncomplete || !strings.Contains(stdout, "\nprojection: 1662 to 1876 states in all, to depth 21 to 26; at this rate ") ||
		!strings.Contains(stdout, " more, and at ") || !strings.Contains(stdout, " bytes a state ") {
		t.Errorf("1500 states: exit %d, want a projection\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(base, "--max-states", "1500", "--json")...)
	var out struct {
		BFS struct{ Projection *checker.Projection } `json:"bfs"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitIncomplete {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, stdout)
	}
	p := out.BFS.Projection
	if p == nil || !p.Made || float64(p.States) > 1624*checker.ProjectionSlack || float64(p.StatesHigh)*checker.ProjectionSlack < 1624 ||
		p.Depth > p.DepthHigh {
		t.Errorf("--json: bfs.projection %+v", p)
	}
}

// TestSearchPrintsTheTrace: search prints the shrunk counterexample as
// readable steps, with the violation named, not only the file's path.
func TestSearchPrintsTheTrace(t *testing.T) {
	code, stdout, _ := explore(t, "search", "--variant", "check-then-write", "--invariant", "fencing", "--out", t.TempDir())
	if code != exitViolation {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	for _, want := range []string{"counterexample, step by step", " asks coordinator for the lease on job-", "VIOLATED fencing on job-"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "w=0") || strings.Contains(stdout, "r=0") {
		t.Errorf("the model's action text shown to a person:\n%s", stdout)
	}
}

// TestBFSSaysItSearchedAgain: a BFS with dead-delivered that finds a
// violation says that it searched again without it, and reports that
// search's counterexample (bfs.again in --json); without dead-delivered it
// searches once, to a counterexample as long.
func TestBFSSaysItSearchedAgain(t *testing.T) {
	base := append([]string{"search", "--variant", "check-then-write", "--invariant", "fencing", "--out", t.TempDir()}, tinyBFS...)
	base = withFlags(base, "--in-flight", "2") // tinyBFS's 1 replaced: a flag may be given once
	code, text, _ := explore(t, base...)
	if code != exitViolation || !strings.Contains(text, "\nsearched again without dead-delivered, to depth ") ||
		!strings.Contains(text, "(the violations and counterexamples reported are its)\n") {
		t.Fatalf("exit %d, want a violation found again\n%s", code, text)
	}
	type result struct {
		BFS struct {
			Again *checker.Again `json:"again"`
			Trace []string       `json:"trace"`
		} `json:"bfs"`
	}
	decode := func(args ...string) result {
		code, stdout, stderr := explore(t, append(args, "--json")...)
		var r result
		if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != exitViolation {
			t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, stdout, stderr)
		}
		return r
	}
	with := decode(base...)
	if a := with.BFS.Again; a == nil || !a.Replaced || a.Stopped != checker.StopViolation || a.Depth < len(with.BFS.Trace) {
		t.Fatalf("bfs.again %+v, a counterexample of %d actions", a, len(with.BFS.Trace))
	}
	without := decode(append(base, "--reduce", "pauses,dead-replies,reads,timers,budgets,ages")...)
	if without.BFS.Again != nil || len(without.BFS.Trace) != len(with.BFS.Trace) {
		t.Fatalf("without dead-delivered: bfs.again %+v, %d actions; with it %d", without.BFS.Again, len(without.BFS.Trace), len(with.BFS.Trace))
	}
	_, text, _ = explore(t, append(base, "--reduce", "pauses,dead-replies,reads,timers,budgets,ages")...)
	if strings.Contains(text, "searched again") {
		t.Fatalf("without dead-delivered, the search says it searched again\n%s", text)
	}
}

// TestBFSSaysWhenItDidNotSearchAgain: a second search cancelled before it
// began, or stopped before its end, leaves counterexamples not known to be
// the shortest, and the bfs lines say so.
func TestBFSSaysWhenItDidNotSearchAgain(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "reference")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		again checker.Again
		want  string
	}{
		{checker.Again{Depth: 9, Stopped: checker.StopCancelled}, "not searched again without dead-delivered for the shortest counterexamples: stopped (cancelled) before it began; the counterexamples found are runs of the machine, not known to be the shortest\n"},
		{checker.Again{Depth: 9, Stopped: checker.StopMemory, States: 40}, "stopped: memory before its end; the counterexamples found are runs of the machine, not known to be the shortest\n"},
	} {
		var out bytes.Buffer
		printBFS(&out, checker.BFSResult{Stopped: checker.StopViolation, Again: &c.again}, v)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("again %+v: want %q in\n%s", c.again, c.want, out.String())
		}
	}
}

// TestVizJSON: viz --json prints one JSON object: the file, the format,
// the violations marked, and the page itself, or with -o where it wrote it.
func TestVizJSON(t *testing.T) {
	path := filepath.Join("..", "histories", "counterexamples", "check-then-write.jsonl")
	type vizJSON struct {
		File, Format, Out, Page string
		Violations              []spec.Violation
	}
	out := filepath.Join(t.TempDir(), "page.html")
	for _, c := range []struct {
		args   []string
		format string
	}{
		{[]string{"viz", "--json", path}, "html"},
		{[]string{"viz", "--json", "--format", "mermaid", path}, "mermaid"},
		{[]string{"viz", "--json", "-o", out, path}, "html"},
	} {
		code, stdout, _ := explore(t, c.args...)
		var got vizJSON
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != exitOK {
			t.Fatalf("%v: exit %d, not one JSON object: %v\n%.300s", c.args, code, err, stdout)
		}
		if got.File != path || got.Format != c.format || len(got.Violations) == 0 {
			t.Errorf("%v: file %q format %q, %d violations", c.args, got.File, got.Format, len(got.Violations))
		}
		if slices.Contains(c.args, "-o") {
			if page, err := os.ReadFile(out); err != nil || got.Out != out || got.Page != "" || !strings.Contains(string(page), "<html") {
				t.Errorf("%v: out %q, page %d bytes in the JSON, the file: %v", c.args, got.Out, len(got.Page), err)
			}
		} else if got.Out != "" || !strings.Contains(got.Page, map[string]string{"html": "<html", "mermaid": "sequenceDiagram"}[c.format]) {
			t.Errorf("%v: out %q, page %.100q", c.args, got.Out, got.Page)
		}
	}
}

// TestVizOutput: -o naming the history read is refused, the history left
// as it was; -o - is standard output.
func TestVizOutput(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "histories", "seed", "1-renew-at-deadline.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{path, filepath.Join(dir, ".", "h.jsonl")} {
		code, _, stderr := explore(t, "viz", path, "-o", out)
		if after, _ := os.ReadFile(path); code != exitUsage || !bytes.Equal(after, b) || !strings.Contains(stderr, "is the history read") {
			t.Errorf("viz -o %s: exit %d, %s; the history kept: %v", out, code, stderr, bytes.Equal(after, b))
		}
	}
	if code, stdout, _ := explore(t, "viz", path, "-o", "-"); code != exitOK || !strings.Contains(stdout, "<html") {
		t.Errorf("viz -o -: exit %d, %.80q", code, stdout)
	}
}
