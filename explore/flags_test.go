package explore

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/spec"
)

// TestCoresHasACap: --cores past maxCores is a usage error naming the flag
// (--cores 1000000 took 18 s and 3.7 GB past its --time before); the cap
// itself is taken.
func TestCoresHasACap(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--quiet", "--out", t.TempDir()}, tinyBFS...)
	for _, n := range []int{maxCores + 1, 1000000} {
		code, stdout, stderr := explore(t, append(base, "--cores", fmt.Sprint(n))...)
		if code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("--cores %d: at most %d", n, maxCores)) || stdout != "" {
			t.Errorf("--cores %d: exit %d, stderr %q; want 2 naming --cores", n, code, stderr)
		}
	}
	if code, stdout, stderr := explore(t, append(base, "--cores", fmt.Sprint(maxCores))...); code != exitOK {
		t.Errorf("--cores %d: exit %d\n%s%s", maxCores, code, stdout, stderr)
	}
	_, stdout, _ := explore(t, "search", "--help")
	if !strings.Contains(stdout, "at most 256") {
		t.Errorf("--help does not give --cores's cap\n%s", stdout)
	}
}

// TestBFSStopSaysWhatStoppedIt: a BFS stopped by --time says "time limit"
// on its bfs line, as the random search does, and one interrupted says
// "interrupted", not the checker's "cancelled" for both; --json's
// bfs.stopped keeps "cancelled" (compatible), its top-level "stopped" names
// the cause.
func TestBFSStopSaysWhatStoppedIt(t *testing.T) {
	args := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--quiet", "--out", t.TempDir()}, tinyBFS...)
	code, stdout, _ := explore(t, append(args, "--time", "1ns")...)
	if code != exitIncomplete || !strings.Contains(stdout, "stopped: time limit (stopped early: incomplete)") ||
		strings.Contains(stdout, "cancelled") {
		t.Errorf("--time 1ns: exit %d, want 3 and the bfs line saying time limit\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(args, "--time", "1ns", "--json")...)
	var res struct {
		Stopped string `json:"stopped"`
		BFS     struct {
			Stopped string `json:"stopped"`
		} `json:"bfs"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitIncomplete || res.Stopped != "time limit" || res.BFS.Stopped != "cancelled" {
		t.Errorf("--time 1ns --json: exit %d, %v, %+v", code, err, res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code = run(ctx, args, &out, &errb, designs.All())
	if code != exitIncomplete || !strings.Contains(out.String(), "stopped: interrupted (stopped early: incomplete)") {
		t.Errorf("interrupted: exit %d, want 3 and the bfs line saying interrupted\n%s", code, out.String())
	}
}

// TestCampaignThatSearchesNothingIsIncomplete: --runs 0 or --steps 0
// searches nothing: incomplete (exit 3, as search --runs 0), saying so,
// with no unexpected verdict, no "!" and no counterexample claimed.
func TestCampaignThatSearchesNothingIsIncomplete(t *testing.T) {
	for _, flag := range []string{"--runs", "--steps"} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, _ := explore(t, "campaign", flag, "0", "--quiet", "--out", out)
		if code != exitIncomplete || strings.Contains(stdout, "UNEXPECTED") || strings.Contains(stdout, "!\t") ||
			strings.Contains(stdout, "ok!") || strings.Contains(stdout, "counterexamples (history + HTML) under") ||
			!strings.Contains(stdout, "incomplete (nothing searched: "+flag+" 0") {
			t.Errorf("%s 0: exit %d, want 3 saying nothing was searched\n%s", flag, code, stdout)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s 0: wrote %s", flag, out)
		}
		code, stdout, _ = explore(t, "campaign", flag, "0", "--quiet", "--json", "--out", out)
		var res struct {
			OK       bool   `json:"ok"`
			Complete bool   `json:"complete"`
			Stopped  string `json:"stopped"`
			Runs     int    `json:"runs"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitIncomplete || res.OK || res.Complete || res.Runs != 0 ||
			!strings.HasPrefix(res.Stopped, "nothing searched: "+flag+" 0") {
			t.Errorf("%s 0 --json: exit %d, %v, %+v", flag, code, err, res)
		}
		// search says it too (it said the runs never reached a takeover).
		code, stdout, _ = explore(t, "search", "--variant", "reference", flag, "0", "--quiet", "--out", out)
		if code != exitIncomplete || !strings.Contains(stdout, "(nothing searched: "+flag+" 0") {
			t.Errorf("search %s 0: exit %d, want 3 saying nothing was searched\n%s", flag, code, stdout)
		}
	}
}

// campaignJSON is what the tests read of campaign --json.
type campaignJSON struct {
	Complete bool              `json:"complete"`
	Variants []campaignRowJSON `json:"variants"`
}

type campaignRowJSON struct {
	Variant     string             `json:"variant"`
	Expected    bool               `json:"expected"`
	Unexpected  bool               `json:"unexpected"`
	Complete    bool               `json:"complete"`
	NotSearched string             `json:"notSearched"`
	Cells       []campaignCellJSON `json:"cells"`
}

type campaignCellJSON struct {
	Invariant string `json:"invariant"`
	Verdict   string `json:"verdict"`
	Expected  bool   `json:"expected"`
}

// TestCampaignUnknownIsNotExpected: a variant an incomplete campaign never
// searched (interrupted before its first run, or its config out of the
// design's limit) and its unknown cells do not claim "expected": true, which
// a reader takes for a pass; nor "unexpected". A complete one does.
func TestCampaignUnknownIsNotExpected(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"--json", "--quiet", "--out", t.TempDir()}, &out, &errb, designs.All())
	var res campaignJSON
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || code != exitIncomplete || res.Complete || len(res.Variants) == 0 {
		t.Fatalf("interrupted: exit %d, %v\n%s", code, err, out.String())
	}
	for _, v := range res.Variants {
		if v.Expected || v.Unexpected || v.Complete {
			t.Errorf("%s, never searched: expected %v, unexpected %v, complete %v", v.Variant, v.Expected, v.Unexpected, v.Complete)
		}
		for _, c := range v.Cells {
			if c.Verdict != "unknown" || c.Expected {
				t.Errorf("%s, never searched: cell %+v", v.Variant, c)
			}
		}
	}
	v, err := spec.LookupVariant(designs.All(), "request-id-key")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := exploreWith(t, []spec.Variant{v}, "campaign", "--workers", "3", "--runs", "300", "--json", "--quiet", "--out", t.TempDir())
	res = campaignJSON{}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitIncomplete || len(res.Variants) != 1 || res.Variants[0].NotSearched == "" {
		t.Fatalf("--workers 3: exit %d, %v\n%s", code, err, stdout)
	}
	if r := res.Variants[0]; r.Expected || r.Unexpected || slices.ContainsFunc(r.Cells, func(c campaignCellJSON) bool { return c.Expected || c.Verdict != "unknown" }) {
		t.Errorf("%s, not searched: %+v", r.Variant, r)
	}
	code, stdout, _ = explore(t, "campaign", "--runs", "0", "--json", "--quiet", "--out", t.TempDir())
	res = campaignJSON{}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitIncomplete || res.Variants[0].Expected || res.Variants[0].Cells[0].Expected {
		t.Errorf("--runs 0: exit %d, %v, %+v", code, err, res.Variants[0])
	}
}

// TestFlagGivenTwiceIsAUsageError: a flag that does not accumulate, given
// twice, is a usage error naming it, in every verb, before or after a
// positional argument (the last one used to win, silently).
func TestFlagGivenTwiceIsAUsageError(t *testing.T) {
	hist := filepath.Join("..", "histories", "counterexamples", "check-then-write.jsonl")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"search", "--variant", "check-then-write", "--variant", "reference"}, "--variant"},
		{[]string{"search", "--variant", "reference", "--mode", "bfs", "--mode", "random"}, "--mode"},
		{[]string{"search", "--variant", "reference", "--quiet", "--quiet"}, "--quiet"},
		{[]string{"campaign", "--seed", "1", "--seed", "2", "--runs", "10"}, "--seed"},
		{[]string{"--runs", "1", "--runs", "2"}, "--runs"},
		{[]string{"variants", "--json=false", "--json=false"}, "--json"},
		{[]string{"invariants", "--json", "--json"}, "--json"},
		{[]string{"check", "--timeout", "1s", hist, "--timeout", "2s"}, "--timeout"},
		{[]string{"replay", hist, "--json", "--json"}, "--json"},
		{[]string{"viz", "-o", filepath.Join(dir, "a.html"), hist, "-o", filepath.Join(dir, "b.html")}, "-o"},
		{[]string{"sweep", "--variant", "restart-no-grace", "--variant", "reference", "--param", "grace=0..1"}, "--variant"},
		{[]string{"merge", "--out", dir, "--out", dir, "x.json"}, "--out"},
		{[]string{"real", "--runs", "1", "--runs", "2"}, "--runs"},
	} {
		code, stdout, stderr := explore(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.flag+" given twice") || stdout != "" && !wantsJSON(c.args) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", c.args, code, stderr, c.flag)
		}
	}
	// --json too: the error is one JSON object.
	code, stdout, _ := explore(t, "search", "--json", "--variant", "a", "--variant", "b")
	var e struct{ Error string }
	if err := json.Unmarshal([]byte(stdout), &e); err != nil || code != exitUsage || !strings.Contains(e.Error, "--variant given twice") {
		t.Errorf("--json: exit %d, %v\n%s", code, err, stdout)
	}
	// sweep's --param accumulates: given three times, all three reach the
	// verb (which wants one or two).
	code, _, stderr := explore(t, "sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--param", "ttl=1..2", "--param", "skew=0..1")
	if code != exitUsage || strings.Contains(stderr, "given twice") || !strings.Contains(stderr, "got 3") {
		t.Errorf("--param three times: exit %d, stderr %q; want the three taken", code, stderr)
	}
	// The help still shows the flags' own defaults (the wrapping is undone).
	_, stdout, _ = explore(t, "search", "--help")
	if !strings.Contains(stdout, `(default "random")`) || strings.Contains(stdout, "panic") {
		t.Errorf("search --help\n%s", stdout)
	}
}

// TestParseAccumulatingValue: a repeatable flag.Value (paramList) may be
// given more than once; a plain one may not.
func TestParseAccumulatingValue(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var p paramList
	fs.Var(&p, "param", "")
	n := fs.Int("n", 0, "")
	if err := parse(fs, []string{"--param", "a", "x", "--param", "b", "--n", "3"}); err != nil || !slices.Equal(p, paramList{"a", "b"}) ||
		*n != 3 || !slices.Equal(fs.Args(), []string{"x"}) {
		t.Fatalf("err %v, param %q, n %d, args %q", err, p, *n, fs.Args())
	}
	if _, ok := fs.Lookup("n").Value.(flag.Getter); !ok {
		t.Fatalf("the flag's own value is not back after parse: %T", fs.Lookup("n").Value)
	}
	if err := parse(fs, []string{"--n", "1", "--n=2"}); err == nil || !strings.Contains(err.Error(), "-n given twice") {
		t.Fatalf("--n twice: %v", err)
	}
}

// TestDoubleDashEndsTheFlags: after a "--" every argument is positional,
// also after an earlier positional one (parse went on parsing flags after
// each).
func TestDoubleDashEndsTheFlags(t *testing.T) {
	for _, c := range []struct {
		args, pos []string
		out       string
		json      bool
	}{
		{[]string{"a", "--", "b", "--out", "x"}, []string{"a", "b", "--out", "x"}, "", false},
		{[]string{"--json", "a", "--", "--json"}, []string{"a", "--json"}, "", true},
		{[]string{"--", "a", "--json"}, []string{"a", "--json"}, "", false},
		{[]string{"a", "--out", "x", "b", "--", "--", "c"}, []string{"a", "b", "--", "c"}, "x", false},
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, "", true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		out := fs.String("out", "", "")
		asJSON := fs.Bool("json", false, "")
		if err := parse(fs, c.args); err != nil || !slices.Equal(fs.Args(), c.pos) || *out != c.out || *asJSON != c.json {
			t.Errorf("%q: err %v, args %q, --out %q, --json %v; want args %q, --out %q, --json %v", c.args, err, fs.Args(), *out, *asJSON,
				c.pos, c.out, c.json)
		}
	}
	// The tester's case: merge s0.json -- s1.json --out DIR takes --out for
	// a file (which it cannot read), not for the flag.
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		_, stdout, _ := explore(t, "search", "--variant", "reference", "--invariant", "fencing", "--runs", "20", "--steps", "20",
			"--quiet", "--json", "--out", dir, "--shard", fmt.Sprintf("%d/2", i))
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if code, stdout, stderr := explore(t, "merge", files[0], "--", files[1]); code == exitUsage {
		t.Fatalf("merge A -- B: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr := explore(t, "merge", files[0], "--", files[1], "--out", dir)
	if code != exitUsage || !strings.Contains(stderr, "--out") {
		t.Errorf("merge A -- B --out DIR: exit %d, stderr %q; want 2 with --out taken for a file", code, stderr)
	}
}

// TestBFSOnlyFlagsWithRandomSearch: a flag only a BFS reads (its help
// begins "bfs:": --max-states, --hash-compact, --shard-depth, ...; or
// "--liveness:") given with a random search is a usage error naming it, as
// --checkpoint already was, not silently ignored, and so is a
// "--liveness:" flag without --liveness; the flags a random search reads
// are taken. --depth, which the contract's search takes in either mode, is
// a random search's run length (--steps): refused only when --steps says
// otherwise.
func TestBFSOnlyFlagsWithRandomSearch(t *testing.T) {
	_, stdout, _ := explore(t, "search", "--help", "--json")
	var help struct {
		Flags []struct{ Name, Default, Usage string }
	}
	if err := json.Unmarshal([]byte(stdout), &help); err != nil {
		t.Fatal(err)
	}
	var bfsOnly []string
	for _, f := range help.Flags {
		if !strings.HasPrefix(f.Usage, "bfs:") && !strings.HasPrefix(f.Usage, "--liveness:") {
			continue
		}
		bfsOnly = append(bfsOnly, f.Name)
		for _, mode := range [][]string{nil, {"--mode", "random"}} {
			args := append([]string{"search", "--variant", "reference", "--quiet", "--out", t.TempDir(), "--" + f.Name + "=" + f.Default}, mode...)
			code, stdout, stderr := explore(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "--"+f.Name+" ") || !strings.Contains(stderr, "--mode bfs") || stdout != "" {
				t.Errorf("%v: exit %d, stderr %q; want 2 naming --%s", args[5:], code, stderr, f.Name)
			}
		}
	}
	for _, name := range []string{"max-states", "hash-compact", "shard-depth", "cores", "liveness-extra"} {
		if !slices.Contains(bfsOnly, name) {
			t.Errorf("--%s is not marked bfs: (or --liveness:) in its help", name)
		}
	}
	for _, name := range []string{"liveness-extra", "liveness-max-states"} {
		args := []string{"search", "--variant", "reference", "--mode", "bfs", "--quiet", "--out", t.TempDir(), "--" + name + "=3"}
		if code, _, stderr := explore(t, args...); code != exitUsage || !strings.Contains(stderr, "--"+name+" is for --liveness") {
			t.Errorf("--%s without --liveness: exit %d, stderr %q", name, code, stderr)
		}
	}
	code, stdout, stderr := explore(t, "search", "--variant", "reference", "--invariant", "fencing", "--mode", "random", "--seed", "3",
		"--runs", "40", "--steps", "50", "--time", "1h", "--shard", "0/2", "--unexpected=false", "--workers", "2", "--quiet", "--out", t.TempDir())
	if code == exitUsage {
		t.Errorf("a random search with its own flags: exit %d\n%s%s", code, stdout, stderr)
	}
	// --depth 3 makes runs of 3 actions: too short to find check-then-write's stale write.
	random := []string{"search", "--variant", "check-then-write", "--runs", "300", "--quiet", "--json", "--out", t.TempDir()}
	for _, tc := range []struct {
		args []string
		code int
	}{{[]string{"--depth", "3"}, exitOK}, {[]string{"--depth", "60"}, exitViolation}, {[]string{"--depth", "60", "--steps", "60"}, exitViolation},
		{[]string{"--depth", "60", "--steps", "30"}, exitUsage}} {
		if code, stdout, stderr := explore(t, append(slices.Clone(random), tc.args...)...); code != tc.code {
			t.Errorf("random search %v: exit %d, want %d\n%s%s", tc.args, code, tc.code, stdout, stderr)
		}
	}
}

// withFlags is args with the flags of extra ("--name value" pairs, or a
// lone "--name" of a bool flag): a flag args give already has its value
// replaced, not given again (a flag may be given once); the others are
// added.
func withFlags(args []string, extra ...string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(extra); i++ {
		name, value, pair := extra[i], "", i+1 < len(extra) && !strings.HasPrefix(extra[i+1], "--")
		if pair {
			value = extra[i+1]
			i++
		}
		at := slices.Index(out, name)
		switch {
		case at < 0 && pair:
			out = append(out, name, value)
		case at < 0:
			out = append(out, name)
		case pair:
			out[at+1] = value
		}
	}
	return out
}

func TestWithFlags(t *testing.T) {
	got := withFlags([]string{"search", "--ttl", "1", "--quiet"}, "--ttl", "2", "--quiet", "--hash-compact", "--shard", "0/2")
	if want := []string{"search", "--ttl", "2", "--quiet", "--hash-compact", "--shard", "0/2"}; !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
}
