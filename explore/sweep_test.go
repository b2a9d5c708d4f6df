package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/internal/browser"
	"github.com/fencecheck/fencecheck/viz"
)

// small is a bound at which every point of a restart sweep is searched in
// well under a second.
var small = []string{"--workers", "2", "--resources", "1", "--ops", "2", "--grants", "2", "--in-flight", "2",
	"--drops", "0", "--dups", "0", "--crashes", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0",
	"--max-states", "20000", "--runs", "300", "--quiet"}

// TestSweepRestartGrace sweeps the restart grace period against ttl: a
// grace period shorter than ttl lets a restarted coordinator grant a lease
// its holder still counts on; the rule found is grace ≥ ttl, and every
// violated cell links a saved counterexample that replays. The safe cells
// are proofs (within --depth 14): a rule is built on proofs alone, so the
// same grid searched with too few states for a proof states none.
func TestSweepRestartGrace(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..3", "--param", "ttl=1..2",
		"--invariant", "exclusive-lease", "--json", "--depth", "14"}
	args := append(append(slices.Clip(grid), "--out", dir), small...)
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, designs.All())
	var res sweepResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s\n%s", code, err, out.String(), errb.String())
	}
	if len(res.Grid.Cells) != 8 {
		t.Fatalf("%d cells, want 8", len(res.Grid.Cells))
	}
	links := map[string]bool{}
	violated := 0
	for _, c := range res.Grid.Cells {
		if c.Verdict == viz.VerdictViolated {
			violated++
			links[c.Link] = true
		}
	}
	if len(links) != violated {
		t.Errorf("%d violated cells share %d timelines: each cell needs its own", violated, len(links))
	}
	for _, c := range res.Grid.Cells {
		if wantBad := c.X < c.Y; wantBad != (c.Verdict == viz.VerdictViolated) || !wantBad && !c.Proof {
			t.Errorf("grace=%d ttl=%d: %s (%s, proof %v), want violated=%v or a proof", c.X, c.Y, c.Verdict, c.Detail, c.Proof, wantBad)
		}
		if c.Verdict != viz.VerdictViolated {
			continue
		}
		if c.Length == 0 || c.Link == "" || c.Method == "bfs" && !strings.HasPrefix(c.Detail, "shortest") {
			t.Errorf("violated cell %+v: want a counterexample with a link", c)
			continue
		}
		page := filepath.Join(dir, "sweep", "restart-no-grace", c.Link)
		if _, err := os.Stat(page); err != nil {
			t.Errorf("cell's timeline: %v", err)
		}
		hist := strings.TrimSuffix(page, ".html") + ".jsonl"
		var rout, rerr bytes.Buffer
		code := run(context.Background(), []string{"replay", hist}, &rout, &rerr, designs.All())
		if code == exitUsage || !strings.Contains(rout.String(), "reproduces all") || !strings.Contains(rout.String(), "violated: exclusive-lease") {
			t.Errorf("replay %s: exit %d, want the violation reproduced\n%s%s", hist, code, rout.String(), rerr.String())
		}
	}
	if got := res.Grid.Rules["exclusive-lease"]; !strings.HasPrefix(got, "safe iff grace ≥ ttl") {
		t.Errorf("rule %q, want safe iff grace ≥ ttl", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep", "restart-no-grace", "heatmap.html")); err != nil {
		t.Errorf("heat map: %v", err)
	}
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
	out.Reset()
	few := slices.Clone(small)
	few[slices.Index(few, "--max-states")+1] = "50"
	code = run(context.Background(), append(append(slices.Clip(grid), "--out", t.TempDir()), few...), &out, &errb, designs.All())
	var budget sweepResult
	if err := json.Unmarshal(out.Bytes(), &budget); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out.String(), errb.String())
	}
	if got := budget.Grid.Rules["exclusive-lease"]; got != "" {
		t.Errorf("with safe cells only within a budget (--max-states 50), rule %q: want none", got)
	}
}

// TestSweepBadInput: unknown variants, parameters, ranges and invariants
// are usage errors naming the flag.
func TestSweepBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--param", "grace=0..2"}, "--variant is required"},
		{[]string{"--variant", "nope", "--param", "grace=0..2"}, "unknown variant"},
		{[]string{"--variant", "restart-no-grace"}, "want one or two"},
		{[]string{"--variant", "restart-no-grace", "--param", "bogus=0..2"}, "unknown parameter"},
		{[]string{"--variant", "restart-no-grace", "--param", "grace=3..1"}, "LO <= HI"},
		{[]string{"--variant", "restart-no-grace", "--param", "grace=-1..1"}, "range is"},
		{[]string{"--variant", "restart-no-grace", "--param", "ttl=0..1"}, "ttl=0 out of range"},
		{[]string{"--variant", "restart-no-grace", "--param", "grace=0..1", "--invariant", "nope"}, "unknown invariant"},
		{[]string{"--variant", "restart-no-grace", "--param", "grace=0..1", "--param", "grace=0..1"}, "swept twice"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"sweep"}, tc.args...), &out, &errb, designs.All())
		if code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestSweepCellNotSaved: a cell's counterexample that cannot be saved
// (its file's name is taken by a folder, which the check of --out before
// the work does not see) does not lose the sweep: the grid is reported, the
// cell without a link, the heat map saved, and the error said after it
// (exit 2, never 0). The sweep stopped there with only the error before.
func TestSweepCellNotSaved(t *testing.T) {
	out := t.TempDir()
	dir := filepath.Join(out, "sweep", "restart-no-grace")
	taken := filepath.Join(dir, "grace0-exclusive-lease.jsonl")
	if err := os.MkdirAll(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--invariant", "exclusive-lease",
		"--restarts", "1", "--out", out}, small...)
	code, stdout, stderr := explore(t, args...)
	if code != exitUsage || !strings.Contains(stdout, "✗") || !strings.Contains(stdout, "heat map: "+filepath.Join(dir, "heatmap.html")) ||
		!strings.Contains(stderr, taken+" not saved (under --out)") {
		t.Fatalf("exit %d, want 2 after the grid, its violation and the heat map\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = explore(t, append(args, "--json")...)
	var res sweepResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitUsage || !strings.Contains(res.SaveError, taken) ||
		!strings.Contains(stderr, taken) || len(res.Grid.Cells) != 2 {
		t.Fatalf("--json: exit %d, %v, %+v, stderr %q", code, err, res, stderr)
	}
	if c := res.Grid.Cells[0]; c.Verdict != viz.VerdictViolated || c.Link != "" {
		t.Errorf("the cell not saved: %+v, want violated and no link", c)
	}
}

// TestMergeHeatmapNotSaved: a merged sweep whose heat map cannot be
// saved (its folder's name is taken by a file) still prints the merged
// grid, and says the error after it (exit 2): only the error was said.
func TestMergeHeatmapNotSaved(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		args := append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--invariant", "exclusive-lease",
			"--shard", fmt.Sprintf("%d/2", i), "--json", "--out", dir}, small...)
		code, stdout, stderr := explore(t, args...)
		if code == exitUsage {
			t.Fatalf("%v: %s", args, stderr)
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("job%d.json", i)))
		if err := os.WriteFile(paths[i], []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "sweep"), 0o755); err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(out, "sweep", "restart-no-grace")
	if err := os.WriteFile(taken, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := explore(t, append([]string{"merge", "--out", out}, paths...)...)
	if code != exitUsage || !strings.Contains(stdout, "exclusive-lease on restart-no-grace") ||
		!strings.Contains(stdout, "heat map not saved (2 jobs; the error follows on standard error)") ||
		!strings.Contains(stderr, filepath.Join(taken, "heatmap.html")+" not saved (under --out)") {
		t.Fatalf("merge: exit %d, want 2 after the grid\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestFitRule checks the rule finder against grids with a known boundary,
// and that it states none where a cell is incomplete or no line separates.
func TestFitRule(t *testing.T) {
	grid := func(safe func(x, y int) bool) viz.SweepGrid {
		g := viz.SweepGrid{X: viz.Axis{Name: "margin", Values: []int{0, 1, 2, 3, 4}}, Y: viz.Axis{Name: "skew", Values: []int{0, 1, 2}}}
		for _, y := range g.Y.Values {
			for _, x := range g.X.Values {
				v := viz.VerdictViolated
				if safe(x, y) {
					v = viz.VerdictSafe
				}
				g.Cells = append(g.Cells, viz.SweepCell{X: x, Y: y, Invariant: "i", Verdict: v, Proof: v == viz.VerdictSafe})
			}
		}
		return g
	}
	for _, tc := range []struct {
		safe func(x, y int) bool
		want string
	}{
		{func(x, y int) bool { return x >= y+1 }, "safe iff margin ≥ skew + 1 on this grid"},
		{func(x, y int) bool { return x >= 2*y }, "safe iff margin ≥ 2·skew on this grid"},
		{func(x, y int) bool { return y == 0 }, "safe iff skew ≤ 0 on this grid"},
		{func(x, y int) bool { return true }, "safe at every point on this grid"},
		{func(x, y int) bool { return false }, "violated at every point on this grid"},
		{func(x, y int) bool { return (x+y)%2 == 0 }, ""},
	} {
		if got := fitRule(grid(tc.safe), "i"); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	g := grid(func(x, y int) bool { return x > y })
	g.Cells[3].Verdict = viz.VerdictIncomplete
	if got := fitRule(g, "i"); got != "" {
		t.Errorf("a grid with an incomplete cell got rule %q", got)
	}
	// A sweep stopped before its last cell: no rule, whatever the cells it
	// has show.
	g = grid(func(x, y int) bool { return x >= 1 })
	g.Cells = g.Cells[:len(g.Cells)-1]
	if got := fitRule(g, "i"); got != "" {
		t.Errorf("a grid with a missing cell got rule %q", got)
	}
	g = grid(func(x, y int) bool { return x > y })
	g.Cells[4].Proof = false // safe within a random search's budget: ✓?
	if got := fitRule(g, "i"); got != "" {
		t.Errorf("a grid with a cell safe only within a budget got rule %q", got)
	}
}

// TestSweepShardsMerge: a sweep split into two jobs and merged gives the
// unsplit sweep's grid, cell for cell, and its rule.
func TestSweepShardsMerge(t *testing.T) {
	dir := t.TempDir()
	base := append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..2", "--param", "ttl=1..2",
		"--invariant", "exclusive-lease", "--out", dir, "--json"}, small...)
	sweep := func(extra ...string) []byte {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append(append([]string{}, base...), extra...), &out, &errb, designs.All()); code == exitUsage {
			t.Fatalf("sweep %v: %s", extra, errb.String())
		}
		return out.Bytes()
	}
	var whole sweepResult
	if err := json.Unmarshal(sweep(), &whole); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, job := range [][]byte{sweep("--shard", "0/2"), sweep("--shard", "1/2")} {
		p := filepath.Join(dir, "job"+string(rune('0'+i))+".json")
		if err := os.WriteFile(p, job, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"merge", "--json", "--out", dir}, paths...), &out, &errb, designs.All())
	var merged sweepResult
	if err := json.Unmarshal(out.Bytes(), &merged); err != nil {
		t.Fatalf("merge exit %d: %v\n%s%s", code, err, out.String(), errb.String())
	}
	if len(merged.Grid.Cells) != len(whole.Grid.Cells) {
		t.Fatalf("merged %d cells, unsplit %d", len(merged.Grid.Cells), len(whole.Grid.Cells))
	}
	for i, c := range merged.Grid.Cells {
		w := whole.Grid.Cells[i]
		if c.X != w.X || c.Y != w.Y || c.Verdict != w.Verdict || c.Length != w.Length {
			t.Errorf("cell %d: merged %+v, unsplit %+v", i, c, w)
		}
	}
	if merged.Grid.Rules["exclusive-lease"] != whole.Grid.Rules["exclusive-lease"] || merged.Complete != whole.Complete {
		t.Errorf("merged rule %q complete %v, unsplit %q %v", merged.Grid.Rules["exclusive-lease"], merged.Complete,
			whole.Grid.Rules["exclusive-lease"], whole.Complete)
	}
	if code := run(context.Background(), []string{"merge", paths[0]}, &out, &errb, designs.All()); code != exitUsage {
		t.Errorf("merging one job of two: exit %d, want 2", code)
	}
}

// TestSweepHeatmapInBrowser loads the heat map a sweep generated in
// headless Chromium: every cell is laid out, and a violated cell links
// its counterexample's timeline, which exists beside the page.
func TestSweepHeatmapInBrowser(t *testing.T) {
	bin := browser.Chromium(t)
	dir := t.TempDir()
	args := append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..2", "--param", "ttl=1..2",
		"--invariant", "exclusive-lease", "--out", dir}, small...)
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &out, &errb, designs.All()); code == exitUsage {
		t.Fatalf("sweep: %s", errb.String())
	}
	page := filepath.Join(dir, "sweep", "restart-no-grace", "heatmap.html")
	dom := browser.DumpDOM(t, bin, page, 1400)
	if m := regexp.MustCompile(`data-cells-rendered="(\d+)"`).FindStringSubmatch(dom); m == nil || m[1] != "6" {
		t.Fatalf("cells rendered: %v, want 6", m)
	}
	link := regexp.MustCompile(`data-verdict="violated"[^>]*><a href="([^"]+)"`).FindStringSubmatch(dom)
	if link == nil {
		t.Fatalf("no violated cell linked to a timeline in the rendered page:\n%.3000s", dom)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(page), link[1])); err != nil {
		t.Errorf("the linked timeline: %v", err)
	}
	timeline := browser.DumpDOM(t, bin, filepath.Join(filepath.Dir(page), link[1]), 1400)
	if !strings.Contains(timeline, "exclusive-lease") {
		t.Errorf("the linked timeline does not show exclusive-lease")
	}
}

// TestDocsSweepCellsReplay: every counterexample behind a violated cell of
// the worked examples in docs/sweep.md replays on the model event for event
// and violates the invariant its file names.
func TestDocsSweepCellsReplay(t *testing.T) {
	files, _ := filepath.Glob("../docs/sweep/*/*.jsonl")
	if len(files) < 10 {
		t.Fatalf("%d counterexamples under docs/sweep, want the worked examples' (at least 10)", len(files))
	}
	for _, f := range files {
		inv := ""
		for _, id := range []string{"exclusive-lease", "fencing"} {
			if strings.HasSuffix(f, "-"+id+".jsonl") {
				inv = id
			}
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"replay", f}, &out, &errb, designs.All())
		if code == exitUsage || inv == "" || !strings.Contains(out.String(), "reproduces all") || !strings.Contains(out.String(), "violated: "+inv) {
			t.Errorf("%s: exit %d\n%s%s", f, code, out.String(), errb.String())
		}
	}
}

// TestSweepOneAxisEveryParameterisedDesign: a one-parameter sweep runs for
// every built-in design with parameters and gives every cell a verdict.
func TestSweepOneAxisEveryParameterisedDesign(t *testing.T) {
	n := 0
	for _, v := range designs.All() {
		if len(v.Params) == 0 {
			continue
		}
		n++
		p := v.Params[0]
		args := append([]string{"sweep", "--variant", v.Name, "--param", p.Name + "=0..1", "--out", t.TempDir(), "--json",
			"--runs", "50", "--max-states", "2000", "--quiet"}, small[:len(small)-5]...)
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb, designs.All())
		var res sweepResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || code == exitUsage {
			t.Fatalf("%s: exit %d, %v\n%s", v.Name, code, err, errb.String())
		}
		if want := 2 * len(res.Grid.Invariants); len(res.Grid.Cells) != want || res.Grid.Y.Name != "" {
			t.Errorf("%s: %d cells on a 1-D grid, want %d", v.Name, len(res.Grid.Cells), want)
		}
		for _, c := range res.Grid.Cells {
			if c.Verdict == "" || c.Method == "" {
				t.Errorf("%s: cell without a verdict: %+v", v.Name, c)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d designs with parameters, want at least 3", n)
	}
}

// TestSweepCutShortIsIncomplete: a sweep stopped by --time before its
// points are searched says incomplete, why, and how many cells it
// searched (none: the points it never reached were counted as searched),
// and exits 3, in text and JSON; so does the merge of its shards when one
// of them stopped.
func TestSweepCutShortIsIncomplete(t *testing.T) {
	dir := t.TempDir()
	base := append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..3", "--param", "ttl=1..3",
		"--invariant", "fencing", "--out", dir}, small...)
	var out, errb bytes.Buffer
	code := run(context.Background(), append(base, "--time", "1ns"), &out, &errb, designs.All())
	if want := "incomplete: 0 of 12 cells searched, 0 of them incomplete (time limit)"; code != exitIncomplete ||
		!strings.Contains(out.String(), want) || !strings.Contains(out.String(), "; - not searched)") {
		t.Errorf("exit %d, want 3 and %q\n%s%s", code, want, out.String(), errb.String())
	}
	out.Reset()
	code = run(context.Background(), append(base, "--time", "1ns", "--json"), &out, &errb, designs.All())
	var res sweepResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || code != exitIncomplete || res.Complete ||
		res.Stopped != "time limit" || len(res.Grid.Cells) != 0 {
		t.Errorf("--json: exit %d, complete %v, stopped %q, %d cells, %v", code, res.Complete, res.Stopped, len(res.Grid.Cells), err)
	}

	var files []string
	for i, extra := range [][]string{nil, {"--time", "1ns"}} {
		out.Reset()
		run(context.Background(), append(append(base, "--json", "--shard", []string{"0/2", "1/2"}[i]), extra...), &out, &errb, designs.All())
		f := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out.Reset()
	code = run(context.Background(), append([]string{"merge", "--out", dir}, files...), &out, &errb, designs.All())
	if want := "incomplete: 6 of 12 cells searched, 0 of them incomplete (time limit)"; code != exitIncomplete || !strings.Contains(out.String(), want) {
		t.Errorf("merge: exit %d, want 3 and %q\n%s%s", code, want, out.String(), errb.String())
	}
}

// TestSweepCellSaysHowFarItsProofIs: a point whose BFS stops at
// --max-states says in its cell, where the levels allow a projection,
// how many states in all its proof is projected to take, and what the
// levels it expanded in full prove.
func TestSweepCellSaysHowFarItsProofIs(t *testing.T) {
	args := []string{"sweep", "--variant", "reference", "--param", "ttl=1", "--workers", "2", "--resources", "1", "--ops", "2",
		"--grants", "2", "--in-flight", "2", "--drops", "1", "--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0",
		"--skew", "0", "--sink-restarts", "0", "--runs", "20", "--quiet", "--json", "--out", t.TempDir()}
	for _, c := range []struct {
		maxStates string
		projected bool // of 23,606 states in all: 22,996 projected (23,753 to 24,994), 15,194 not yet
		// and what the levels expanded in full prove: as --depth 19 and 16
		// would (explore search --max-states 22000 says "within depth 19");
		// nothing where they never reached a stale write
		proved string
	}{{"22000", true, ", every run of up to 19 actions proved;"}, {"15000", false, ", every run of up to 16 actions proved;"},
		{"50", false, ""}} {
		var out, errb bytes.Buffer
		run(context.Background(), append(args, "--max-states", c.maxStates), &out, &errb, designs.All())
		var res sweepResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("--max-states %s: %v\n%s%s", c.maxStates, err, out.String(), errb.String())
		}
		var detail string
		for _, cell := range res.Grid.Cells {
			if cell.Invariant == "fencing" {
				detail = cell.Detail
			}
		}
		if !strings.Contains(detail, "BFS stopped at") || strings.Contains(detail, "of a projected") != c.projected {
			t.Errorf("--max-states %s: fencing's cell says %q; want a projection: %v", c.maxStates, detail, c.projected)
		}
		if !strings.Contains(detail, c.proved) || c.proved == "" && strings.Contains(detail, "every run of up to") {
			t.Errorf("--max-states %s: fencing's cell says %q; want %q", c.maxStates, detail, c.proved)
		}
	}
}
