package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
)

// TestMergeOfEditedJobs runs explore merge on the --json results of real
// two-job searches (random and breadth-first) and of a two-job sweep, with
// one field of one job changed at a time: every number and string in it
// set to -1, 0, 2^40, a string, null, or left out. Whatever the files
// hold, merge must end with one of the contract's exit statuses, never
// panic, and name a file it was given when it refuses them. (A shard
// number out of range once indexed past a slice.)
func TestMergeOfEditedJobs(t *testing.T) {
	dir := t.TempDir()
	bounds := []string{"--workers", "2", "--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--in-flight", "1",
		"--drops", "0", "--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0"}
	edits := []any{-1, 0, 1 << 40, "x", nil, deleted{}}
	runs := 0
	for _, job := range [][]string{
		{"search", "--variant", "check-then-write", "--invariant", "fencing", "--runs", "200"},
		append([]string{"search", "--variant", "reference", "--mode", "bfs", "--unexpected", "--shard-depth", "3"}, bounds...),
		append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--param", "ttl=1..2",
			"--invariant", "exclusive-lease"}, small...),
	} {
		var jobs [2]any
		for i := range jobs {
			var out, errb bytes.Buffer
			args := append(slices.Clone(job), "--json", "--out", dir, "--shard", fmt.Sprintf("%d/2", i))
			if code := run(context.Background(), args, &out, &errb, designs.All()); code == exitUsage {
				t.Fatalf("%v: %s%s", args, out.String(), errb.String())
			}
			if err := json.Unmarshal(out.Bytes(), &jobs[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range jobs {
			for _, leaf := range leaves(jobs[i], "") {
				for _, e := range edits {
					edited := jobs
					edited[i] = edit(jobs[i], leaf, e)
					paths := make([]string, 2)
					for k, v := range edited {
						paths[k] = filepath.Join(dir, fmt.Sprintf("job%d.json", k))
						b, _ := json.Marshal(v)
						if err := os.WriteFile(paths[k], b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					what := fmt.Sprintf("%s, job %d, %s set to %v", job[:3], i, leaf, e)
					code, stdout, stderr := mergeNoPanic(t, what, dir, paths)
					runs++
					switch code {
					case exitOK, exitViolation, exitIncomplete:
					case exitUsage:
						if !strings.Contains(stderr, paths[0]) && !strings.Contains(stderr, paths[1]) && !strings.Contains(stderr, "results for a") {
							t.Errorf("%s: the error names neither file: %s", what, stderr)
						}
					default:
						t.Errorf("%s: exit %d: %s%s", what, code, stdout, stderr)
					}
				}
			}
		}
	}
	t.Logf("%d merges", runs)

	failed := filepath.Join(dir, "failed.json")
	_, stdout, _ := explore(t, "search", "--json", "--variant", "reference", "--shard", "2/2")
	if err := os.WriteFile(failed, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := explore(t, "merge", failed, failed); code != exitUsage || !strings.Contains(stderr, failed+": the --json of a run that failed") {
		t.Errorf("merge of a failed run's output: exit %d, %s", code, stderr)
	}
}

// mergeNoPanic runs explore merge on paths, failing the test (not
// crashing it) if merge panics.
func mergeNoPanic(t *testing.T, what, dir string, paths []string) (code int, stdout, stderr string) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: merge panicked: %v", what, r)
			code = exitUsage
		}
	}()
	return explore(t, append([]string{"merge", "--out", dir}, paths...)...)
}

// deleted, as an edit, leaves the field out.
type deleted struct{}

// leaves lists the paths ("a.b.0.c") of every number and string in v, a
// decoded JSON value.
func leaves(v any, at string) []string {
	switch v := v.(type) {
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, leaves(v[k], at+"."+k)...)
		}
		return out
	case []any:
		var out []string
		for i, x := range v {
			out = append(out, leaves(x, fmt.Sprintf("%s.%d", at, i))...)
		}
		return out
	case float64, string:
		return []string{at}
	}
	return nil
}

// edit returns a copy of v, a decoded JSON value, with the value at path
// (as leaves names it) replaced by e, or left out if e is deleted{}.
func edit(v any, path string, e any) any {
	if path == "" {
		return e
	}
	step, rest, _ := strings.Cut(path[1:], ".")
	if rest != "" {
		rest = "." + rest
	}
	switch v := v.(type) {
	case map[string]any:
		c := maps.Clone(v)
		if _, del := e.(deleted); del && rest == "" {
			delete(c, step)
		} else {
			c[step] = edit(v[step], rest, e)
		}
		return c
	case []any:
		c := slices.Clone(v)
		i, _ := strconv.Atoi(step)
		if _, del := e.(deleted); del && rest == "" {
			return slices.Delete(c, i, i+1)
		}
		c[i] = edit(v[i], rest, e)
		return c
	}
	return e
}

// TestMergeRefusesWhatNoSearchWrites: a job's result that no explore search
// writes is a usage error naming that file and field, not a verdict: a
// violation without the run that found it (merge once dropped it and
// passed), runs below zero or above the budget, a field given twice
// (encoding/json keeps the last), an object with no variant (blamed on
// the other file before), and a field of the wrong type (named as the
// field, not as a Go struct).
func TestMergeRefusesWhatNoSearchWrites(t *testing.T) {
	dir := t.TempDir()
	var jobs [2]map[string]any
	for i := range jobs {
		_, stdout, _ := explore(t, "search", "--variant", "check-then-write", "--invariant", "fencing", "--runs", "200",
			"--json", "--out", dir, "--shard", fmt.Sprintf("%d/2", i))
		if err := json.Unmarshal([]byte(stdout), &jobs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if jobs[0]["violation"] == nil {
		t.Fatal("job 0/2 found no violation: the first case tests nothing")
	}
	other := filepath.Join(dir, "job1.json")
	b, _ := json.Marshal(jobs[1])
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	marshal := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, c := range []struct{ name, job, want string }{
		{"a violation without its run", marshal(edit(jobs[0], ".runIndex", deleted{})), `field "runIndex": missing beside a violation`},
		{"runs below zero", marshal(edit(jobs[0], ".runs", -5)), `field "runs": -5`},
		{"runs above the budget", marshal(edit(jobs[0], ".runs", 1000)), `field "runs": 1000, more than the budget`},
		{"a field twice", `{"runs":1,` + marshal(jobs[0])[1:], `field "runs": given twice`},
		{"no variant", `{}`, `field "variant": missing`},
		{"a violation that is a string", marshal(edit(jobs[0], ".violation", "x")), `not the JSON of explore search: field "violation": string where an object is wanted`},
	} {
		path := filepath.Join(dir, "job0.json")
		if err := os.WriteFile(path, []byte(c.job), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := explore(t, "merge", path, other); code != exitUsage || !strings.Contains(stderr, path+": "+c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.name, code, stderr, path+": "+c.want)
		}
	}
}
