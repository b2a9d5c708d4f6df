package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// searchResult is what explore search --json prints: the input of merge.
type searchResult struct {
	Variant   string             `json:"variant"`
	Mode      string             `json:"mode"`
	Config    model.Config       `json:"config"`
	Shard     checker.Shard      `json:"shard"`
	Seed      uint64             `json:"seed"`
	Runs      int                `json:"runs"`   // random: runs done
	Budget    int                `json:"budget"` // random: runs asked for (of the unsplit search)
	Complete  *bool              `json:"complete"`
	BFS       *checker.BFSResult `json:"bfs"`
	RunIndex  *int               `json:"runIndex"`
	Violation *struct {
		Invariant  string `json:"invariant"`
		Operations int    `json:"operations"`
		Actions    int    `json:"actions"`
		File       string `json:"file"`
	} `json:"violation"`
}

func runMerge(_ context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("merge", "FILE...", "Combine the --json results of the jobs of one split search (explore search --shard i/n) into one verdict.", stdout)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() == 0 {
		return 0, usagef("want the JSON results of every job (see --help)")
	}
	jobs := make([]searchResult, fs.NArg())
	for i, path := range fs.Args() {
		b, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return 0, usageError{fileError{path, "cannot read: " + err.Error()}}
		}
		if err := json.Unmarshal(b, &jobs[i]); err != nil {
			return 0, usageError{fileError{path, "not the JSON of explore search: " + err.Error()}}
		}
		if jobs[i].Mode == "bfs" && jobs[i].BFS == nil {
			return 0, usageError{fileError{path, "field \"bfs\": missing in a bfs search's result"}}
		}
	}
	if err := sameSearch(jobs, fs.Args()); err != nil {
		return 0, err
	}
	first := jobs[0]
	out := map[string]any{"variant": first.Variant, "mode": first.Mode, "jobs": len(jobs)}
	var incomplete []string // the jobs that stopped early
	runs := 0
	for _, j := range jobs {
		runs += j.Runs
		if j.Complete != nil && !*j.Complete || j.BFS != nil && !bfsComplete(*j.BFS) {
			incomplete = append(incomplete, fmt.Sprintf("%d/%d", j.Shard.I, max(j.Shard.N, 1)))
		}
	}
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
		if !*jsonOut {
			v, err := spec.LookupVariant(cat, first.Variant)
			if err != nil {
				return 0, usagef("%s: variant: %v", fs.Args()[0], err)
			}
			printBFS(stdout, merged, v)
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
		if *jsonOut {
			return code, writeJSON(stdout, out)
		}
		if len(incomplete) > 0 {
			how := fmt.Sprintf("%d of %d runs done", runs, first.budget())
			if first.Mode == "bfs" {
				how = bfsHowFar(out["bfs"].(checker.BFSResult))
			}
			fmt.Fprintf(stdout, "%s: incomplete: job %s stopped early (%s); no violation found so far by any of the %d jobs\n",
				first.Variant, strings.Join(incomplete, ", "), how, len(jobs))
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
	if len(jobs) != n {
		return usagef("%d results for a search split into %d jobs", len(jobs), n)
	}
	seen := make([]bool, n)
	for i, j := range jobs {
		switch {
		case j.Variant != first.Variant || j.Mode != first.Mode || j.Config != first.Config || j.Seed != first.Seed ||
			j.budget() != first.budget() || max(j.Shard.N, 1) != n || j.Shard.Depth != first.Shard.Depth:
			return usagef("%s: not a job of the same search as %s", paths[i], paths[0])
		case seen[j.Shard.I]:
			return usagef("%s: job %d/%d given twice", paths[i], j.Shard.I, n)
		}
		seen[j.Shard.I] = true
	}
	return nil
}
