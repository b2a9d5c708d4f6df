package explore

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// TestOutCheckedBeforeWork: a verb that saves what it finds under --out
// refuses, before any work and naming --out, an --out it cannot write (a
// search ran, found its counterexample, then printed only "mkdir /proc/x:
// ..." with exit 2: the verdict and the trace were lost). The check leaves
// nothing behind, and makes no --out that does not exist yet.
func TestOutCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{ // --out: what the message says
		file:                       "--out " + file + ": not a folder",
		filepath.Join(file, "sub"): "--out " + filepath.Join(file, "sub") + ": cannot be made: " + file + " is not a folder",
	}
	link := filepath.Join(dir, "a-link")
	if err := os.Symlink(filepath.Join(dir, "nothing"), link); err == nil {
		outs[link] = "--out " + link + ": cannot be made: " + link + ": "
	}
	if st, err := os.Stat("/proc"); err == nil && st.IsDir() { // Linux: /proc takes no folder, even from root
		outs["/proc/fencecheck-out"] = "--out /proc/fencecheck-out: cannot be made: no folder can be made in /proc"
	}
	verbs := [][]string{
		{"search", "--variant", "grant-before-fence", "--invariant", "fencing", "--runs", "1000", "--quiet"}, // finds it
		{"campaign", "--runs", "10", "--quiet"},
		append([]string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--invariant", "exclusive-lease"}, small...),
		{"real", "--runs", "1"},
	}
	for out, want := range outs {
		for _, verb := range verbs {
			for _, asJSON := range []bool{false, true} {
				args := append(append([]string{}, verb...), "--out", out)
				if asJSON {
					args = append(args, "--json")
				}
				code, stdout, stderr := explore(t, args...)
				if code != exitUsage || !strings.Contains(stderr, want) {
					t.Errorf("%s --out %s: exit %d, stderr %q; want 2 and %q", verb[0], out, code, stderr, want)
				}
				var o map[string]any
				msg := ""
				if asJSON && json.Unmarshal([]byte(stdout), &o) == nil {
					msg, _ = o["error"].(string)
				}
				if asJSON && !strings.Contains(msg, "--out") {
					t.Errorf("%s --out %s --json: want the error object naming --out, got %q", verb[0], out, stdout)
				}
				if !asJSON && stdout != "" {
					t.Errorf("%s --out %s: worked before refusing --out:\n%s", verb[0], out, stdout)
				}
			}
		}
	}
	// A writable --out passes the check, which leaves nothing behind: an
	// --out that does not exist is not made, one that exists is as it was.
	before, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := flags("search", "", "", io.Discard)
	defer delete(helps, fs)
	fs.String("out", "explore-out", "")
	for _, out := range []string{filepath.Join(dir, "new", "out"), dir} {
		if err := parse(fs, []string{"--out", out}); err != nil {
			t.Fatalf("--out %s: %v", out, err)
		}
		if after, err := os.ReadDir(dir); err != nil || len(after) != len(before) {
			t.Errorf("--out %s: the check left %v behind in %s (%v)", out, after, dir, err)
		}
	}
}

// TestSaveNamesTheFileAndOut: a counterexample that cannot be saved is an
// error naming the file and --out (it said only "mkdir DIR: ...").
func TestSaveNamesTheFileAndOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := &history.History{HasHeader: true, Events: []history.Event{{Process: "w1", Type: history.Invoke, F: history.Read, Resource: "job-1"}}}
	dir := filepath.Join(file, "grant-before-fence")
	path, err := save(dir, spec.Fencing, h, designs.All())
	want := filepath.Join(dir, spec.Fencing+".jsonl") + " not saved (under --out): "
	if err == nil || path != "" || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("save under a file: %q, %v; want an error beginning %q", path, err, want)
	}
}

// TestReportedAfterResult: a counterexample found and then not saved (its
// variant's folder under --out cannot be made, which the check before
// the work does not see) is still reported, with its trace, and the error
// said on standard error after it; the exit status is the result's (1),
// not 2, which read as if nothing had been found, and never 0, which would
// read as a pass: a campaign whose verdicts are all as expected exits 2.
func TestReportedAfterResult(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "grant-before-fence"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	notSaved := filepath.Join(out, "grant-before-fence", spec.Fencing+".jsonl") + " not saved (under --out)"
	search := []string{"search", "--variant", "grant-before-fence", "--invariant", "fencing", "--runs", "1000", "--quiet", "--out", out}
	code, stdout, stderr := explore(t, search...)
	if code != exitViolation || !strings.Contains(stdout, "grant-before-fence violates fencing") || !strings.Contains(stdout, "not saved") ||
		!strings.Contains(stderr, notSaved) {
		t.Errorf("search: exit %d, stdout %q, stderr %q; want 1, the violation reported and the file not saved named", code, stdout, stderr)
	}
	code, stdout, stderr = explore(t, append(search, "--json")...)
	var o struct {
		Violation struct {
			Invariant string `json:"invariant"`
			SaveError string `json:"saveError"`
		} `json:"violation"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &o); err != nil || code != exitViolation || o.Violation.Invariant != spec.Fencing ||
		!strings.Contains(o.Violation.SaveError, notSaved) || o.Error != "" || !strings.Contains(stderr, notSaved) {
		t.Errorf("search --json: exit %d, %v, stdout %q, stderr %q; want 1 and only the search's object, with saveError", code, err, stdout, stderr)
	}
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = exploreWith(t, []spec.Variant{gbf}, "--runs", "2000", "--quiet", "--out", out)
	if code != exitUsage || !strings.Contains(stdout, "as expected") || !strings.Contains(stderr, "not saved (under --out)") {
		t.Errorf("campaign: exit %d, stdout %q, stderr %q; want the matrix as expected, then the error and 2", code, stdout, stderr)
	}
	code, stdout, _ = exploreWith(t, []spec.Variant{gbf}, "--runs", "2000", "--quiet", "--out", out, "--json")
	var c struct {
		OK        bool   `json:"ok"`
		SaveError string `json:"saveError"`
	}
	if err := json.Unmarshal([]byte(stdout), &c); err != nil || code != exitUsage || !c.OK || !strings.Contains(c.SaveError, "not saved (under --out)") {
		t.Errorf("campaign --json: exit %d, %v, stdout %q; want 2, the verdicts ok and saveError", code, err, stdout)
	}
	if reported(exitViolation, nil) != nil {
		t.Error("reported(1, nil) is not nil")
	}
}
