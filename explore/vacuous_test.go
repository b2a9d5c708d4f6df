package explore

import (
	"encoding/json"
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
