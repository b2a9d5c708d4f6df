package explore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestVacuousSearchIsNoPass: a search that finds nothing because its bound
// never lets a takeover happen (one grant) says so. A BFS claims a proof, so
// one that never reached the scene is none: exit 3. A random search whose
// whole budget was done ends as the contract says (exit 0: every run of the
// budget done, no violation), saying plainly that its runs never reached
// the scene and that a larger --runs is needed (it exited 3, incomplete,
// though nothing had stopped it).
func TestVacuousSearchIsNoPass(t *testing.T) {
	args := []string{"search", "--variant", "reference", "--unexpected", "--workers", "2", "--resources", "1",
		"--ttl", "1", "--ops", "1", "--grants", "1", "--drops", "0", "--dups", "0", "--crashes", "0",
		"--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0", "--quiet", "--out", t.TempDir()}
	code, stdout, _ := explore(t, append(args, "--mode", "bfs")...)
	if code != exitIncomplete || !strings.Contains(stdout, "never reached takeover") {
		t.Errorf("--mode bfs: exit %d, want %d saying what was never reached\n%s", code, exitIncomplete, stdout)
	}
	code, stdout, _ = explore(t, append(args, "--mode", "random", "--runs", "200")...)
	if code != exitOK || !strings.Contains(stdout, "vacuous: no run reached takeover") ||
		!strings.Contains(stdout, "a larger --runs is needed") || !strings.Contains(stdout, "no proof") {
		t.Errorf("--mode random: exit %d, want %d saying vacuous and what was never reached\n%s", code, exitOK, stdout)
	}
	code, stdout, _ = explore(t, append(args, "--mode", "random", "--runs", "200", "--json")...)
	var res struct {
		Complete *bool  `json:"complete"`
		Vacuous  string `json:"vacuous"`
		Runs     int    `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitOK || res.Complete == nil || !*res.Complete ||
		!strings.Contains(res.Vacuous, "takeover") || res.Runs != 200 {
		t.Errorf("--mode random --json: exit %d, %v, %s", code, err, stdout)
	}
}

// TestRandomSearchVacuousExitsZero: the probe's case, at the default
// bounds: 20 runs of the reference never land a stale write; the budget
// was done and nothing was found, so exit 0, with "vacuous" said.
func TestRandomSearchVacuousExitsZero(t *testing.T) {
	code, stdout, _ := explore(t, "search", "--variant", "reference", "--invariant", "fencing", "--runs", "20", "--quiet", "--out", t.TempDir())
	if code != exitOK || !strings.Contains(stdout, "vacuous: no run reached stale-write") || strings.Contains(stdout, "incomplete") {
		t.Errorf("exit %d, want 0 saying vacuous\n%s", code, stdout)
	}
}

// TestMergeOfVacuousRandomJobs: the merge of random jobs that did their
// budgets and together never reached a scene ends as the unsplit search
// does: exit 0, saying vacuous (it said incomplete, exit 3).
func TestMergeOfVacuousRandomJobs(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		code, stdout, _ := explore(t, "search", "--variant", "reference", "--invariant", "fencing", "--runs", "10", "--shard", fmt.Sprintf("%d/2", i),
			"--json", "--quiet", "--out", dir)
		if code != exitOK {
			t.Fatalf("job %d: exit %d\n%s", i, code, stdout)
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("job%d.json", i)))
		if err := os.WriteFile(paths[i], []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ := explore(t, append([]string{"merge"}, paths...)...)
	if code != exitOK || !strings.Contains(stdout, "but vacuous: no run reached stale-write") || strings.Contains(stdout, "incomplete") {
		t.Errorf("merge: exit %d, want 0 saying vacuous\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append([]string{"merge", "--json"}, paths...)...)
	var out struct {
		Complete bool   `json:"complete"`
		Vacuous  string `json:"vacuous"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitOK || !out.Complete || out.Vacuous == "" {
		t.Errorf("merge --json: exit %d, %+v, %v\n%s", code, out, err, stdout)
	}
}

// campaignRows runs a campaign of the named variants and decodes its --json.
func campaignRows(t *testing.T, names []string, args ...string) (int, vacuousCampaign) {
	t.Helper()
	var cat []spec.Variant
	for _, name := range names {
		v, err := spec.LookupVariant(designs.All(), name)
		if err != nil {
			t.Fatal(err)
		}
		cat = append(cat, v)
	}
	return campaignOf(t, cat, args...)
}

// campaignOf runs the campaign over the variants of cat with args, and
// reads its --json rows.
func campaignOf(t *testing.T, cat []spec.Variant, args ...string) (int, vacuousCampaign) {
	t.Helper()
	code, stdout, _ := exploreWith(t, cat, append(args, "--json", "--out", t.TempDir())...)
	var res vacuousCampaign
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s", code, err, stdout)
	}
	return code, res
}

// vacuousCampaign is the campaign's --json, as far as these tests read it.
type vacuousCampaign struct {
	OK       bool   `json:"ok"`
	Complete bool   `json:"complete"`
	Stopped  string `json:"stopped"`
	Budget   int    `json:"budget"`
	Total    int    `json:"budgetTotal"`
	Runs     int    `json:"runs"`
	Variants []struct {
		Variant    string `json:"variant"`
		Expected   bool   `json:"expected"`
		Unexpected bool   `json:"unexpected"`
		Problem    string `json:"problem"`
		Vacuous    string `json:"vacuous"`
		Complete   bool   `json:"complete"`
		Cells      []struct {
			Invariant string `json:"invariant"`
			Verdict   string `json:"verdict"`
			Expected  bool   `json:"expected"`
		} `json:"cells"`
	} `json:"variants"`
}

// TestVacuousCampaignRows: a campaign whose bound never lets a takeover
// happen (one grant) follows the contract (0: every verdict the one the
// spec expects; 1: one it does not expect). A row whose verdicts are the
// expected ones (sink-deadline, expected to hold everything) is as
// expected, saying in "vacuous" that no run reached a takeover; a row
// whose expected violation was not found (the reference's
// absolute-validity) is UNEXPECTED, saying its runs never reached the
// scene. Before, each was no verdict and the campaign exit 3, incomplete,
// though every run of its budget was done.
func TestVacuousCampaignRows(t *testing.T) {
	code, res := campaignRows(t, []string{"sink-deadline"}, "--runs", "30", "--steps", "20", "--grants", "1")
	if code != exitOK || !res.OK || !res.Complete || res.Runs != 30 || len(res.Variants) != 1 {
		t.Fatalf("sink-deadline alone: exit %d, %+v: want 0, complete", code, res)
	}
	if v := res.Variants[0]; !v.Expected || v.Unexpected || !v.Complete || !strings.Contains(v.Vacuous, "takeover") {
		t.Errorf("sink-deadline: %+v: want as expected, vacuous naming takeover", v)
	}
	code, res = campaignRows(t, []string{"sink-deadline", "reference"}, "--runs", "30", "--steps", "20", "--grants", "1")
	if code != exitViolation || res.OK || !res.Complete || res.Stopped != "" {
		t.Errorf("exit %d, complete %v, stopped %q: want 1, complete", code, res.Complete, res.Stopped)
	}
	if ref := res.Variants[1]; ref.Expected || !ref.Unexpected || !strings.Contains(ref.Problem, "expected violations not found: absolute-validity") ||
		!strings.Contains(ref.Problem, "none of the 30 random runs reached takeover") || !strings.Contains(ref.Vacuous, "takeover") {
		t.Errorf("reference: %+v: want UNEXPECTED, saying no run reached a takeover", ref)
	}
	var cat []spec.Variant
	for _, name := range []string{"sink-deadline", "reference"} {
		v, _ := spec.LookupVariant(designs.All(), name)
		cat = append(cat, v)
	}
	code, stdout, _ := exploreWith(t, cat, "--runs", "30", "--steps", "20", "--grants", "1", "--quiet", "--out", t.TempDir())
	if code != exitViolation || !strings.Contains(stdout, "as expected, vacuous: no run reached takeover") ||
		!strings.Contains(stdout, "VACUOUS sink-deadline: as expected, but none of the 30 runs reached takeover") ||
		!strings.Contains(stdout, "UNEXPECTED reference: expected violations not found: absolute-validity (none of the 30 random runs reached takeover") ||
		strings.Contains(stdout, "incomplete") {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}
}

// TestEitherInvariantIsEnough: a variant expected to violate one of two
// invariants (Expectation.AnyOf, as check-then-write in the contract's
// table) whose campaign finds only one of them is as expected, the other's
// cell an expected hold (it was UNEXPECTED: both required). The design is
// ttl-only-lock's, which violates fencing and never token-monotonic.
func TestEitherInvariantIsEnough(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "ttl-only-lock")
	if err != nil {
		t.Fatal(err)
	}
	v.Name = "fencing-or-token-monotonic"
	v.Expect = spec.Expectation{Violates: spec.NonGuarantee, AnyOf: spec.SetOf(spec.Fencing, spec.TokenMonotonic), May: v.Expect.May}
	code, res := campaignOf(t, []spec.Variant{v}, "--runs", "200", "--seed", "2")
	if len(res.Variants) != 1 {
		t.Fatalf("exit %d, %+v", code, res)
	}
	row := res.Variants[0]
	verdict := map[string]string{}
	for _, c := range row.Cells {
		verdict[c.Invariant] = c.Verdict
		if !c.Expected {
			t.Errorf("cell %s %s: not expected", c.Invariant, c.Verdict)
		}
	}
	if verdict[spec.Fencing] != "violated" || verdict[spec.TokenMonotonic] != "holds" {
		t.Fatalf("fencing %s, token-monotonic %s: the seed no longer shows the case (find another)", verdict[spec.Fencing], verdict[spec.TokenMonotonic])
	}
	if code != exitOK || !row.Expected || row.Unexpected {
		t.Errorf("exit %d, row %+v: want as expected", code, row)
	}
}

// TestCampaignDesignFaultIsUnexpected: a design whose decision panics ends
// its runs at the fault; the campaign reports that row UNEXPECTED with the
// fault and exits 1 (it read "incomplete", exit 3, with no word of the
// fault, as if the budget had stopped it).
func TestCampaignDesignFaultIsUnexpected(t *testing.T) {
	faulty := spec.Variant{Name: "faulty", Design: model.Design{Renew: func(model.Lease, model.Msg) uint8 {
		panic("renew: not written yet")
	}}}
	code, stdout, _ := exploreWith(t, []spec.Variant{faulty}, "--runs", "300", "--out", t.TempDir())
	if code != exitViolation || !strings.Contains(stdout, "UNEXPECTED faulty: a step panicked: renew: not written yet") {
		t.Errorf("exit %d, want 1 and the fault named\n%s", code, stdout)
	}
}

// TestSearchNeeds: a design with no fence that is safe never lets a stale
// write reach the sink, so by the default scenes its search is vacuous
// whatever the bound (it said "a wider bound is needed"); --needs takeover
// makes the same search a proof, and a split search's jobs carry it to
// merge, which refuses jobs of different --needs.
func TestSearchNeeds(t *testing.T) {
	args := []string{"search", "--variant", "holder-margin@margin=4", "--mode", "bfs", "--invariant", "fencing", "--workers", "2",
		"--resources", "1", "--ttl", "5", "--ops", "2", "--grants", "2", "--in-flight", "1", "--drops", "0", "--dups", "0",
		"--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0", "--delay", "1", "--pause", "1",
		"--quiet", "--out", t.TempDir()}
	if code, stdout, _ := explore(t, args...); code != exitIncomplete || !strings.Contains(stdout, "--needs names what it depends on") {
		t.Errorf("default scenes: exit %d, want 3 and --needs named\n%s", code, stdout)
	}
	needs := append(slices.Clone(args), "--needs", "takeover")
	if code, stdout, _ := explore(t, needs...); code != exitOK || !strings.Contains(stdout, "proof: the invariant judged holds") {
		t.Errorf("--needs takeover: exit %d, want a proof\n%s", code, stdout)
	}
	dir := t.TempDir()
	var files []string
	for i, extra := range [][]string{{"--needs", "takeover"}, {"--needs", "takeover"}, nil} {
		_, stdout, _ := explore(t, append(append(slices.Clone(args), extra...), "--shard", fmt.Sprintf("%d/2", min(i, 1)), "--json")...)
		files = append(files, filepath.Join(dir, fmt.Sprintf("job%d.json", i)))
		if err := os.WriteFile(files[i], []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, _ := explore(t, "merge", files[0], files[1]); code != exitOK {
		t.Errorf("merge of the --needs takeover jobs: exit %d, want 0\n%s", code, stdout)
	}
	if code, _, stderr := explore(t, "merge", files[0], files[2]); code != exitUsage || !strings.Contains(stderr, `field "needs"`) {
		t.Errorf("merge of jobs of different --needs: exit %d, stderr %q", code, stderr)
	}
}
