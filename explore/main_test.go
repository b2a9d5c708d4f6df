package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/spec"
)

func explore(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return exploreWith(t, designs.All(), args...)
}

// exploreWith runs the command line with the catalogue cat.
func exploreWith(t *testing.T, cat []spec.Variant, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, cat)
	return code, out.String(), errb.String()
}

func TestCheckMalformedExits2NamingFileLineField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	body := `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"r","ttl":3}}
{"time":"soon","process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1}}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"check", "replay", "viz"} {
		code, stdout, stderr := explore(t, verb, path)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2", verb, code)
		}
		if !strings.Contains(stderr, path+":2:") || !strings.Contains(stderr, `"time"`) {
			t.Errorf("%s: stderr %q does not name file, line 2 and field time", verb, stderr)
		}
		if stdout != "" {
			t.Errorf("%s: wrote %q to stdout on an input error", verb, stdout)
		}
	}
}

func TestCheckSeedHistories(t *testing.T) {
	files, _ := filepath.Glob("../histories/seed/*.jsonl")
	if len(files) != 5 {
		t.Fatalf("found %d seed histories, want 5", len(files))
	}
	for _, f := range files {
		code, stdout, _ := explore(t, "check", "--json", f)
		if code != 0 {
			t.Errorf("check %s: exit %d", f, code)
		}
		var rep struct {
			OK         bool `json:"ok"`
			Events     int  `json:"events"`
			Violations []struct {
				Invariant string `json:"invariant"`
				Events    []int  `json:"events"`
			} `json:"violations"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("check --json %s: %v\n%s", f, err, stdout)
		}
		wantViolation := strings.Contains(f, "2-expired")
		if rep.Events == 0 || rep.OK == wantViolation || (len(rep.Violations) > 0) != wantViolation {
			t.Errorf("check %s: %+v", f, rep)
		}
	}
}

// TestCheckTimeoutIsIncomplete: a check whose porcupine search ran out of
// --timeout judged nothing of linearizable-sink: with no unexpected
// violation it is incomplete (exit 3, "incomplete", "complete": false),
// never a pass; an unexpected violation found still exits 1.
func TestCheckTimeoutIsIncomplete(t *testing.T) {
	clean := "../histories/seed/1-renew-at-deadline.jsonl"
	code, stdout, _ := explore(t, "check", "--timeout", "1ns", clean)
	if code != exitIncomplete || !strings.Contains(stdout, "unknown linearizable-sink") ||
		!strings.Contains(stdout, "incomplete: the check of linearizable-sink ran out of --timeout 1ns") ||
		strings.Contains(stdout, "no invariant violated") {
		t.Errorf("check --timeout 1ns: exit %d\n%s", code, stdout)
	}
	var rep struct {
		OK       bool     `json:"ok"`
		Complete *bool    `json:"complete"`
		Unknown  []string `json:"unknown"`
	}
	for _, c := range []struct {
		args     []string
		code     int
		complete bool
	}{
		{[]string{"check", "--json", "--timeout", "1ns", clean}, exitIncomplete, false},
		{[]string{"check", "--json", clean}, exitOK, true},
		{[]string{"check", "--json", "--timeout", "1ns", unexpectedFencing(t)}, exitViolation, false},
	} {
		rep.OK, rep.Complete, rep.Unknown = false, nil, nil
		code, stdout, _ := explore(t, c.args...)
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != c.code || rep.Complete == nil ||
			*rep.Complete != c.complete || (len(rep.Unknown) == 0) != c.complete || rep.OK != (c.code == exitOK) {
			t.Errorf("%v: exit %d (want %d), %v, %+v", c.args, code, c.code, err, rep)
		}
	}
}

// unexpectedFencing writes check-then-write's counterexample with an
// empty expect: its fencing violation is unexpected.
func unexpectedFencing(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../histories/counterexamples/check-then-write.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(b, []byte("\n"))
	var h map[string]any
	if err := json.Unmarshal(header, &h); err != nil {
		t.Fatal(err)
	}
	h["expect"] = []string{}
	header, _ = json.Marshal(h)
	path := filepath.Join(t.TempDir(), "unexpected.jsonl")
	if err := os.WriteFile(path, append(append(header, '\n'), rest...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckUnexpectedViolationExits1(t *testing.T) {
	h, err := os.ReadFile("../histories/seed/2-expired-not-taken-over.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The same history with expect [] claims nothing is violated.
	lines := strings.SplitN(string(h), "\n", 2)
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, []byte(lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := explore(t, "check", path); code != 1 {
		t.Fatalf("exit %d, want 1 for a violation no header expects", code)
	}
}

func TestReplayAndSearch(t *testing.T) {
	code, stdout, _ := explore(t, "replay", "../histories/counterexamples/grant-before-fence.jsonl")
	if code != 0 || !strings.Contains(stdout, "reproduces") {
		t.Fatalf("replay: exit %d\n%s", code, stdout)
	}
	out := t.TempDir()
	code, stdout, _ = explore(t, "search", "--variant", "check-then-write", "--invariant", "fencing", "--json", "--out", out)
	if code != 1 {
		t.Fatalf("search: exit %d, want 1\n%s", code, stdout)
	}
	var res struct {
		Violation struct {
			File string `json:"file"`
		} `json:"violation"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Violation.File == "" {
		t.Fatalf("search --json: %v\n%s", err, stdout)
	}
	if code, stdout, _ := explore(t, "replay", res.Violation.File); code != 0 {
		t.Fatalf("replay of the saved counterexample: exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(strings.TrimSuffix(res.Violation.File, ".jsonl") + ".html"); err != nil {
		t.Fatalf("no HTML beside the counterexample: %v", err)
	}
	if code, _, _ := explore(t, "search", "--variant", "reference", "--invariant", "fencing", "--runs", "200"); code != 0 {
		t.Fatalf("search of the reference for fencing: exit %d, want 0", code)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"nonsense"},
		{"check"},
		{"check", "--bogus", "x"},
		{"search", "--variant", "nope"},
		{"search", "--variant", "reference", "--invariant", "nope"},
		{"search", "--variant", "reference", "--mode", "dfs"},
		{"check", "/does/not/exist.jsonl"},
		{"campaign", "--workers", "9"},
		{"campaign", "extra"},
		{"variants", "extra"},
		{"invariants", "x", "y"},
		{"search", "--variant", "reference", "extra"},
	} {
		if code, _, stderr := explore(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
	// A negative count or duration means nothing: it is named, not taken
	// for "none" (--runs -1 ran no run, --time -1s and --depth -3 had no
	// limit).
	for _, args := range [][]string{
		{"search", "--variant", "reference", "--runs", "-1"},
		{"search", "--variant", "reference", "--time", "-1s"},
		{"search", "--variant", "reference", "--mode", "bfs", "--depth", "-3"},
		{"search", "--variant", "reference", "--mode", "bfs", "--cores", "-1"},
		{"campaign", "--steps", "-5"},
		{"check", "--timeout", "-1ms", "x.jsonl"},
	} {
		flag := args[len(args)-2]
		if args[0] == "check" {
			flag = args[1]
		}
		code, _, stderr := explore(t, args...)
		if code != 2 || !strings.Contains(stderr, flag+" ") || !strings.Contains(stderr, "must not be negative") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %s named", args, code, stderr, flag)
		}
	}
	// A run is judged once it ends, so --steps is bounded (a million steps
	// ran 4 s past a --time of 1 s, holding 900 MB).
	for _, verb := range [][]string{{"campaign"}, {"search", "--variant", "reference"}, {"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1"}} {
		code, _, stderr := explore(t, append(verb, "--steps", "1000000")...)
		if code != 2 || !strings.Contains(stderr, "--steps 1000000: at most 100000") {
			t.Errorf("%s --steps 1000000: exit %d, stderr %q; want 2 and the bound", verb[0], code, stderr)
		}
	}
	for _, verb := range []string{"campaign", "variants", "invariants", "search", "replay", "check", "viz"} {
		if code, stdout, _ := explore(t, verb, "--help"); code != 0 || !strings.Contains(stdout, "usage: explore "+verb) {
			t.Errorf("%s --help: exit %d\n%s", verb, code, stdout)
		}
	}
}

func TestListsAsJSON(t *testing.T) {
	for _, verb := range []string{"variants", "invariants"} {
		code, stdout, _ := explore(t, verb, "--json")
		var v map[string][]map[string]any
		if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil || len(v[verb]) < 10 {
			t.Errorf("%s --json: exit %d\n%s", verb, code, stdout)
		}
	}
}

func TestRealAtomicOnSQLite(t *testing.T) {
	code, stdout, stderr := explore(t, "real", "--runs", "2", "--json", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("real: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res struct {
		Runs   int `json:"runs"`
		Caught int `json:"caught"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Runs != 2 || res.Caught != 0 {
		t.Fatalf("real --json: %v\n%s", err, stdout)
	}
	if code, _, _ := explore(t, "real", "--db", "oracle"); code != 2 {
		t.Fatalf("real --db oracle: exit %d, want 2", code)
	}
}

// TestRealSchedule: --schedule replays a model counterexample on the real
// stack (reproduced; exit 1, for the violation the model found, fencing, is
// in the real history too); a schedule
// whose events its trace does not give is refused with exit 2, naming the
// file and the line.
func TestRealSchedule(t *testing.T) {
	path := filepath.Join("..", "histories", "counterexamples", "check-then-write.jsonl")
	code, stdout, stderr := explore(t, "real", "--schedule", path, "--json", "--out", t.TempDir())
	var res struct {
		Reproduced bool     `json:"reproduced"`
		Violated   []string `json:"violated"`
	}
	if code != exitViolation || json.Unmarshal([]byte(stdout), &res) != nil || !res.Reproduced || !slices.Contains(res.Violated, spec.Fencing) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(body), "\n")
	lines[14] = strings.Replace(lines[14], `"token":2`, `"token":3`, 1) // line 15: the takeover's advance
	bad := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = explore(t, "real", "--schedule", bad, "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "(line 15) differs") {
		t.Fatalf("an edited schedule: exit %d\n%s", code, stderr)
	}
}

// TestCampaignExitsOneOnAMislabelledVariant: a variant whose expected
// verdict is wrong makes the campaign exit 1 and say so.
func TestCampaignExitsOneOnAMislabelledVariant(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "global-fence")
	if err != nil {
		t.Fatal(err)
	}
	v.Name = "global-fence-mislabelled"
	v.Expect = spec.Expectation{Violates: spec.SetOf(spec.AbsoluteValidity)} // claims the shared fence is safe
	ref, _ := spec.LookupVariant(designs.All(), "reference")
	out := t.TempDir()
	code, stdout, _ := exploreWith(t, []spec.Variant{ref, v}, "--runs", "500", "--out", out)
	if code != 1 || !strings.Contains(stdout, "UNEXPECTED global-fence-mislabelled") {
		t.Fatalf("exit %d, want 1 with the variant named\n%s", code, stdout)
	}
	if code, stdout, _ := exploreWith(t, []spec.Variant{ref}, "--runs", "500", "--out", out); code != 0 {
		t.Fatalf("reference alone: exit %d, want 0\n%s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "reference", "absolute-validity.html")); err != nil {
		t.Fatalf("the campaign wrote no counterexample picture: %v", err)
	}
}

// TestCampaignNotSearchedIsIncomplete: a variant whose own limit rules out
// the campaign's config is listed as not searched, with why; the campaign
// goes on with the others and ends incomplete (exit 3), never as a pass.
func TestCampaignNotSearchedIsIncomplete(t *testing.T) {
	var vs []spec.Variant
	for _, name := range []string{"reference", "request-id-key"} {
		v, err := spec.LookupVariant(designs.All(), name)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	args := []string{"--workers", "3", "--runs", "500", "--out", t.TempDir()}
	code, stdout, _ := exploreWith(t, vs, args...)
	if code != 3 || !strings.Contains(stdout, "NOT SEARCHED request-id-key: config:") ||
		!strings.Contains(stdout, "incomplete (a variant not searched at this config)") {
		t.Fatalf("exit %d, want 3 with request-id-key not searched\n%s", code, stdout)
	}
	code, stdout, _ = exploreWith(t, vs, append(args, "--json")...)
	var got struct {
		Complete bool   `json:"complete"`
		Stopped  string `json:"stopped"`
		Variants []struct {
			Variant     string `json:"variant"`
			Complete    bool   `json:"complete"`
			Problem     string `json:"problem"`
			NotSearched string `json:"notSearched"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 3 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, stdout)
	}
	if got.Complete || got.Stopped != "a variant not searched at this config" || len(got.Variants) != 2 ||
		!got.Variants[0].Complete || got.Variants[1].Complete || !strings.HasPrefix(got.Variants[1].Problem, "not searched: ") ||
		got.Variants[0].NotSearched != "" || !strings.HasPrefix(got.Variants[1].NotSearched, "config: ") {
		t.Fatalf("--json: %+v", got)
	}
}

// TestVizDrawsPorcupineBeside: a history whose sink has no linearization
// gets porcupine's own picture beside the timeline, linked from it.
func TestVizDrawsPorcupineBeside(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.html")
	if code, _, stderr := explore(t, "viz", "../histories/counterexamples/ttl-only-lock.jsonl", "-o", out); code != 0 {
		t.Fatalf("viz: exit %d: %s", code, stderr)
	}
	pics, _ := filepath.Glob(strings.TrimSuffix(out, ".html") + "-porcupine-*.html")
	page, err := os.ReadFile(out)
	if err != nil || len(pics) == 0 {
		t.Fatalf("no porcupine picture beside the timeline (%v)", err)
	}
	if !strings.Contains(string(page), filepath.Base(pics[0])) {
		t.Fatal("the timeline does not link porcupine's picture")
	}
	// porcupine numbers its lanes: each gets a box naming the process.
	if pic, _ := os.ReadFile(pics[0]); !strings.Contains(string(pic), `"Description":"w`) || !strings.Contains(string(pic), `"Description":"coordinator"`) {
		t.Error("porcupine's lanes are not named after the processes")
	}
	code, stdout, _ := explore(t, "viz", "--format", "mermaid", "../histories/seed/3-takeover-fences-stale-write.jsonl")
	if code != 0 || !strings.HasPrefix(stdout, "sequenceDiagram") && !strings.Contains(stdout, "sequenceDiagram") {
		t.Fatalf("viz --format mermaid: exit %d\n%s", code, stdout)
	}
}

// TestShardedSearchesMergeToTheUnshardedVerdict: n jobs of a split search,
// merged, give the verdict (and for the random search the very run) of one
// unsplit search.
func TestShardedSearchesMergeToTheUnshardedVerdict(t *testing.T) {
	dir := t.TempDir()
	type out struct {
		RunIndex  *int `json:"runIndex"`
		Violation *struct {
			Invariant  string `json:"invariant"`
			Operations int    `json:"operations"`
		} `json:"violation"`
		Proof *proofJSON `json:"proof"`
		BFS   *struct {
			Again *checker.Again `json:"again"`
		} `json:"bfs"`
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"random", []string{"--variant", "check-then-write", "--invariant", "fencing"}},
		{"bfs", []string{"--variant", "grant-before-fence", "--mode", "bfs", "--invariant", "fence-before-grant", "--workers", "2",
			"--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--in-flight", "1", "--drops", "0",
			"--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0"}},
		{"bfs-clean", []string{"--variant", "reference", "--mode", "bfs", "--unexpected", "--workers", "2",
			"--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--in-flight", "1", "--drops", "0",
			"--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0"}},
		// Fault budgets to spend: the budgets reduction leaves states out
		// of each job by the states that job stored.
		{"bfs-faults", []string{"--variant", "renew-token-only", "--mode", "bfs", "--workers", "2",
			"--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--in-flight", "2", "--drops", "1",
			"--dups", "0", "--crashes", "1", "--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var whole out
			code, stdout, _ := explore(t, append([]string{"search", "--json", "--out", dir}, c.args...)...)
			if err := json.Unmarshal([]byte(stdout), &whole); err != nil {
				t.Fatalf("unsharded: %v\n%s", err, stdout)
			}
			var files []string
			for i := 0; i < 3; i++ {
				args := append([]string{"search", "--json", "--out", dir, "--shard", fmt.Sprintf("%d/3", i)}, c.args...)
				if slices.Contains(c.args, "bfs") {
					args = append(args, "--shard-depth", "3") // a BFS's flag: refused with a random search
				}
				_, stdout, _ := explore(t, args...)
				f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", c.name, i))
				if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			mcode, stdout, stderr := explore(t, append([]string{"merge", "--json"}, files...)...)
			var merged out
			if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
				t.Fatalf("merge: %v\n%s%s", err, stdout, stderr)
			}
			if mcode != code || (merged.Violation == nil) != (whole.Violation == nil) {
				t.Fatalf("merged: exit %d %+v; unsharded: exit %d %+v", mcode, merged.Violation, code, whole.Violation)
			}
			if whole.Violation != nil && (merged.Violation.Invariant != whole.Violation.Invariant ||
				merged.Violation.Operations != whole.Violation.Operations) {
				t.Fatalf("merged %+v, unsharded %+v", *merged.Violation, *whole.Violation)
			}
			if whole.RunIndex != nil && (merged.RunIndex == nil || *merged.RunIndex != *whole.RunIndex) {
				t.Fatalf("merged found run %v, unsharded run %d", merged.RunIndex, *whole.RunIndex)
			}
			if (merged.Proof == nil) != (whole.Proof == nil) {
				t.Fatalf("merged proof %+v, unsharded proof %+v", merged.Proof, whole.Proof)
			}
			if whole.Proof != nil {
				merged.Proof.sameAs(t, *whole.Proof, 3)
			}
			// The jobs searched again for the shortest counterexamples as the
			// unsplit search did, and the merge says so.
			if whole.BFS != nil && (whole.BFS.Again == nil) != (merged.BFS.Again == nil) {
				t.Fatalf("merged bfs.again %+v, unsharded %+v", merged.BFS.Again, whole.BFS.Again)
			}
			if whole.BFS != nil && whole.BFS.Again != nil && merged.BFS.Again.Replaced != whole.BFS.Again.Replaced {
				t.Fatalf("merged bfs.again %+v, unsharded %+v", *merged.BFS.Again, *whole.BFS.Again)
			}
			if c.name == "bfs-clean" && !merged.Proof.Proves {
				t.Fatalf("three complete clean jobs prove nothing: %+v", merged.Proof)
			}
			if c.name == "bfs-clean" {
				mergeNeverReached(t, files)
			}
		})
	}
	if code, _, _ := explore(t, "merge", filepath.Join(dir, "random-0.json")); code != 2 {
		t.Fatalf("merging one job of three: exit %d, want 2", code)
	}
}

// sameAs fails unless merged proof p of n jobs proves what unsplit
// search's proof w proves, of the same invariants, with the same
// invariants violated on some transition.
func (p *proofJSON) sameAs(t *testing.T, w proofJSON, n int) {
	t.Helper()
	same := p.Proves == w.Proves && p.Jobs == n && w.Jobs == 0 && slices.Equal(p.Judged, w.Judged) &&
		p.Reductions != nil && w.Reductions != nil && slices.Equal(p.Reductions.Steps, w.Reductions.Steps) &&
		len(p.Excluded) == len(w.Excluded)
	for i := range p.Excluded {
		x, y := p.Excluded[i], w.Excluded[i]
		same = same && x.ID == y.ID && x.Reason == y.Reason && (x.Violated == nil) == (y.Violated == nil) &&
			(x.Violated == nil || *x.Violated == *y.Violated)
	}
	if !same {
		t.Fatalf("merged proof %+v\nunsharded proof %+v", *p, w)
	}
}

// TestMergeRefusesJobsOfDifferentProofs: jobs that prove different things
// (another --depth, --invariant, --unexpected or --reduce) are not the
// jobs of one search, and merging them would give a verdict no search
// gave: the merge refuses them (exit 2), naming the field.
func TestMergeRefusesJobsOfDifferentProofs(t *testing.T) {
	dir := t.TempDir()
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--json", "--out", dir, "--shard-depth", "2"}, tinyBFS...)
	for _, c := range []struct {
		extra []string
		field string
	}{
		{[]string{"--depth", "4"}, "proof.reductions.depthBound"},
		{[]string{"--invariant", "exclusive-lease"}, "proof.judged"},
		{[]string{"--reduce=false"}, "proof.reductions.steps"},
		{[]string{"--ttl", "2"}, `field "config"`},
		{[]string{"--shard-depth", "3"}, `field "shard.depth"`},
	} {
		var files []string
		for i, extra := range [][]string{nil, c.extra} {
			_, stdout, _ := explore(t, withFlags(append(append([]string{}, base...), "--shard", fmt.Sprintf("%d/2", i)), extra...)...)
			f := filepath.Join(dir, fmt.Sprintf("job-%d.json", i))
			if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		code, _, stderr := explore(t, append([]string{"merge"}, files...)...)
		if code != exitUsage || !strings.Contains(stderr, files[1]) || !strings.Contains(stderr, c.field) {
			t.Errorf("jobs with %v: merge exit %d, want 2 naming %s and %s\n%s", c.extra, code, files[1], c.field, stderr)
		}
	}
}

// TestMergeNamesWhatIsMissing: a merge of too few jobs names the jobs
// missing; a BFS job run with another --seed, which a BFS does not read,
// is a job of the same search (both were refused, naming no job or field).
func TestMergeNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--json", "--out", dir, "--shard-depth", "2"}, tinyBFS...)
	var files []string
	for i := range 3 {
		_, stdout, _ := explore(t, append(base, "--shard", fmt.Sprintf("%d/3", i), "--seed", fmt.Sprint(i+1))...)
		f := filepath.Join(dir, fmt.Sprintf("job-%d.json", i))
		if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if code, _, stderr := explore(t, "merge", files[0]); code != exitUsage || !strings.Contains(stderr, "1 result for a search split into 3 jobs: jobs 1/3, 2/3 missing") {
		t.Errorf("one job of three: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := explore(t, append([]string{"merge"}, files...)...); code != exitOK {
		t.Errorf("jobs of one BFS with different seeds: exit %d\n%s%s", code, stdout, stderr)
	}
}

// mergeNeverReached rewrites the clean jobs' results as if no job had
// reached any scene: each job did its share, but together they prove
// nothing, and the merge must say so (exit 3, "vacuous"), not pass.
func mergeNeverReached(t *testing.T, files []string) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var job map[string]any
		if err := json.Unmarshal(b, &job); err != nil {
			t.Fatal(err)
		}
		job["bfs"].(map[string]any)["reached"] = map[string]any{}
		if b, err = json.Marshal(job); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ := explore(t, append([]string{"merge", "--json"}, files...)...)
	var merged struct {
		Complete bool      `json:"complete"`
		Vacuous  string    `json:"vacuous"`
		Proof    proofJSON `json:"proof"`
	}
	if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
		t.Fatal(err)
	}
	if code != exitIncomplete || merged.Complete || merged.Vacuous == "" || merged.Proof.Proves ||
		!strings.Contains(merged.Proof.Why, "never reached") {
		t.Fatalf("jobs that together reached no scene: exit %d, %s", code, stdout)
	}
	if code, stdout, _ := explore(t, append([]string{"merge"}, files...)...); code != exitIncomplete ||
		!strings.Contains(stdout, "never reached") {
		t.Fatalf("jobs that together reached no scene: exit %d, %s", code, stdout)
	}
}

// TestReadmeShowsTheDefaultCampaign: the matrix README.md shows is the one
// the default campaign prints (it is deterministic: the same seed, the same
// runs, the same shrunk counterexamples).
func TestReadmeShowsTheDefaultCampaign(t *testing.T) {
	code, stdout, _ := explore(t, "--quiet", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("the default campaign: exit %d\n%s", code, stdout)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := func(text string) []string {
		var rows []string
		in := false
		for _, l := range strings.Split(text, "\n") {
			switch f := strings.Fields(l); {
			case len(f) > 0 && f[0] == "variant":
				in = true
			case in && len(f) < 2:
				return rows
			}
			if in {
				rows = append(rows, strings.Join(strings.Fields(l), " "))
			}
		}
		return rows
	}
	got, want := table(stdout), table(string(readme))
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(designs.All())+1 {
		t.Errorf("README.md's campaign matrix differs from the default campaign's; the campaign prints:\n%s", strings.Join(got, "\n"))
	}
}

// TestVerbExitStatuses: each verb's --help gives its own exit statuses,
// all four, as its code ends (one generic text said "1 a violation" for
// sweep, which exits 0 on its violations, and check's did not say that a
// porcupine --timeout gives 3); --help --json gives the same.
func TestVerbExitStatuses(t *testing.T) {
	for _, v := range verbs {
		text, ok := verbExitStatuses[v.name]
		if !ok {
			t.Errorf("%s has no exit statuses of its own", v.name)
			continue
		}
		_, stdout, _ := explore(t, v.name, "--help")
		if !strings.HasSuffix(stdout, "\n"+text+"\n") {
			t.Errorf("%s --help does not end with its exit statuses:\n%s", v.name, stdout)
		}
		_, stdout, _ = explore(t, v.name, "--help", "--json")
		var got struct{ ExitStatus map[string]string }
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got.ExitStatus) != 4 ||
			!strings.HasPrefix(got.ExitStatus["2"], "usage or input error") {
			t.Errorf("%s --help --json: exit statuses %v (%v)", v.name, got.ExitStatus, err)
		}
		for code, s := range got.ExitStatus {
			if !strings.Contains(text, "  "+code+"  "+s[:min(len(s), 20)]) {
				t.Errorf("%s --help --json: status %s is %q, not the text's", v.name, code, s)
			}
		}
	}
	for _, c := range []struct{ verb, code, want string }{
		{"sweep", "0", "violations are a sweep's findings"},
		{"sweep", "1", "never"},
		{"check", "3", "--timeout"},
		{"check", "3", "Ctrl-C"},
		{"replay", "1", "not reproduced"},
		{"replay", "3", "never"},
		{"viz", "1", "never"},
		{"real", "3", "--run-timeout"},
		{"merge", "1", "never of a sweep"},
		{"campaign", "3", "not searched at these bounds"},
		{"campaign", "0", "vacuous"},
		{"campaign", "1", "no run reached"},
		{"search", "0", "vacuous"},
		{"search", "3", "a BFS"},
		{"campaign", "1", "decision that failed"},
		{"search", "3", "progress not checked"},
	} {
		got := exitStatusJSON(verbExitStatuses[c.verb])[c.code]
		if !strings.Contains(got, c.want) {
			t.Errorf("%s's exit status %s: %q, want it to say %q", c.verb, c.code, got, c.want)
		}
	}
	// The statuses of every verb, in explore --help, say sweep's 0 too.
	_, stdout, _ := explore(t, "--help")
	if !strings.Contains(stdout, "never for sweep") || !strings.Contains(stdout, "--timeout") {
		t.Errorf("explore --help: the statuses of every verb leave sweep or check out:\n%s", stdout)
	}
}

// TestHelpUnknownVerb: explore help frob says, as explore frob does, that
// the verb is unknown (it said `want one verb, got "frob"`), and lists the
// verbs; two verbs are still "want one verb".
func TestHelpUnknownVerb(t *testing.T) {
	code, stdout, stderr := explore(t, "help", "frob")
	if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "explore help: unknown verb \"frob\"\n") ||
		!strings.Contains(stderr, "\nverbs:\n") || !strings.Contains(stderr, "  sweep ") {
		t.Errorf("help frob: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	_, _, direct := explore(t, "frob")
	if !strings.HasPrefix(direct, "explore: unknown verb \"frob\"\n") || strings.TrimPrefix(direct, "explore: ") != strings.TrimPrefix(stderr, "explore help: ") {
		t.Errorf("explore frob says %q, explore help frob %q: not the same", direct, stderr)
	}
	code, stdout, _ = explore(t, "help", "frob", "--json")
	var o map[string]any
	if code != exitUsage || json.Unmarshal([]byte(stdout), &o) != nil || o["error"] != `unknown verb "frob"` {
		t.Errorf("help frob --json: exit %d, %q", code, stdout)
	}
	if code, _, stderr := explore(t, "help", "search", "check"); code != exitUsage || !strings.Contains(stderr, `want one verb, got "search check"`) {
		t.Errorf("help search check: exit %d, stderr %q", code, stderr)
	}
}

// TestCatalogueNames: a design of a user's named as a built-in one (which
// shadowed it: search --variant reference searched the built-in, and both
// campaign rows saved into one folder), or with no name, or one a folder
// cannot carry, is refused.
func TestCatalogueNames(t *testing.T) {
	if err := catalogueError(designs.All()); err != nil {
		t.Fatalf("the built-in catalogue: %v", err)
	}
	for name, want := range map[string]string{"reference": "the name is taken", "": "no name", "team/lease": "a name is letters",
		"-x": "a name is letters", "x@y": "a name is letters", "my-design_2.1": ""} {
		err := catalogueError(append(designs.All(), spec.Variant{Name: name}))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
	if code := Main([]string{"explore", "variants"}, spec.Variant{Name: "reference"}); code != exitUsage {
		t.Errorf("Main with a second reference: exit %d, want 2", code)
	}
}
