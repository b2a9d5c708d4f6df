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
	"reflect"
	"slices"
	"strings"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
	"github.com/fencecheck/fencecheck/viz"
)

// searchResult is what explore search --json prints: the input of merge.
type searchResult struct {
	Variant   string             `json:"variant"`
	Mode      string             `json:"mode"`
	Config    model.Config       `json:"config"`
	Shard     checker.Shard      `json:"shard"`
	Seed      uint64             `json:"seed"`
	Needs     string             `json:"needs"`  // the scenes the verdict depends on (--needs)
	Runs      int                `json:"runs"`   // random: runs done
	Budget    int                `json:"budget"` // random: runs asked for (of the unsplit search)
	Complete  *bool              `json:"complete"`
	Vacuous   string             `json:"vacuous"` // the job's own share never reached these scenes
	Reached   checker.Coverage   `json:"reached"` // random: the scenes its runs reached
	BFS       *checker.BFSResult `json:"bfs"`
	Proof     *proof             `json:"proof"` // bfs: what the job proves (none: it is one job)
	RunIndex  *int               `json:"runIndex"`
	Fault     *checker.Fault     `json:"fault"` // the design's decision failed: no verdict
	Violation *struct {
		Invariant  string `json:"invariant"`
		Operations int    `json:"operations"`
		Actions    int    `json:"actions"`
		File       string `json:"file"`
	} `json:"violation"`
}

// problem names the first field of a job's result b (decoded as j) that
// no explore search writes, or is "".
func (j *searchResult) problem(b []byte) string {
	if key := repeatedKey(b); key != "" {
		return fmt.Sprintf("field %q: given twice", key)
	}
	switch {
	case j.Variant == "":
		return `field "variant": missing`
	case j.Mode == "":
		return `field "mode": missing`
	case j.Mode == "bfs":
		return ""
	case j.Runs < 0 || j.Budget < 0:
		return fmt.Sprintf(`field "runs": %d of a budget of %d`, j.Runs, j.Budget)
	case j.Budget > 0 && j.Runs > j.Budget:
		return fmt.Sprintf(`field "runs": %d, more than the budget of %d`, j.Runs, j.Budget)
	case j.Violation != nil && j.RunIndex == nil:
		return `field "runIndex": missing beside a violation`
	case j.Violation == nil && j.RunIndex != nil:
		return `field "runIndex": given without a violation`
	case j.RunIndex != nil && (*j.RunIndex < 0 || j.Budget > 0 && *j.RunIndex >= j.Budget):
		return fmt.Sprintf(`field "runIndex": %d, outside the budget of %d runs`, *j.RunIndex, j.Budget)
	}
	return ""
}

// repeatedKey is a key that the JSON object b gives twice at its top
// level (encoding/json would keep the last), or "".
func repeatedKey(b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for d.More() {
		t, err := d.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if seen[key] {
			return key
		}
		seen[key] = true
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// jsonProblem says what encoding/json found wrong, naming the field, not
// the Go type it was to fill.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	want := map[reflect.Kind]string{reflect.Struct: "an object", reflect.Map: "an object", reflect.Slice: "an array",
		reflect.Array: "an array", reflect.String: "a string", reflect.Bool: "true or false"}[te.Type.Kind()]
	if want == "" {
		want = "a number (" + te.Type.Kind().String() + ")"
	}
	if te.Field == "" {
		return fmt.Sprintf("%s where %s is wanted", te.Value, want)
	}
	return fmt.Sprintf("field %q: %s where %s is wanted", te.Field, te.Value, want)
}

func runMerge(_ context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("merge", "FILE...", "Combine the --json results of the jobs of one split search or sweep (explore search|sweep --shard i/n) into one verdict; a split bfs also into one proof (docs/exhaustive.md).", stdout)
	outDir := fs.String("out", "explore-out", "sweeps: folder for the merged heat map (OUT/sweep/VARIANT/heatmap.html, beside the jobs' counterexamples when they shared --out)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() == 0 {
		return 0, usagef("want the JSON results of every job (see --help)")
	}
	jobs := make([]searchResult, fs.NArg())
	raws := make([][]byte, fs.NArg())
	for i, path := range fs.Args() {
		b, err := readResult(path)
		if err != nil {
			return 0, err
		}
		var failed struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &failed) == nil && failed.Error != "" {
			return 0, usageError{fileError{path, "the --json of a run that failed, not a result: " + failed.Error}}
		}
		raws[i] = b
	}
	var kind struct {
		Sweep bool `json:"sweep"`
	}
	if json.Unmarshal(raws[0], &kind) == nil && kind.Sweep {
		return mergeSweeps(raws, fs.Args(), *outDir, *jsonOut, stdout)
	}
	for i, path := range fs.Args() {
		if err := json.Unmarshal(raws[i], &jobs[i]); err != nil {
			return 0, usageError{fileError{path, "not the JSON of explore search: " + jsonProblem(err)}}
		}
		if problem := jobs[i].problem(raws[i]); problem != "" {
			return 0, usageError{fileError{path, problem}}
		}
		if jobs[i].Mode == "bfs" && jobs[i].BFS == nil {
			return 0, usageError{fileError{path, "field \"bfs\": missing in a bfs search's result"}}
		}
		if jobs[i].Mode == "bfs" && jobs[i].Proof == nil {
			return 0, usageError{fileError{path, "field \"proof\": missing in a bfs search's result"}}
		}
	}
	if err := sameSearch(jobs, fs.Args()); err != nil {
		return 0, err
	}
	first := jobs[0]
	v, err := spec.LookupVariant(cat, first.Variant)
	if err != nil {
		return 0, usagef("%s: variant: %v", fs.Args()[0], err)
	}
	out := map[string]any{"variant": first.Variant, "mode": first.Mode, "jobs": len(jobs)}
	var incomplete []string // the jobs that stopped early
	var reached checker.Coverage
	runs := 0
	for _, j := range jobs {
		runs += j.Runs
		// A job whose own share never reached a scene the verdict depends
		// on did all it was to do: what counts is what the jobs reached
		// together (a reduction may leave a state out of one job's share
		// for a state another job expands).
		stopped := j.Complete != nil && !*j.Complete && j.Vacuous == ""
		if j.BFS != nil {
			stopped = !bfsComplete(*j.BFS)
			reached.Merge(j.BFS.Reached)
		} else {
			reached.Merge(j.Reached)
		}
		if stopped {
			incomplete = append(incomplete, fmt.Sprintf("%d/%d", j.Shard.I, max(j.Shard.N, 1)))
		}
	}
	if first.Mode != "bfs" && runs > first.budget() {
		return 0, usagef("the jobs' runs add up to %d, more than the search's budget of %d: not the jobs of one search", runs, first.budget())
	}
	// A job where the design's decision failed has no verdict, and neither
	// has the whole search: it ends as that job did (exit 1).
	for _, j := range jobs {
		if f := j.Fault; f != nil {
			job := fmt.Sprintf("%d/%d", j.Shard.I, max(j.Shard.N, 1))
			out["fault"], out["faultJob"], out["complete"] = f, job, false
			if *jsonOut {
				return exitViolation, writeJSON(stdout, out)
			}
			fmt.Fprintf(stdout, "%s: the design's decision failed in job %s: %s\n", first.Variant, job, f.Cause)
			return exitViolation, nil
		}
	}
	if first.Needs != "" { // a job of an older fencecheck says none: the variant's own
		if v.Needs, err = parseNeeds(first.Needs); err != nil {
			return 0, usageError{fileError{fs.Args()[0], "field \"needs\": " + err.Error()}}
		}
	}
	vacuous := reached.Missing(v.Scenes())
	if first.Mode != "bfs" {
		out["runs"], out["budget"] = runs, first.budget()
	}
	out["complete"] = len(incomplete) == 0
	var winner *searchResult
	if first.Mode == "bfs" {
		var rs []checker.BFSResult
		for _, j := range jobs {
			rs = append(rs, *j.BFS)
		}
		merged := checker.MergeResults(rs)
		out["bfs"] = merged
		for i := range jobs {
			if len(merged.Trace) > 0 && slices.Equal(jobs[i].BFS.Trace, merged.Trace) {
				winner = &jobs[i]
				break
			}
		}
		var why string
		switch {
		case winner != nil && winner.Violation != nil:
			why = fmt.Sprintf("an invariant it stops on is violated (the counterexample of job %d/%d)", winner.Shard.I, winner.Shard.N)
		case len(incomplete) > 0:
			why = fmt.Sprintf("the search is incomplete: %s stopped early", named("job", incomplete...))
		case vacuous != 0:
			why = fmt.Sprintf("the jobs together never reached %s, which %s's verdict depends on", vacuous, v.Name)
		}
		proofs := make([]*proof, len(jobs))
		for i := range jobs {
			proofs[i] = jobs[i].Proof
		}
		pf := mergeProofs(proofs, merged, why)
		out["proof"] = pf
		if !*jsonOut {
			printBFS(stdout, merged, v)
			pf.print(stdout)
		}
	} else {
		for i := range jobs {
			if j := &jobs[i]; j.RunIndex != nil && (winner == nil || *j.RunIndex < *winner.RunIndex) {
				winner = j
			}
		}
	}
	if winner == nil || winner.Violation == nil {
		out["violation"] = nil
		code := exitOK
		if len(incomplete) > 0 {
			code = exitIncomplete
			out["incompleteJobs"] = incomplete
		}
		if vacuous != 0 {
			out["vacuous"] = vacuous.String()
			if first.Mode == "bfs" { // not a proof of anything; random runs that did their budget exit 0, saying so (as search)
				code, out["complete"] = exitIncomplete, false
			}
		}
		if *jsonOut {
			return code, writeJSON(stdout, out)
		}
		if len(incomplete) > 0 {
			how := fmt.Sprintf("%d of %d runs done", runs, first.budget())
			if first.Mode == "bfs" {
				how = bfsHowFar(out["bfs"].(checker.BFSResult))
			}
			fmt.Fprintf(stdout, "%s: incomplete: %s stopped early (%s); no violation found so far by any of the %d jobs\n",
				first.Variant, named("job", incomplete...), how, len(jobs))
			return code, nil
		}
		switch {
		case vacuous != 0 && first.Mode == "bfs":
			fmt.Fprintf(stdout, "%s: incomplete: no violation found by any of the %d jobs, but together they never reached %s, which the verdict depends on\n",
				first.Variant, len(jobs), vacuous)
			return code, nil
		case vacuous != 0:
			fmt.Fprintf(stdout, "%s: no violation found by any of the %d jobs (%d of %d runs done), but vacuous: no run reached %s, which the verdict depends on, so the runs say nothing about it (no proof); a larger --runs is needed for the verdict to mean anything\n",
				first.Variant, len(jobs), runs, first.budget(), vacuous)
			return code, nil
		}
		fmt.Fprintf(stdout, "%s: no violation found by any of the %d jobs\n", first.Variant, len(jobs))
		return exitOK, nil
	}
	out["violation"] = winner.Violation
	if winner.RunIndex != nil {
		out["runIndex"] = *winner.RunIndex
	}
	if *jsonOut {
		return exitViolation, writeJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "%s violates %s: counterexample of %d operations in %s (job %d/%d)\n", first.Variant,
		winner.Violation.Invariant, winner.Violation.Operations, winner.Violation.File, winner.Shard.I, winner.Shard.N)
	return exitViolation, nil
}

// maxResultSize bounds what merge reads of each file. A job's --json is
// far smaller: the largest, a sweep's, holds at most 64 x 64 points (the
// most --param takes per axis) of at most the 9 invariants judged on
// transitions, some 400 bytes a cell: 15 MB; a search's, one trace and
// counts. Anything bigger is not a result (/dev/zero, a history, a log)
// and is refused before it fills the memory (the history readers stop at
// 16 MiB a line).
const maxResultSize = 64 << 20

// readResult reads the --json result of a job, at most maxResultSize
// bytes of it; a file that cannot be read, a directory, or one bigger is
// an input error naming the file.
func readResult(path string) ([]byte, error) {
	fail := func(msg string) ([]byte, error) { return nil, usageError{fileError{path, msg}} }
	f, err := os.Open(path)
	if err != nil {
		return fail("cannot read: " + bare(err).Error())
	}
	defer f.Close()
	tooBig := fmt.Sprintf("more than %d MiB, not the --json result of an explore search or sweep job", maxResultSize>>20)
	if st, err := f.Stat(); err == nil {
		switch {
		case st.IsDir():
			return fail("is a directory, want the --json result of a job")
		case st.Mode().IsRegular() && st.Size() > maxResultSize:
			return fail(tooBig)
		}
	}
	// A pipe or a device (/dev/zero) says no size: read one byte past the
	// bound to know.
	b, err := io.ReadAll(io.LimitReader(f, maxResultSize+1))
	if err != nil {
		return fail("cannot read: " + bare(err).Error())
	}
	if len(b) > maxResultSize {
		return fail(tooBig)
	}
	return b, nil
}

// named names things of one kind in a sentence: named("job", "1/3") is
// "job 1/3", named("run", "1", "2") "runs 1, 2".
func named(noun string, names ...string) string {
	if len(names) == 1 {
		return noun + " " + names[0]
	}
	return noun + "s " + strings.Join(names, ", ")
}

// budget is the runs the unsplit random search was to do.
func (j *searchResult) budget() int {
	if j.Budget == 0 && j.Complete == nil {
		return j.Runs // a result written before budget was recorded
	}
	return j.Budget
}

// sameSearch checks that the jobs are the n parts of one split search.
func sameSearch(jobs []searchResult, paths []string) error {
	first := jobs[0]
	n := max(first.Shard.N, 1)
	seen := map[int]bool{} // not a slice: an edited job's shard.n may be 2^40
	for i, j := range jobs {
		// The first field that differs from the first job's, named as in
		// the JSON (a BFS ignores --seed: its jobs may differ there).
		field := ""
		switch {
		case j.Variant != first.Variant:
			field = "variant"
		case j.Mode != first.Mode:
			field = "mode"
		case j.Config != first.Config:
			field = "config"
		case j.Mode != "bfs" && j.Seed != first.Seed:
			field = "seed"
		case j.Needs != first.Needs:
			field = "needs"
		case j.budget() != first.budget():
			field = "budget"
		case max(j.Shard.N, 1) != n:
			field = "shard.n"
		case j.Shard.Depth != first.Shard.Depth:
			field = "shard.depth"
		}
		if field != "" {
			return usagef("%s: field \"%s\": not a job of the same search as %s", paths[i], field, paths[0])
		}
		if j.Proof != nil && first.Proof != nil {
			if field := j.Proof.sameScope(first.Proof); field != "" {
				return usagef("%s: field \"proof.%s\": not a job of the same search as %s (their --invariant, --unexpected, --depth or --reduce differ)", paths[i], field, paths[0])
			}
		}
		if err := takeJob(seen, n, j.Shard.I, paths[i]); err != nil {
			return err
		}
	}
	if len(jobs) != n {
		var missing []string
		for i := 0; i < n && len(missing) < 10; i++ {
			if !seen[i] {
				missing = append(missing, fmt.Sprintf("%d/%d", i, n))
			}
		}
		if len(missing) < n-len(jobs) {
			missing = append(missing, "...")
		}
		results := fmt.Sprintf("%d results", len(jobs))
		if len(jobs) == 1 {
			results = "1 result"
		}
		return usagef("%s for a search split into %d jobs: %s missing", results, n, named("job", missing...))
	}
	return nil
}

// takeJob marks job i of n given, read from path, or says why it cannot
// be: it is not one of them, or was given before.
func takeJob(given map[int]bool, n, i int, path string) error {
	switch {
	case i < 0 || i >= n:
		return usageError{fileError{path, fmt.Sprintf("field \"shard.i\": job %d is not one of the %d jobs (0 to %d)", i, n, n-1)}}
	case given[i]:
		return usagef("%s: job %d/%d given twice", path, i, n)
	}
	given[i] = true
	return nil
}

// mergeSweeps combines the jobs of a split sweep (explore sweep --shard
// i/n): every point searched by exactly one job, the rules fitted on the
// whole grid, one heat map.
func mergeSweeps(raws [][]byte, paths []string, outDir string, jsonOut bool, stdout io.Writer) (int, error) {
	jobs := make([]sweepResult, len(raws))
	for i := range raws {
		if err := json.Unmarshal(raws[i], &jobs[i]); err != nil || !jobs[i].Sweep {
			return 0, usageError{fileError{paths[i], "not the JSON of explore sweep"}}
		}
		if err := jobs[i].Grid.Check(); err != nil {
			return 0, usageError{fileError{paths[i], "field \"grid\": " + strings.TrimPrefix(err.Error(), "viz: ")}}
		}
	}
	first := jobs[0]
	n := max(first.Shard.N, 1)
	if len(jobs) != n {
		return 0, usagef("%d results for a sweep split into %d jobs", len(jobs), n)
	}
	seen := map[int]bool{}
	merged := first
	merged.Shard, merged.Grid.Cells, merged.Grid.Rules = checker.Shard{}, nil, map[string]string{}
	merged.SaveError = "" // the merge's own (a job's was said when it ran)
	for i, j := range jobs {
		same := j.Variant == first.Variant && j.Config == first.Config && j.Budget == first.Budget &&
			max(j.Shard.N, 1) == n && slices.Equal(j.Grid.X.Values, first.Grid.X.Values) && j.Grid.X.Name == first.Grid.X.Name &&
			slices.Equal(j.Grid.Y.Values, first.Grid.Y.Values) && j.Grid.Y.Name == first.Grid.Y.Name &&
			slices.Equal(j.Grid.Invariants, first.Grid.Invariants)
		if !same {
			return 0, usagef("%s: not a job of the same sweep as %s", paths[i], paths[0])
		}
		if err := takeJob(seen, n, j.Shard.I, paths[i]); err != nil {
			return 0, err
		}
		merged.Complete = merged.Complete && j.Complete
		merged.Stopped = cmp.Or(merged.Stopped, j.Stopped)
		merged.Grid.Cells = append(merged.Grid.Cells, j.Grid.Cells...)
	}
	g := &merged.Grid
	if err := g.Check(); err != nil { // each job's grid is sound, so two of them overlap
		return 0, usagef("%s: field \"grid\": the jobs' grids do not merge: %s", strings.Join(paths, ", "), strings.TrimPrefix(err.Error(), "viz: "))
	}
	pos := func(c viz.SweepCell) int {
		return (slices.Index(g.Y.Values, c.Y)*len(g.X.Values)+slices.Index(g.X.Values, c.X))*len(g.Invariants) +
			slices.Index(g.Invariants, c.Invariant)
	}
	slices.SortStableFunc(g.Cells, func(a, b viz.SweepCell) int { return pos(a) - pos(b) })
	merged.Complete = merged.Complete && len(g.Cells) == len(g.X.Values)*len(g.Y.Values)*len(g.Invariants)
	for _, inv := range g.Invariants {
		g.Rules[inv] = fitRule(*g, inv)
	}
	// A heat map not saved loses nothing: the grid is reported, the error
	// after it.
	page, saveErr := writeHeatmap(filepath.Join(outDir, "sweep", merged.Variant), *g)
	if saveErr != nil {
		merged.SaveError = saveErr.Error()
	}
	code := exitOK
	if !merged.Complete {
		code = exitIncomplete
	}
	if jsonOut {
		if err := writeJSON(stdout, merged); err != nil {
			return 0, err
		}
		return code, reported(code, saveErr)
	}
	printGrid(stdout, *g, merged.Budget.Depth)
	printHeatmapLine(stdout, page, fmt.Sprintf("%d jobs", n))
	if !merged.Complete {
		fmt.Fprintf(stdout, "incomplete: %s\n", sweepHowFar(merged.Stopped, *g))
	}
	return code, reported(code, saveErr)
}
