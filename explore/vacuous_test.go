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
// never lets a takeover happen (one grant) says so and exits 3, never 0.
func TestVacuousSearchIsNoPass(t *testing.T) {
	args := []string{"search", "--variant", "reference", "--unexpected", "--workers", "2", "--resources", "1",
		"--ttl", "1", "--ops", "1", "--grants", "1", "--drops", "0", "--dups", "0", "--crashes", "0",
		"--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0", "--quiet", "--out", t.TempDir()}
	for _, mode := range []string{"bfs", "random"} {
		code, stdout, _ := explore(t, append(args, "--mode", mode, "--runs", "200")...)
		if code != exitIncomplete || !strings.Contains(stdout, "never reached takeover") {
			t.Errorf("--mode %s: exit %d, want %d saying what was never reached\n%s", mode, code, exitIncomplete, stdout)
		}
	}
}

// TestVacuousCampaignIsNoVerdict: a campaign whose bound never lets a
// takeover happen (one grant) has no verdict on the variants whose
// verdicts rest on one: each row says which scene no run reached, none
// is unexpected, and a campaign of such variants is incomplete (exit 3),
// neither a pass nor a failure (it exited 1, UNEXPECTED).
func TestVacuousCampaignIsNoVerdict(t *testing.T) {
	var cat []spec.Variant
	for _, name := range []string{"reference", "check-then-write", "holder-margin"} {
		v, err := spec.LookupVariant(designs.All(), name)
		if err != nil {
			t.Fatal(err)
		}
		cat = append(cat, v)
	}
	code, stdout, _ := exploreWith(t, cat, "--runs", "30", "--steps", "20", "--grants", "1", "--json", "--out", t.TempDir())
	var res struct {
		Complete bool   `json:"complete"`
		Stopped  string `json:"stopped"`
		Budget   int    `json:"budget"`
		Total    int    `json:"budgetTotal"`
		Runs     int    `json:"runs"`
		Variants []struct {
			Variant    string `json:"variant"`
			Expected   bool   `json:"expected"`
			Unexpected bool   `json:"unexpected"`
			Vacuous    string `json:"vacuous"`
		} `json:"variants"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s", code, err, stdout)
	}
	if code != exitIncomplete || res.Complete || !strings.Contains(res.Stopped, "no run reached") {
		t.Errorf("exit %d, complete %v, stopped %q: want 3, incomplete, saying no run reached a scene", code, res.Complete, res.Stopped)
	}
	if res.Budget != 30 || res.Total != 30*len(res.Variants) || res.Runs != res.Total {
		t.Errorf("budget %d, budgetTotal %d, runs %d: want 30 per variant, %d in all, all done", res.Budget, res.Total, res.Runs, 30*len(res.Variants))
	}
	for _, v := range res.Variants {
		if v.Expected || v.Unexpected || !strings.Contains(v.Vacuous, "takeover") {
			t.Errorf("%s: expected %v, unexpected %v, vacuous %q: want no verdict, takeover never reached", v.Variant, v.Expected, v.Unexpected, v.Vacuous)
		}
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
