package explore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/internal/stuck"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// proofOut is the part of explore search --mode bfs --json the proof tests
// read.
type proofOut struct {
	BFS struct {
		States      uint64   `json:"states"`
		Transitions uint64   `json:"transitions"`
		Omission    float64  `json:"omissionBound"`
		Unreduced   uint64   `json:"unreduced"`
		Subsumed    uint64   `json:"subsumed"`
		Violated    []string `json:"violated"`
	} `json:"bfs"`
	Proof *proofJSON `json:"proof"`
}

// proofJSON is the "proof" object of explore search --mode bfs and of
// explore merge, as far as the tests read it.
type proofJSON struct {
	Proves   bool     `json:"proves"`
	Why      string   `json:"why"`
	Judged   []string `json:"judged"`
	Excluded []struct {
		ID        string   `json:"id"`
		Reason    string   `json:"reason"`
		CheckedBy []string `json:"checkedBy"`
		Violated  *bool    `json:"violated"`
	} `json:"excluded"`
	Bounds     *model.Config `json:"bounds"`
	Reductions *struct {
		Symmetry       []string `json:"symmetry"`
		Factor         float64  `json:"symmetryFactor"`
		HashCompaction bool     `json:"hashCompaction"`
		DepthBound     int      `json:"depthBound"`
		DepthCut       bool     `json:"depthCut"`
		Subsumed       uint64   `json:"subsumed"`
		Steps          []string `json:"steps"`
	} `json:"reductions"`
	Progress *struct {
		Checked  bool   `json:"checked"`
		Holds    bool   `json:"holds"`
		Reason   string `json:"reason"`
		States   uint64 `json:"states"`
		Stored   uint64 `json:"stored"`
		Stuck    uint64 `json:"stuck"`
		Extended uint64 `json:"extended"`
		Extra    int    `json:"extra"`
		Ops      int    `json:"ops"`
		Grants   int    `json:"grants"`
		Witness  *struct {
			File      string   `json:"file"`
			SaveError string   `json:"saveError"`
			Actions   int      `json:"actions"`
			Trace     []string `json:"trace"`
		} `json:"witness"`
		Larger []larger `json:"larger"`
	} `json:"progress"`
	Within *struct {
		Depth         int     `json:"depth"`
		Proves        bool    `json:"proves"`
		Why           string  `json:"why"`
		States        uint64  `json:"states"`
		Transitions   uint64  `json:"transitions"`
		OmissionBound float64 `json:"omissionBound"`
	} `json:"within"`
	Jobs int `json:"jobs"`
}

func decodeProof(t *testing.T, stdout string) proofOut {
	t.Helper()
	var p proofOut
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || p.Proof == nil || p.Proof.Bounds == nil || p.Proof.Reductions == nil {
		t.Fatalf("--json: %v, no complete \"proof\"\n%s", err, stdout)
	}
	return p
}

// TestProofAccountsForEveryInvariant: the proof object lists every
// invariant exactly once, as judged or excluded; linearizable-sink is
// excluded with its reason and where it is checked instead; unrestricted,
// the judged are exactly those Judge decides; --unexpected and --invariant
// narrow them and say why of each one left out; bounds and reductions are
// the search's.
func TestProofAccountsForEveryInvariant(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--json", "--out", t.TempDir()}, tinyBFS...)
	for _, c := range []struct {
		extra  []string
		code   int
		judged []string
		proves bool
		reason string // of every excluded invariant with a state form
	}{
		{nil, exitViolation, spec.OnTransitions().IDs(), false, ""},
		{[]string{"--unexpected"}, exitOK, (spec.OnTransitions() &^ spec.NonGuarantee).IDs(), true, "--unexpected"},
		{[]string{"--invariant", "fencing"}, exitOK, []string{"fencing"}, true, "--invariant fencing"},
	} {
		code, stdout, _ := explore(t, append(base, c.extra...)...)
		p := decodeProof(t, stdout)
		pf := p.Proof
		if code != c.code || pf.Proves != c.proves || !slices.Equal(pf.Judged, c.judged) {
			t.Errorf("%v: exit %d, proves %v (%s), judged %v; want %d, %v, %v", c.extra, code, pf.Proves, pf.Why, pf.Judged, c.code, c.proves, c.judged)
		}
		seen := map[string]int{}
		for _, id := range pf.Judged {
			seen[id]++
		}
		for _, x := range pf.Excluded {
			seen[x.ID]++
			switch {
			case x.ID == spec.LinearizableSink:
				if !strings.Contains(x.Reason, "recorded histories only") || !slices.Contains(x.CheckedBy, "explore search --mode random") ||
					!slices.Contains(x.CheckedBy, "explore check") {
					t.Errorf("%v: linearizable-sink excluded as %q, checked by %v", c.extra, x.Reason, x.CheckedBy)
				}
			case !strings.Contains(x.Reason, "not stopped on ("+c.reason) || c.reason == "":
				t.Errorf("%v: %s excluded as %q", c.extra, x.ID, x.Reason)
			case strings.Contains(x.Reason, "violated on some transition") != slices.Contains(p.BFS.Violated, x.ID):
				t.Errorf("%v: %s excluded as %q, but bfs.violated is %v", c.extra, x.ID, x.Reason, p.BFS.Violated)
			}
		}
		for _, inv := range spec.Invariants {
			if seen[inv.ID] != 1 {
				t.Errorf("%v: %s listed %d times in judged and excluded", c.extra, inv.ID, seen[inv.ID])
			}
		}
		if len(seen) != len(spec.Invariants) {
			t.Errorf("%v: %d ids listed, %d invariants", c.extra, len(seen), len(spec.Invariants))
		}
		r := pf.Reductions
		if pf.Bounds.Ops != 2 || pf.Bounds.InFlight != 1 || !slices.Equal(r.Symmetry, []string{"workers"}) || r.Factor < 1.9 ||
			r.HashCompaction || r.DepthBound != 0 || r.DepthCut || c.proves && r.Subsumed == 0 || r.Subsumed != p.BFS.Subsumed {
			t.Errorf("%v: bounds %+v, reductions %+v", c.extra, *pf.Bounds, *r)
		}
	}

	// The text says the same: each excluded invariant, and where the
	// history-only one is checked instead.
	text := append([]string{"search", "--variant", "reference", "--unexpected", "--hash-compact", "--depth", "22", "--reduce=false", "--out", t.TempDir()}, tinyBFS...)
	code, stdout, _ := explore(t, text...)
	for _, want := range []string{
		"proof: the 8 invariants judged hold on every transition out of every one of the",
		"states within depth 22",
		"excluded linearizable-sink: no state form, judged over recorded histories only",
		"checked instead by explore search --mode random, explore campaign, explore check, explore replay",
		"excluded absolute-validity: not stopped on (--unexpected: the variant is expected to violate it); violated on some transition",
		"bounds: --crashes 0 --delay 0 --drops 0",
		"reductions: symmetry over workers",
		"hash compaction: a state missed with probability at most",
		"depth bound 22: states that deep were not expanded",
	} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("text (exit %d) lacks %q\n%s", code, want, stdout)
		}
	}

	// With the reductions the text does not claim every reachable state
	// was expanded: it counts the states whose transitions were judged
	// and names the reductions as standing for the rest.
	code, stdout, _ = explore(t, append([]string{"search", "--variant", "reference", "--unexpected", "--json", "--out", t.TempDir()}, tinyBFS...)...)
	var p struct {
		BFS struct{ States, Unreduced, Subsumed uint64 } `json:"bfs"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil || code != exitOK || p.BFS.Subsumed == 0 {
		t.Fatalf("--json: exit %d, %v, subsumed %d", code, err, p.BFS.Subsumed)
	}
	code, stdout, _ = explore(t, append([]string{"search", "--variant", "reference", "--unexpected", "--out", t.TempDir()}, tinyBFS...)...)
	want := fmt.Sprintf("on every transition out of every state reachable within the bounds: the search judged those out of %d states (%d stored, less %d subsumed; %d without symmetry), and the reductions below match every run of the others",
		p.BFS.States-p.BFS.Subsumed, p.BFS.States, p.BFS.Subsumed, p.BFS.Unreduced)
	if code != exitOK || !strings.Contains(stdout, want) || strings.Contains(stdout, "every one of the") {
		t.Errorf("reduced text (exit %d) lacks %q\n%s", code, want, stdout)
	}
}

// TestSearchRefusesWhatItCannotProve: exit 2, naming the flag, for a BFS
// (of a search or of a sweep's cells) restricted to an invariant it does
// not judge, and for --liveness where it means nothing or its machine
// cannot be built.
func TestSearchRefusesWhatItCannotProve(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--out", t.TempDir()}, tinyBFS...)
	random := append([]string{"search", "--variant", "reference", "--out", t.TempDir(), "--mode", "random"}, tinyBFS[2:]...) // tinyBFS's bounds, not its --mode bfs
	for _, c := range []struct {
		args []string
		flag string
	}{
		{append(base, "--invariant", "linearizable-sink"), "--invariant linearizable-sink"},
		{append(base, "--invariant", "absolute-validity", "--unexpected"), "--invariant absolute-validity with --unexpected"},
		{append(random, "--invariant", "absolute-validity", "--unexpected"), "--invariant absolute-validity with --unexpected"},
		{append(random, "--liveness"), "--liveness needs --mode bfs"},
		{append(base, "--liveness", "--shard", "0/2"), "--liveness: not with --shard"},
		{append(base, "--liveness", "--liveness-extra", "0"), "--liveness-extra 0"},
		// request-id-key keys results by attempt: 1 + 2 × (2 + 4) results
		// exceed the sink's table. Refused before the search, not after it.
		{append(append([]string{"search", "--variant", "request-id-key", "--out", t.TempDir()}, tinyBFS...), "--liveness", "--liveness-extra", "4"),
			"--liveness-extra 4: the progress check runs with ops 6 and grants 6"},
		{[]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--invariant", "linearizable-sink"},
			"--invariant: linearizable-sink is judged over recorded histories only"},
	} {
		code, stdout, stderr := explore(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.flag) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", c.args[len(c.args)-2:], code, stderr, c.flag)
		}
	}
}

// progressFlags are the bounds of the progress tests (checker's
// progressConfig and progressTiny): two workers, one resource, ttl 1, one
// operation each, one grant, no faults but what a test adds.
func progressFlags(inFlight, drops string) []string {
	return []string{"--mode", "bfs", "--workers", "2", "--resources", "1", "--ttl", "1", "--ops", "1", "--grants", "1",
		"--in-flight", inFlight, "--drops", drops, "--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0",
		"--skew", "0", "--sink-restarts", "0"}
}

// TestLivenessReferenceHolds: with no faults, every task of the reference
// can still commit from every reachable state, at the bound the brief names
// (two messages in flight; --json) and with one in flight (the text): the
// check counts the states without symmetry (the BFS's unreduced count),
// stores one per orbit as the BFS does (its count), and names its budget. The safety proof is vacuous at these bounds (no
// takeover), so the exit is 3.
func TestLivenessReferenceHolds(t *testing.T) {
	// --reduce=false: the progress check's counts are then the BFS's.
	args := []string{"search", "--variant", "reference", "--liveness", "--reduce=false", "--out", t.TempDir()}
	code, stdout, _ := explore(t, append(args, progressFlags("1", "0")...)...)
	if code != exitIncomplete || !strings.Contains(stdout, "progress holds: from every one of 2256 reachable states (counted without symmetry; 1132 stored, one per orbit of the search's renamings) every task can still be committed with no further fault (continuations judged with ops 3 and grants 3: --liveness-extra 2, the progress check's own budget") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(append(args, "--json"), progressFlags("2", "0")...)...)
	out := decodeProof(t, stdout)
	p := out.Proof.Progress
	if code != exitIncomplete || p == nil || !p.Checked || !p.Holds || p.Stuck != 0 || p.States != 22136 || p.States != out.BFS.Unreduced ||
		p.Stored != out.BFS.States || p.Stored >= p.States ||
		p.Extra != 2 || p.Ops != 3 || p.Grants != 3 || p.Witness != nil {
		t.Fatalf("--json: exit %d, progress %+v\n%s", code, p, stdout)
	}
}

// rejectAll is a design whose sink rejects every write (safe at one
// operation per worker, where no write reaches the sink):
// it must fail progress.
var rejectAll = spec.Variant{Name: "reject-all", Summary: "the sink rejects every write",
	Design: stuck.RejectAll, Expect: spec.Expectation{Violates: spec.NonGuarantee}}

// TestLivenessRejectAllFails: a sink that rejects every write is safe at
// one operation per worker and fails progress from every state, the initial one included: exit 1, with
// the empty witness (nothing to save: a history needs an event). With a
// larger budget the initial state still commits nothing, and with one
// larger still its search reaches the state limit: not judged.
func TestLivenessRejectAllFails(t *testing.T) {
	cat := append(designs.All(), rejectAll)
	out := t.TempDir()
	// --liveness-extra 1: a never-committing state's whole fault-free
	// closure is explored, which with 2 exceeds a test's budget.
	args := append([]string{"search", "--variant", "reject-all", "--liveness", "--liveness-extra", "1", "--liveness-max-states", "250000",
		"--out", out}, progressFlags("1", "0")...)
	code, stdout, _ := exploreWith(t, cat, args...)
	if code != exitViolation || !strings.Contains(stdout, "progress fails: 2256 of 2256 states stuck") ||
		!strings.Contains(stdout, "witness: the initial state is stuck (no action to save or replay)") ||
		!strings.Contains(stdout, "larger budgets: with up to --liveness-extra 2 (ops 3, grants 3) the witness's stuck state still commits nothing\n"+
			"larger budgets: with --liveness-extra 3 (ops 4, grants 4) the search from the witness's stuck state stopped (--liveness-max-states 250000 reached): not judged\n") {
		t.Fatalf("exit %d, want 1 and every state stuck\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "reject-all: incomplete: no violation found, but progress fails (") {
		t.Errorf("the last line does not say progress fails (it read as a pass: no violation found)\n%s", stdout)
	}
	// Without --liveness the same search judges safety only, and says so
	// (here incomplete too: one grant never makes a takeover).
	code, safeOnly, _ := exploreWith(t, cat, append([]string{"search", "--variant", "reject-all", "--out", out}, progressFlags("1", "0")...)...)
	if code != exitIncomplete || !strings.Contains(safeOnly, "progress: not checked — safety only: a design that never commits (its holders never write, say) holds every invariant; --liveness checks") {
		t.Errorf("without --liveness: exit %d, want 3 and progress said not checked\n%s", code, safeOnly)
	}
	code, stdout, _ = exploreWith(t, cat, append(args, "--json")...)
	p := decodeProof(t, stdout).Proof.Progress
	if code != exitViolation || p == nil || !p.Checked || p.Holds || p.Stuck != p.States || p.Witness == nil ||
		p.Witness.Actions != 0 || p.Witness.File != "" || p.Witness.Trace == nil ||
		!slices.Equal(p.Larger, []larger{{Extra: 2, Ops: 3, Grants: 3, Checked: true},
			{Extra: 3, Ops: 4, Grants: 4, Reason: "--liveness-max-states 250000 reached"}}) {
		t.Fatalf("--json: exit %d, progress %+v", code, p)
	}
	if files, _ := filepath.Glob(filepath.Join(out, "*", "*")); len(files) != 0 {
		t.Fatalf("saved %v for an empty witness", files)
	}
}

// readWitness parses a saved witness and checks its picture is beside it.
func readWitness(t *testing.T, path string) *history.History {
	t.Helper()
	h, err := readHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSuffix(path, ".jsonl") + ".html"); err != nil {
		t.Fatal(err)
	}
	return h
}

// firstGrantOnly is a design whose sink takes writes of the first grant
// only: a takeover before the first write lands makes the task
// uncommittable, so it fails progress after a path of actions.
var firstGrantOnly = spec.Variant{Name: "first-grant-only", Summary: "the sink takes writes of the first grant only",
	Design: stuck.FirstGrantOnly, Expect: spec.Expectation{Violates: spec.NonGuarantee}}

// TestLivenessWitnessReplays: a design that gets stuck after a takeover
// fails progress; the report says so, and the witness, saved under --out,
// replays event for event. The reference holds even with a lost message
// (checker's TestProgressReferenceSurvivesFaults).
func TestLivenessWitnessReplays(t *testing.T) {
	cat := append(designs.All(), firstGrantOnly)
	out := t.TempDir()
	args := append([]string{"search", "--variant", "first-grant-only", "--liveness", "--json", "--out", out}, progressFlags("1", "0")...)
	code, stdout, _ := exploreWith(t, cat, args...)
	p := decodeProof(t, stdout).Proof.Progress
	if code != exitViolation || p == nil || !p.Checked || p.Holds || p.Stuck == 0 || p.Stuck == p.States || p.States != 2256 || p.Witness == nil {
		t.Fatalf("exit %d, progress %+v", code, p)
	}
	if len(p.Larger) != 1 || p.Larger[0].Extra != 3 || p.Larger[0].Checked {
		t.Fatalf("larger budgets %+v: want --liveness-extra 3 tried and stopped (its closure exceeds the state limit)", p.Larger)
	}
	w := p.Witness
	if w.File != filepath.Join(out, "first-grant-only", "progress.jsonl") || w.Actions != len(w.Trace) || w.Actions == 0 {
		t.Fatalf("witness %+v", *w)
	}
	if h := readWitness(t, w.File); !slices.Equal(h.Header.Actions, w.Trace) {
		t.Fatalf("saved trace %v, reported %v", h.Header.Actions, w.Trace)
	}
	code, stdout, _ = exploreWith(t, cat, slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--json" })...)
	if code != exitViolation || !strings.Contains(stdout, "\nwitness, step by step (") || strings.Contains(stdout, "counterexample, step by step") {
		t.Fatalf("text: exit %d, want the witness printed as one, not as a counterexample\n%s", code, stdout)
	}
	code, stdout, _ = exploreWith(t, cat, "replay", w.File)
	if code != exitOK || !strings.Contains(stdout, "the model reproduces all") {
		t.Fatalf("replay: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append([]string{"search", "--variant", "reference", "--liveness", "--json", "--out", out}, progressFlags("1", "1")...)...)
	if p := decodeProof(t, stdout).Proof.Progress; p == nil || !p.Checked || !p.Holds || p.Stuck != 0 || p.States != 7280 {
		t.Fatalf("reference with a drop: exit %d, progress %+v", code, p)
	}
}

// TestLivenessLargerBudgetCommits: with --liveness-extra 1 the reference
// with a lost message is stuck in some states for want of budget, not by
// its design: the report says the witness's stuck state commits with
// --liveness-extra 2, and names it (and with it, progress holds).
func TestLivenessLargerBudgetCommits(t *testing.T) {
	args := append([]string{"search", "--variant", "reference", "--liveness", "--out", t.TempDir()}, progressFlags("1", "1")...)
	code, stdout, _ := explore(t, append(args, "--liveness-extra", "1")...)
	if code != exitViolation || !strings.Contains(stdout, "progress fails: ") ||
		!strings.Contains(stdout, "larger budgets: with --liveness-extra 2 (ops 3, grants 3) the witness's stuck state commits: it was stuck for want of budget, not necessarily by the design; run again with --liveness-extra 2") ||
		strings.Contains(stdout, "still commits nothing") {
		t.Fatalf("exit %d, want 1 and the stuck state committing with 2\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(args, "--liveness-extra", "1", "--json")...)
	p := decodeProof(t, stdout).Proof.Progress
	if code != exitViolation || p == nil || p.Holds || !slices.Equal(p.Larger, []larger{{Extra: 2, Ops: 3, Grants: 3, Checked: true, Commits: true}}) {
		t.Fatalf("--json: exit %d, progress %+v", code, p)
	}
	code, stdout, _ = explore(t, append(args, "--liveness-extra", "2", "--json")...)
	if p := decodeProof(t, stdout).Proof.Progress; p == nil || !p.Holds || p.Larger != nil {
		t.Fatalf("--liveness-extra 2: exit %d, progress %+v", code, p)
	}
}

// TestLivenessWitnessNotSaved: a progress witness that cannot be saved
// (the design's folder under --out is a file, which the check before the
// work does not see) is still reported, with its trace, and the error
// said after it; the search's result was lost with exit 2 before.
func TestLivenessWitnessNotSaved(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "reference"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	notSaved := filepath.Join(out, "reference", "progress.jsonl") + " not saved (under --out)"
	args := append([]string{"search", "--variant", "reference", "--liveness", "--liveness-extra", "1", "--out", out}, progressFlags("1", "1")...)
	code, stdout, stderr := explore(t, args...)
	if code != exitViolation || !strings.Contains(stdout, "progress fails: ") ||
		!strings.Contains(stdout, "to a stuck state, not saved (the error follows on standard error)\n") ||
		!strings.Contains(stdout, "reference: incomplete: no violation found, but progress fails (") || !strings.Contains(stderr, notSaved) {
		t.Fatalf("exit %d, want 1, the witness reported and the file not saved named\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = explore(t, append(args, "--json")...)
	p := decodeProof(t, stdout).Proof.Progress
	if code != exitViolation || p == nil || p.Holds || p.Witness == nil || p.Witness.File != "" || p.Witness.Actions == 0 ||
		!strings.Contains(p.Witness.SaveError, notSaved) || !strings.Contains(stderr, notSaved) {
		t.Fatalf("--json: exit %d, progress %+v, stderr %q", code, p, stderr)
	}
}

// TestLivenessNotChecked: progress is checked only after a search that
// explored every reachable state, and within its own state limit and the
// search's heap budget; else the report says "not checked" and why, and a
// search that would otherwise pass exits 3.
func TestLivenessNotChecked(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--liveness", "--out", t.TempDir()}, tinyBFS...)
	for _, c := range []struct {
		extra  []string
		reason string
	}{
		{[]string{"--depth", "22", "--reduce=false"}, "only after a search that explored every reachable state; this one stopped: depth"},
		{[]string{"--max-states", "10"}, "this one stopped: max-states"},
		{[]string{"--liveness-max-states", "100"}, "--liveness-max-states 100 reached"},
		{[]string{"--max-memory", "16MiB"}, "--max-memory 16MiB reached"}, // the search needs less, the check more
	} {
		code, stdout, _ := explore(t, append(base, c.extra...)...)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if code != exitIncomplete || !strings.Contains(stdout, "progress not checked: ") || !strings.Contains(stdout, c.reason) ||
			strings.Contains(stdout, "progress holds") || !strings.HasPrefix(lines[len(lines)-1], "reference: incomplete") {
			t.Errorf("%v: exit %d, want 3, not checked (%s) and a last line saying incomplete\n%s", c.extra, code, c.reason, stdout)
		}
		code, stdout, _ = explore(t, append(append(base, c.extra...), "--json")...)
		p := decodeProof(t, stdout).Proof.Progress
		if code != exitIncomplete || p == nil || p.Checked || p.Holds || !strings.Contains(p.Reason, c.reason) {
			t.Errorf("%v --json: exit %d, progress %+v", c.extra, code, p)
		}
		var top struct {
			Complete *bool  `json:"complete"`
			Stopped  string `json:"stopped"`
		}
		if err := json.Unmarshal([]byte(stdout), &top); err != nil || top.Complete == nil || *top.Complete || top.Stopped == "" {
			t.Errorf("%v --json: \"complete\" %v, \"stopped\" %q; want false and a cause (%v)", c.extra, top.Complete, top.Stopped, err)
		}
	}
}

// TestStoppedSearchSaysWhatItProvesWithinADepth: a search stopped by
// --max-states is no proof, but says what it proves within the levels it
// expanded in full: what --depth at the level it stopped in proves, with
// that search's states, transitions and omission bound; nothing when those
// levels never reached a scene the verdict depends on; nothing for one job
// of a split search (its levels hold its share only).
func TestStoppedSearchSaysWhatItProvesWithinADepth(t *testing.T) {
	base := []string{"search", "--variant", "reference", "--mode", "bfs", "--unexpected", "--workers", "2", "--resources", "1",
		"--ttl", "1", "--ops", "2", "--grants", "2", "--in-flight", "2", "--drops", "1", "--dups", "0", "--crashes", "0",
		"--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0", "--hash-compact", "--out", t.TempDir()}
	code, stdout, _ := explore(t, append(base, "--json", "--max-states", "20000")...)
	stopped := decodeProof(t, stdout)
	w := stopped.Proof.Within
	if code != exitIncomplete || stopped.Proof.Proves || w == nil || !w.Proves || w.Depth < 2 {
		t.Fatalf("--max-states 20000: exit %d, proof %+v, within %+v", code, stopped.Proof, w)
	}
	code, stdout, _ = explore(t, append(base, "--json", "--depth", fmt.Sprint(w.Depth))...)
	bounded := decodeProof(t, stdout)
	if code != exitOK || !bounded.Proof.Proves || bounded.Proof.Within != nil || bounded.BFS.States != w.States ||
		bounded.BFS.Transitions != w.Transitions || bounded.BFS.Omission != w.OmissionBound || w.OmissionBound == 0 {
		t.Fatalf("--depth %d: exit %d, %d states, %d transitions, omission %g; the stopped search within it: %+v",
			w.Depth, code, bounded.BFS.States, bounded.BFS.Transitions, bounded.BFS.Omission, *w)
	}
	_, text, _ := explore(t, append(base, "--max-states", "20000")...)
	if want := fmt.Sprintf("proved instead within depth %d: the 8 invariants judged hold", w.Depth); !strings.Contains(text, want) {
		t.Fatalf("the text does not say %q\n%s", want, text)
	}

	_, stdout, _ = explore(t, append(base, "--json", "--max-states", "50")...)
	early := decodeProof(t, stdout)
	if w := early.Proof.Within; w == nil || w.Proves || !strings.Contains(w.Why, "never reached") {
		t.Fatalf("--max-states 50: within %+v, want no proof: the scenes were never reached", w)
	}
	_, text, _ = explore(t, append(base, "--max-states", "50")...)
	if !strings.Contains(text, "nothing proved within depth") {
		t.Fatalf("--max-states 50: the text does not say that nothing was proved within a depth\n%s", text)
	}

	_, stdout, _ = explore(t, append(base, "--json", "--max-states", "20000", "--shard", "0/2", "--shard-depth", "2")...)
	if job := decodeProof(t, stdout); job.Proof.Within != nil {
		t.Fatalf("one job of a split search proves within %+v", *job.Proof.Within)
	}
}

// TestWithinProofNeedsNoViolationAndEveryScene: the levels a stopped
// search expanded prove nothing when they violate an invariant judged
// (which a search stops at, but a result may say) or miss a scene the
// verdict depends on.
func TestWithinProofNeedsNoViolationAndEveryScene(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "reference")
	if err != nil {
		t.Fatal(err)
	}
	var every checker.Coverage
	for i := range every {
		every[i] = 1
	}
	stop := spec.SetOf("fencing", "exclusive-lease")
	for _, c := range []struct {
		violated spec.Set
		reached  checker.Coverage
		why      string
	}{
		{0, every, ""},
		{spec.SetOf("absolute-validity"), every, ""}, // not judged
		{spec.SetOf("fencing"), every, "violate fencing"},
		{0, checker.Coverage{}, "never reached"},
	} {
		res := checker.BFSResult{Within: &checker.Within{Depth: 7, Violated: c.violated, Reached: c.reached}}
		w := newWithinProof(v, stop, res)
		if w.Proves != (c.why == "") || !strings.Contains(w.Why, c.why) || w.Depth != 7 {
			t.Errorf("violated %v, reached %v: %+v, want proves %v, why %q", c.violated.IDs(), c.reached, *w, c.why == "", c.why)
		}
	}
	if w := newWithinProof(v, stop, checker.BFSResult{}); w != nil {
		t.Errorf("no levels expanded: %+v", *w)
	}
}

// TestAnyTiming: the proof's bounds line explains a delay or pause bound
// of 0 (any) only for those that are 0 (it said "delay 0, pause 0: any"
// beside --delay 1 --pause 1).
func TestAnyTiming(t *testing.T) {
	for _, c := range []struct {
		delay, pause int
		want         string
	}{{0, 0, " (delay 0, pause 0: any)"}, {1, 0, " (pause 0: any)"}, {0, 2, " (delay 0: any)"}, {1, 1, ""}} {
		if got := anyTiming(model.Config{Delay: c.delay, Pause: c.pause}); got != c.want {
			t.Errorf("delay %d, pause %d: %q, want %q", c.delay, c.pause, got, c.want)
		}
	}
}

// TestSearchSaysAViolationIsExpected: a search that stops at a violation
// the variant expects says so (the reference's random search stopped at
// absolute-validity, exit 1, reading as if the reference were unsafe); one
// it does not expect does not (reject-all's write of the fence's own token
// rejected as fenced: resource-independence).
func TestSearchSaysAViolationIsExpected(t *testing.T) {
	const note = "— expected of this variant (--unexpected searches past the violations it expects)"
	code, stdout, _ := explore(t, "search", "--variant", "reference", "--runs", "2000", "--out", t.TempDir())
	if code != exitViolation || !strings.Contains(stdout, "reference violates absolute-validity: counterexample of ") ||
		!strings.Contains(stdout, note) {
		t.Errorf("reference: exit %d\n%s", code, stdout)
	}
	flags := progressFlags("2", "0")
	flags[slices.Index(flags, "--ops")+1] = "2"
	code, stdout, _ = exploreWith(t, append(designs.All(), rejectAll),
		append([]string{"search", "--variant", "reject-all", "--out", t.TempDir()}, flags...)...)
	if code != exitViolation || !strings.Contains(stdout, "reject-all violates resource-independence: ") || strings.Contains(stdout, note) {
		t.Errorf("reject-all: exit %d\n%s", code, stdout)
	}
}

// TestCampaignHintFollowsTheMissingViolations: the campaign's hints on why
// a violation was not found (random runs can miss it; no run reached the
// scene it depends on) follow the violations not found, not the unexpected
// ones after them.
func TestCampaignHintFollowsTheMissingViolations(t *testing.T) {
	flags := progressFlags("2", "0")[2:] // no --mode
	flags[slices.Index(flags, "--ops")+1], flags[slices.Index(flags, "--grants")+1] = "2", "2"
	code, stdout, _ := exploreWith(t, []spec.Variant{rejectAll},
		append([]string{"campaign", "--runs", "300", "--out", t.TempDir()}, flags...)...)
	want := "expected violations not found: absolute-validity (in 300 random runs, which can miss them: try more --runs, " +
		"another --seed, or search --variant reject-all --mode bfs); unexpected violations: "
	if code != exitViolation || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, want 1 and %q\n%s", code, want, stdout)
	}
	// One grant: no takeover, and the hint is checker's, that no run
	// reached the scene the missing verdict depends on.
	flags[slices.Index(flags, "--grants")+1] = "1"
	code, stdout, _ = exploreWith(t, []spec.Variant{rejectAll},
		append([]string{"campaign", "--runs", "300", "--out", t.TempDir()}, flags...)...)
	want = "expected violations not found: absolute-validity (none of the 300 random runs reached takeover,stale-write, " +
		"which the verdict depends on: that is why; more runs or steps may reach it); unexpected violations: "
	if code != exitViolation || !strings.Contains(stdout, want) {
		t.Errorf("one grant: exit %d, want 1 and %q\n%s", code, want, stdout)
	}
}
