package explore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
	"github.com/fencecheck/fencecheck/viz"
	"github.com/google/renameio/v2"
)

// axis is one swept parameter: a design's (spec.Param) or the
// environment's (a model.Config field by its JSON name: ttl, skew, delay,
// ...).
type axis struct {
	name   string
	env    bool
	values []int
}

// paramList collects repeated --param flags.
type paramList []string

func (p *paramList) String() string     { return strings.Join(*p, " ") }
func (p *paramList) Set(s string) error { *p = append(*p, s); return nil }
func (p *paramList) repeats()           {}

// sweepResult is what explore sweep --json prints, and what merge combines
// from the jobs of a split sweep.
type sweepResult struct {
	Sweep    bool          `json:"sweep"`
	Variant  string        `json:"variant"`
	Config   model.Config  `json:"config"`
	Shard    checker.Shard `json:"shard"`
	Budget   sweepBudget   `json:"budget"`
	Complete bool          `json:"complete"`
	// Stopped is why the sweep ended before its last point ("time limit",
	// "interrupted"); "" when it did not. The points it did not reach have
	// no cells.
	Stopped string        `json:"stopped,omitempty"`
	Grid    viz.SweepGrid `json:"grid"`
	// SaveError is what could not be saved under --out (a cell's
	// counterexample, the heat map): the grid stands; its cells not saved
	// have no link.
	SaveError string `json:"saveError,omitempty"`
}

// sweepBudget is what each point of a sweep may spend.
type sweepBudget struct {
	MaxStates uint64 `json:"maxStates"` // BFS: states before it gives up on a proof
	Depth     int    `json:"depth"`     // BFS: depth bound of the proof (0: none)
	MaxMemory uint64 `json:"maxMemory"` // BFS: heap budget (0: none)
	// Reduce: the BFS leaves out the steps the model's reductions strike
	// (model.Reductions; the same verdicts, within a depth bound too).
	Reduce model.Reduction `json:"reduce"`
	Runs   int             `json:"runs"` // random search after an incomplete BFS
	Steps  int             `json:"steps"`
	Seed   uint64          `json:"seed"`
}

func runSweep(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("sweep", "--variant NAME --param P=LO..HI [--param Q=LO..HI] [flags]",
		"Search every point of a grid of a design's parameters and the environment's bounds (ttl, skew, delay, ...): per point a BFS proof where it fits --max-states, a random search otherwise; print the grid per invariant, the boundary rule where one fits, and an HTML heat map.", stdout)
	cfg := model.DefaultConfig()
	configFlags(fs, &cfg)
	name := fs.String("variant", "", "the design to sweep (explore variants lists them and their parameters)")
	var params paramList
	fs.Var(&params, "param", "NAME=LO..HI: a parameter to sweep (one or two); a design parameter or a config bound (ttl, skew, delay, ...)")
	needsFlag := fs.String("needs", "", "comma-separated scenes a cell's verdict depends on (default: the variant's; see docs/sweep.md): a bound that reaches none of one leaves the cell incomplete; "+sceneList)
	invFlag := fs.String("invariant", "", "comma-separated invariants to grid (default: the variant's headline, and fencing)")
	maxStates := fs.Uint64("max-states", 300000, "per point: BFS states before giving up on a proof and searching at random")
	depth := fs.Int("depth", 0, "per point: BFS depth bound (0: none), a bound of each proof")
	runs := fs.Int("runs", 3000, "per point: random runs when the BFS did not finish")
	steps := fs.Int("steps", 100, "actions per random run")
	seed := fs.Uint64("seed", 1, "seed of the random searches")
	shardFlag := fs.String("shard", "", "i/n: search only points i, i+n, ... of the grid; combine the jobs' --json with explore merge")
	budget := fs.Duration("time", 0, "stop after this long (0: no limit); points not searched are incomplete (exit 3)")
	memBudget := memoryFlag(fs, "per point: the BFS gives up on a proof when the Go heap reaches this size (0: no limit)")
	reduce := reduceFlag(fs)
	quiet := fs.Bool("quiet", false, "no progress reports on standard error")
	out := fs.String("out", "explore-out", "folder for the heat map and the counterexamples (OUT/sweep/VARIANT/)")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *name == "" {
		return 0, usagef("--variant is required: name the design to sweep")
	}
	v, err := spec.LookupVariant(cat, *name)
	if err != nil {
		return 0, usagef("--variant: %v", err)
	}
	if len(params) == 0 || len(params) > 2 {
		return 0, usagef("--param: want one or two parameters to sweep, got %d (variant %s has %s; config bounds: %s)",
			len(params), v.Name, paramNames(v), strings.Join(configNames(), ", "))
	}
	_, pins, _ := spec.ParseName(*name) // LookupVariant has read it
	var axes []axis
	for _, p := range params {
		a, err := parseAxis(p, v)
		if err != nil {
			return 0, usagef("--param %s: %v", p, err)
		}
		for _, b := range axes {
			if b.name == a.name {
				return 0, usagef("--param %s: swept twice", a.name)
			}
		}
		if _, pinned := pins[a.name]; pinned && !a.env {
			return 0, usagef("--param %s: --variant %s pins %s to one value, so every point would be the same design (leave %s=%d out of --variant)",
				a.name, *name, a.name, a.name, pins[a.name])
		}
		axes = append(axes, a)
	}
	if *needsFlag != "" {
		needs, err := parseNeeds(*needsFlag)
		if err != nil {
			return 0, err
		}
		v.Needs = needs
		v.At = withNeeds(v.At, needs)
	}
	invs, err := sweepInvariants(*invFlag, v)
	if err != nil {
		return 0, usagef("--invariant: %v", err)
	}
	var shard checker.Shard
	if *shardFlag != "" {
		if shard, err = parseShard(*shardFlag); err != nil {
			return 0, err
		}
	}
	if *runs < 0 || *steps < 1 {
		return 0, usagef("--runs must be >= 0 and --steps >= 1")
	}
	if len(axes) == 1 {
		axes = append(axes, axis{values: []int{0}})
	}
	// Every point must be a valid config before anything runs.
	for _, y := range axes[1].values {
		for _, x := range axes[0].values {
			if _, _, err := sweepPoint(v, cfg, axes, x, y); err != nil {
				return 0, usageError{err}
			}
		}
	}
	if *budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *budget)
		defer cancel()
	}
	if *depth < 0 {
		return 0, usagef("--depth must be >= 0")
	}
	b := sweepBudget{MaxStates: *maxStates, Depth: *depth, MaxMemory: uint64(*memBudget), Reduce: model.Reduction(*reduce), Runs: *runs, Steps: *steps, Seed: *seed}
	title := sweptName(v, axes) // the variant the grid is of: its swept parameters not pinned
	dir := filepath.Join(*out, "sweep", title)
	grid := viz.SweepGrid{Variant: title, X: viz.Axis{Name: axes[0].name, Values: axes[0].values},
		Y: viz.Axis{Name: axes[1].name, Values: axes[1].values}, Invariants: invs, Rules: map[string]string{}}
	meter := newMeter(envOf(ctx), *quiet)
	points := len(axes[0].values) * len(axes[1].values)
	start := time.Now()
	k := 0
	// The first file not saved (a full disk): the sweep goes on, its cells
	// keep their verdicts without a link, and the grid is reported with
	// the error after it.
	var saveErr error
points:
	for _, y := range axes[1].values {
		for _, x := range axes[0].values {
			if ctx.Err() != nil {
				break points // the points not reached have no cells: not searched
			}
			k++
			if shard.N > 1 && (k-1)%shard.N != shard.I {
				continue
			}
			meter.update(func(el time.Duration) string {
				return fmt.Sprintf("point %d/%d (%s), %s", k, points, pointName(axes, x, y), el.Round(time.Second))
			})
			pv, pc, _ := sweepPoint(v, cfg, axes, x, y)
			prefix := filepath.Join(dir, pointFile(axes, x, y))
			save := func(inv string, run *model.Run, method string) string {
				link, err := saveCell(prefix, pv, inv, run, method, cat)
				if saveErr == nil {
					saveErr = err
				}
				return link
			}
			cells, err := searchPoint(ctx, pv, pc, invs, b, save)
			if err != nil {
				return 0, err
			}
			for i := range cells {
				cells[i].X, cells[i].Y = x, y
			}
			grid.Cells = append(grid.Cells, cells...)
		}
	}
	meter.done()
	complete := ctx.Err() == nil
	for _, c := range grid.Cells {
		complete = complete && c.Verdict != viz.VerdictIncomplete
	}
	if shard.N <= 1 {
		for _, inv := range invs {
			grid.Rules[inv] = fitRule(grid, inv)
		}
	}
	res := sweepResult{Sweep: true, Variant: title, Config: cfg, Shard: shard, Budget: b, Complete: complete, Grid: grid}
	if ctx.Err() != nil {
		res.Stopped = stopCause(ctx)
	}
	page, err := writeHeatmap(dir, grid)
	saveErr = errors.Join(saveErr, err)
	if saveErr != nil {
		res.SaveError = saveErr.Error()
	}
	code := exitOK
	if !complete {
		code = exitIncomplete
	}
	if *jsonOut {
		if err := writeJSON(stdout, res); err != nil {
			return 0, err
		}
		return code, reported(code, saveErr)
	}
	printGrid(stdout, grid, b.Depth)
	printHeatmapLine(stdout, page, time.Since(start).Round(time.Millisecond).String())
	if !complete {
		fmt.Fprintf(stdout, "incomplete: %s\n", sweepHowFar(res.Stopped, grid))
	}
	return code, reported(code, saveErr)
}

// sceneList names the scenes --needs takes.
const sceneList = "takeover, stale-write, renew-at-deadline, restart, crash, lost-grant, sink-restart, forgery"

// parseNeeds reads --needs: comma-separated scenes.
func parseNeeds(s string) (model.Scene, error) {
	var needs model.Scene
	for _, n := range strings.Split(s, ",") {
		sc, err := model.ParseScene(strings.TrimSpace(n))
		if err != nil {
			return 0, usagef("--needs: %v (the scenes: %s)", err, sceneList)
		}
		needs |= sc
	}
	return needs, nil
}

// withNeeds makes a variant builder keep the scenes --needs set.
func withNeeds(at func([]int) spec.Variant, needs model.Scene) func([]int) spec.Variant {
	if at == nil {
		return nil
	}
	return func(vals []int) spec.Variant {
		v := at(vals)
		v.Needs = needs
		return v
	}
}

// searchPoint searches one point of the grid: an exhaustive BFS within
// b.MaxStates (a proof for every invariant it does not find violated), and
// when that does not finish, a random search for the invariants not yet
// found violated (their "safe" is then a budget's, not a proof).
//
// save saves a cell's counterexample and returns its link ("" when it
// could not: the cell keeps its verdict).
func searchPoint(ctx context.Context, v spec.Variant, cfg model.Config, invs []string, b sweepBudget, save func(inv string, run *model.Run, method string) string) ([]viz.SweepCell, error) {
	m, err := v.Machine(cfg)
	if err != nil {
		return nil, usageError{err}
	}
	want := spec.SetOf(invs...)
	res := runBFS(ctx, m, checker.BFSOptions{Exhaustive: true, MaxStates: b.MaxStates, MaxDepth: b.Depth, MaxMemory: b.MaxMemory,
		Symmetry: model.SymWorkers | model.SymResources, Reduce: b.Reduce})
	if res.Err != nil { // a level spilled at the memory budget could not be written or read
		return nil, res.Err
	}
	cells := map[string]viz.SweepCell{}
	for _, s := range res.Shortest {
		if want&spec.SetOf(s.Invariant) == 0 {
			continue
		}
		link := save(s.Invariant, s.Run, "bfs")
		cells[s.Invariant] = viz.SweepCell{Invariant: s.Invariant, Verdict: viz.VerdictViolated, Length: s.Length, Method: "bfs",
			Link: link, Detail: fmt.Sprintf("shortest counterexample (BFS, %d states)", res.States)}
	}
	if res.Fault != nil {
		return faultCells(cells, invs, res.Fault), nil
	}
	vacuous := res.Reached.Missing(v.Scenes())
	if bfsComplete(res) {
		proof := fmt.Sprintf("proof: every reachable state (%d states, depth %d)", res.States, res.MaxDepth)
		if res.Stopped == checker.StopDepth {
			proof = fmt.Sprintf("proof within depth %d: every state that many actions deep (%d states)", b.Depth, res.States)
		}
		for _, inv := range invs {
			if _, ok := cells[inv]; ok {
				continue
			}
			c := viz.SweepCell{Invariant: inv, Verdict: viz.VerdictSafe, Proof: true, Method: "bfs",
				Detail: proof}
			if vacuous != 0 {
				c = viz.SweepCell{Invariant: inv, Verdict: viz.VerdictIncomplete, Method: "bfs",
					Detail: fmt.Sprintf("no violation in %d states, but the bound never reaches %s: no proof", res.States, vacuous)}
			}
			cells[inv] = c
		}
		return ordered(cells, invs), nil
	}
	bfsNote := fmt.Sprintf("BFS stopped at %d states (depth %d)", res.States, res.MaxDepth)
	if p := res.Projection; p != nil && p.Made { // how far a proof is: what --max-states it would take
		bfsNote = fmt.Sprintf("BFS stopped at %d states (depth %d) of a projected %s", res.States, res.MaxDepth, statesRange(*p))
	}
	// proved says what the levels the BFS expanded in full prove of inv:
	// what --depth at the level it stopped in would (newWithinProof).
	proved := func(inv string) string {
		if w := newWithinProof(v, spec.SetOf(inv), res); w != nil && w.Proves {
			return fmt.Sprintf(", every run of up to %d actions proved", w.Depth)
		}
		return ""
	}
	rest := want
	for inv := range cells {
		rest &^= spec.SetOf(inv)
	}
	reached := checker.Coverage{}
	runsDone := 0
	for rest != 0 && ctx.Err() == nil && b.Runs > 0 {
		r := checker.RandomSearch(ctx, m, checker.SearchOptions{Seed: b.Seed, Runs: b.Runs, Steps: b.Steps, Stop: rest})
		reached, runsDone = r.Reached, r.Runs
		if r.Fault != nil {
			return faultCells(cells, invs, r.Fault), nil
		}
		if r.Found == nil {
			break
		}
		link := save(r.Found.Invariant, r.Found.Run, "random")
		cells[r.Found.Invariant] = viz.SweepCell{Invariant: r.Found.Invariant, Verdict: viz.VerdictViolated,
			Length: len(r.Found.Run.Actions), Method: "random", Link: link,
			Detail: fmt.Sprintf("%s; random run %d, shrunk (not necessarily shortest)", bfsNote, r.Found.Index)}
		rest &^= spec.SetOf(r.Found.Invariant)
	}
	for _, inv := range invs {
		if _, ok := cells[inv]; ok {
			continue
		}
		c := viz.SweepCell{Invariant: inv, Verdict: viz.VerdictSafe, Method: "random",
			Detail: fmt.Sprintf("%s%s; no violation in %d random runs: a budget, not a proof", bfsNote, proved(inv), runsDone)}
		if ctx.Err() != nil || runsDone < b.Runs || reached.Missing(v.Scenes()) != 0 {
			c = viz.SweepCell{Invariant: inv, Verdict: viz.VerdictIncomplete, Method: "random",
				Detail: fmt.Sprintf("%s%s; %d of %d random runs, stopped early or never reached %s", bfsNote, proved(inv), runsDone, b.Runs, v.Scenes())}
		}
		cells[inv] = c
	}
	return ordered(cells, invs), nil
}

// faultCells are a point's cells when the design's decision failed there:
// no verdict but the violations found before it, each other cell
// incomplete, saying why (a step the model cannot take passes nothing).
func faultCells(cells map[string]viz.SweepCell, invs []string, f *checker.Fault) []viz.SweepCell {
	for _, inv := range invs {
		if _, ok := cells[inv]; !ok {
			cells[inv] = viz.SweepCell{Invariant: inv, Verdict: viz.VerdictIncomplete, Detail: "the design's decision failed: " + f.Cause}
		}
	}
	return ordered(cells, invs)
}

func ordered(cells map[string]viz.SweepCell, invs []string) []viz.SweepCell {
	out := make([]viz.SweepCell, 0, len(invs))
	for _, inv := range invs {
		out = append(out, cells[inv])
	}
	return out
}

// saveCell saves a cell's counterexample (history and timeline) as
// prefix-INVARIANT and returns the timeline's path relative to the heat
// map.
func saveCell(prefix string, v spec.Variant, inv string, run *model.Run, method string, cat []spec.Variant) (string, error) {
	h := checker.Counterexample(v.Name, 0, run, fmt.Sprintf("%s violates %s (explore sweep, %s)", v.Name, inv, method))
	base := filepath.Base(prefix) + "-" + inv
	if _, err := save(filepath.Dir(prefix), base, h, cat); err != nil {
		return "", err
	}
	return base + ".html", nil
}

// pointFile names a grid point's files: margin2-skew1.
func pointFile(axes []axis, x, y int) string {
	s := fmt.Sprintf("%s%d", axes[0].name, x)
	if axes[1].name != "" {
		s += fmt.Sprintf("-%s%d", axes[1].name, y)
	}
	return s
}

// printHeatmapLine says where the heat map was saved (page; "" when it
// could not be), with a detail in parentheses.
func printHeatmapLine(w io.Writer, page, detail string) {
	if page == "" {
		fmt.Fprintf(w, "\nheat map not saved (%s; the error follows on standard error)\n", detail)
		return
	}
	fmt.Fprintf(w, "\nheat map: %s (%s)\n", page, detail)
}

// writeHeatmap writes the grid's heat map into dir and returns its path
// ("" with an error naming it when it could not).
func writeHeatmap(dir string, g viz.SweepGrid) (string, error) {
	path := filepath.Join(dir, "heatmap.html")
	var b bytes.Buffer
	err := viz.Heatmap(&b, g)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = renameio.WriteFile(path, b.Bytes(), 0o644)
	}
	if err != nil {
		return "", fmt.Errorf("%s not saved (under --out): %w", path, err)
	}
	return path, nil
}

// sweepPoint is the variant and config at grid point (x, y).
func sweepPoint(v spec.Variant, cfg model.Config, axes []axis, x, y int) (spec.Variant, model.Config, error) {
	design := map[string]int{}
	env := map[string]int{}
	for i, a := range axes {
		if a.name == "" {
			continue
		}
		val := []int{x, y}[i]
		if a.env {
			env[a.name] = val
		} else {
			design[a.name] = val
		}
	}
	if len(design) > 0 {
		var err error // the parameters not swept keep v's values
		if v, err = v.With(design); err != nil {
			return v, cfg, err
		}
	}
	if len(env) > 0 {
		var m map[string]any
		raw, _ := json.Marshal(cfg)
		_ = json.Unmarshal(raw, &m)
		for k, val := range env {
			m[k] = val
		}
		raw, _ = json.Marshal(m)
		cfg = model.Config{}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return v, cfg, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return v, cfg, fmt.Errorf("point %s: %v", pointName(axes, x, y), err)
	}
	return v, cfg, nil
}

// sweptName is the name of the variant a sweep's grid is of: v's, less the
// design parameters the axes sweep (the base name when none is left).
func sweptName(v spec.Variant, axes []axis) string {
	var swept []string
	for _, a := range axes {
		if !a.env {
			swept = append(swept, a.name)
		}
	}
	return v.NameWithout(swept...)
}

// configNames are the JSON names of model.Config's fields: the
// environment bounds a sweep may take as parameters.
func configNames() []string {
	var m map[string]any
	raw, _ := json.Marshal(model.Config{Delay: 1, Pause: 1, SinkRestarts: 1})
	_ = json.Unmarshal(raw, &m)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func paramNames(v spec.Variant) string {
	if len(v.Params) == 0 {
		return "no parameters of its own"
	}
	return "parameters " + strings.Join(v.ParamNames(), ", ")
}

// parseAxis parses NAME=LO..HI (or NAME=V) for variant v.
func parseAxis(s string, v spec.Variant) (axis, error) {
	k, r, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return axis{}, fmt.Errorf("want NAME=LO..HI")
	}
	loS, hiS, isRange := strings.Cut(r, "..")
	if !isRange {
		hiS = loS
	}
	lo, err1 := strconv.Atoi(loS)
	hi, err2 := strconv.Atoi(hiS)
	if err1 != nil || err2 != nil || lo > hi {
		return axis{}, fmt.Errorf("range %q: want LO..HI with integers LO <= HI", r)
	}
	if hi-lo > 63 {
		return axis{}, fmt.Errorf("range %q: at most 64 values", r)
	}
	a := axis{name: k}
	if p, ok := v.Param(k); ok {
		if lo < p.Min || hi > p.Max {
			return axis{}, fmt.Errorf("%s's range is [%d, %d]", k, p.Min, p.Max)
		}
	} else {
		found := false
		for _, n := range configNames() {
			found = found || n == k
		}
		if !found {
			return axis{}, fmt.Errorf("unknown parameter %q (variant %s has %s; config bounds: %s)", k, v.Name, paramNames(v), strings.Join(configNames(), ", "))
		}
		a.env = true
	}
	for x := lo; x <= hi; x++ {
		a.values = append(a.values, x)
	}
	return a, nil
}

// sweepInvariants is the --invariant list, or the variant's headline and
// fencing.
func sweepInvariants(flag string, v spec.Variant) ([]string, error) {
	var ids []string
	if flag == "" {
		if h := v.Headline(); h != "" {
			ids = append(ids, h)
		}
		if len(ids) == 0 || ids[0] != spec.Fencing {
			ids = append(ids, spec.Fencing)
		}
		return ids, nil
	}
	for _, id := range strings.Split(flag, ",") {
		if !spec.IsInvariant(id) {
			return nil, fmt.Errorf("unknown invariant %q (see explore invariants)", id)
		}
		if !spec.OnTransitions().Has(id) {
			return nil, fmt.Errorf("%s is judged over recorded histories only: a cell's BFS proof would say nothing of it (search it with explore search --mode random)", id)
		}
		if slices.Contains(ids, id) {
			return nil, fmt.Errorf("%s given twice", id)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func pointName(axes []axis, x, y int) string {
	s := fmt.Sprintf("%s=%d", axes[0].name, x)
	if axes[1].name != "" {
		s += fmt.Sprintf(" %s=%d", axes[1].name, y)
	}
	return s
}

// printGrid prints one table per invariant: ✗N violated (shortest
// counterexample N actions; ~N from a random search), ✓ proven safe
// (within depth, when a --depth bounded the proofs), ✓? safe within a
// random budget, ? incomplete, - not searched (another shard's point, or
// the sweep stopped before it).
func printGrid(w io.Writer, g viz.SweepGrid, depth int) {
	proven, within := "proven", ""
	if depth > 0 {
		proven = fmt.Sprintf("proven for runs of up to %d actions (--depth %d)", depth, depth)
		within = fmt.Sprintf(", for runs of up to %d actions", depth)
	}
	unsearched := "" // a shard's or a stopped sweep's grid has points not searched
	if len(g.Cells) < len(g.X.Values)*len(g.Y.Values)*len(g.Invariants) {
		unsearched = "; - not searched"
	}
	for _, inv := range g.Invariants {
		fmt.Fprintf(w, "%s on %s (✗N violated, N actions; ✓ %s; ✓? budget only; ? incomplete%s):\n", inv, g.Variant, proven, unsearched)
		fmt.Fprintf(w, "%10s", g.Y.Name+`\`+g.X.Name)
		for _, x := range g.X.Values {
			fmt.Fprintf(w, "%6d", x)
		}
		fmt.Fprintln(w)
		for _, y := range g.Y.Values {
			if g.Y.Name != "" {
				fmt.Fprintf(w, "%10d", y)
			} else {
				fmt.Fprintf(w, "%10s", "")
			}
			for _, x := range g.X.Values {
				fmt.Fprintf(w, "%6s", cellText(g, x, y, inv))
			}
			fmt.Fprintln(w)
		}
		if r := g.Rules[inv]; r != "" {
			fmt.Fprintf(w, "rule found on this grid%s: %s\n", within, r)
		} else if budgetOnly(g, inv) {
			fmt.Fprintln(w, "no rule stated: the ✓? cells are safe only within the random search's budget, not proven (a larger --max-states may prove them)")
		}
		fmt.Fprintln(w)
	}
}

// budgetOnly reports whether a cell of inv's grid is safe only within a
// random search's budget (✓?), which keeps fitRule from stating a rule.
func budgetOnly(g viz.SweepGrid, inv string) bool {
	for _, c := range g.Cells {
		if c.Invariant == inv && c.Verdict == viz.VerdictSafe && !c.Proof {
			return true
		}
	}
	return false
}

func cellText(g viz.SweepGrid, x, y int, inv string) string {
	for _, c := range g.Cells {
		if c.X != x || c.Y != y || c.Invariant != inv {
			continue
		}
		switch {
		case c.Verdict == viz.VerdictViolated && c.Method == "random":
			return "✗~" + strconv.Itoa(c.Length)
		case c.Verdict == viz.VerdictViolated:
			return "✗" + strconv.Itoa(c.Length)
		case c.Verdict == viz.VerdictSafe && c.Proof:
			return "✓"
		case c.Verdict == viz.VerdictSafe:
			return "✓?"
		}
		return "?"
	}
	return "-" // not searched here: another shard's point, or the sweep stopped before it
}

// sweepHowFar says how far a sweep that is incomplete got, and why it is:
// stopped (sweepResult.Stopped) or, when that is "", its points' budgets.
func sweepHowFar(stopped string, g viz.SweepGrid) string {
	n := 0
	for _, c := range g.Cells {
		if c.Verdict == viz.VerdictIncomplete {
			n++
		}
	}
	total := len(g.X.Values) * len(g.Y.Values) * len(g.Invariants)
	why := cmp.Or(stopped, "a point's budget was too small, or its bound never reached what the verdict depends on")
	return fmt.Sprintf("%d of %d cells searched, %d of them incomplete (%s)", len(g.Cells), total, n, why)
}
