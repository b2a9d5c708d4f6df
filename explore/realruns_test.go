package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
)

// TestRealRunNumbersAgree: the run explore real says it first caught is
// the run whose history it saved under that number (runs count from 1).
func TestRealRunNumbersAgree(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := explore(t, "real", "--lease", "builtin", "--sink", "none", "--runs", "10", "--json", "--out", out)
	var v struct {
		FirstCaught int      `json:"firstCaught"`
		Files       []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if v.FirstCaught == 0 {
		t.Fatalf("no run of a target that checks no token was caught in 10 (exit %d)\n%s", code, stdout)
	}
	want := "run-" + strconv.Itoa(v.FirstCaught) + ".jsonl"
	for _, f := range v.Files {
		if filepath.Base(f) == want {
			if _, err := os.Stat(f); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("first caught at run %d, but no %s among %v", v.FirstCaught, want, v.Files)
}

// TestRealInterruptedIsIncomplete: a real campaign cut short by an interrupt
// (a cancelled context, as Ctrl-C gives) ends as incomplete, exit 3, in text
// and in JSON, never as a pass or an input error; so does one interrupted
// while its embedded etcd starts.
func TestRealInterruptedIsIncomplete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		lease   string
		jsonOut bool
	}{{"builtin", false}, {"builtin", true}, {"etcd", true}} { // etcd takes seconds to close a member not yet ready
		jsonOut := c.jsonOut
		args := []string{"real", "--lease", c.lease, "--sink", "atomic", "--runs", "5", "--out", t.TempDir()}
		if jsonOut {
			args = append(args, "--json")
		}
		var out, errb strings.Builder
		code := run(ctx, args, &out, &errb, designs.All())
		if code != exitIncomplete {
			t.Fatalf("json=%v: exit %d, want %d\n%s\n%s", jsonOut, code, exitIncomplete, out.String(), errb.String())
		}
		if !jsonOut {
			if !strings.Contains(out.String(), "incomplete: 0 of 5 runs done (interrupted)") {
				t.Errorf("text ending does not say incomplete:\n%s", out.String())
			}
			continue
		}
		var v struct {
			Complete *bool  `json:"complete"`
			Stopped  string `json:"stopped"`
			Budget   int    `json:"budget"`
			Runs     int    `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out.String()), &v); err != nil || v.Complete == nil || *v.Complete || v.Stopped != "interrupted" || v.Budget != 5 || v.Runs != 0 {
			t.Errorf("json ending %+v (%v):\n%s", v, err, out.String())
		}
	}
}

// TestRealCampaignsKeepTheirFolders: a second explore real into the same
// --out writes into a folder of its own (real-LEASE-DB-SINK-2) and says
// so; the first campaign's kept histories are left as they were (the
// second truncated and removed run-N.jsonl, and left run-N.html stale).
func TestRealCampaignsKeepTheirFolders(t *testing.T) {
	out := t.TempDir()
	base := filepath.Join(out, "real-builtin-sqlite-none")
	var first map[string][]byte
	for i, want := range []string{base, base + "-2", base + "-3"} {
		code, stdout, stderr := explore(t, "real", "--sink", "none", "--runs", "1", "--keep", "--seed", strconv.Itoa(1+i),
			"--json", "--out", out)
		var v struct {
			Folder string   `json:"folder"`
			Files  []string `json:"files"`
		}
		if err := json.Unmarshal([]byte(stdout), &v); err != nil || (code != exitOK && code != exitViolation) {
			t.Fatalf("campaign %d: exit %d, %v\n%s\n%s", i+1, code, err, stdout, stderr)
		}
		if v.Folder != want {
			t.Fatalf("campaign %d wrote into %q, want %q", i+1, v.Folder, want)
		}
		if len(v.Files) != 1 || filepath.Dir(v.Files[0]) != want {
			t.Fatalf("campaign %d: files %v, want one in %s", i+1, v.Files, want)
		}
		if i == 0 {
			first = folderFiles(t, base)
			continue
		}
		if got := folderFiles(t, base); !maps.EqualFunc(got, first, bytes.Equal) {
			t.Fatalf("campaign %d changed the first's folder: %v, was %v", i+1, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(first)))
		}
	}
	// The text says which folder it used; an empty folder is used again.
	empty := filepath.Join(t.TempDir(), "real-builtin-sqlite-atomic")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := explore(t, "real", "--runs", "1", "--out", filepath.Dir(empty))
	if !strings.Contains(stdout, "  folder: "+empty+"\n") {
		t.Errorf("text does not name the folder %s:\n%s", empty, stdout)
	}
}

// folderFiles reads every file of dir.
func folderFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	if len(files) == 0 {
		t.Fatalf("%s is empty", dir)
	}
	return files
}

// TestRealUnknownIsIncomplete: a run whose check ran out of time has no
// verdict on what was not checked: the campaign is incomplete (exit 3,
// "complete": false), says how many runs were not fully checked, and keeps
// their histories (it exited 0, "complete": true, and removed them).
func TestRealUnknownIsIncomplete(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := explore(t, "real", "--runs", "2", "--check-timeout", "1ns", "--json", "--out", out)
	var v struct {
		Complete    *bool    `json:"complete"`
		Unknown     int      `json:"unknown"`
		UnknownRuns []int    `json:"unknownRuns"`
		Files       []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	if code != exitIncomplete || v.Complete == nil || *v.Complete || v.Unknown != 2 || !slices.Equal(v.UnknownRuns, []int{1, 2}) {
		t.Fatalf("exit %d, %+v; want 3, complete false, 2 unknown\n%s", code, v, stdout)
	}
	if len(v.Files) != 2 {
		t.Fatalf("files %v, want both runs' histories", v.Files)
	}
	for _, f := range v.Files {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	code, stdout, _ = explore(t, "real", "--runs", "2", "--check-timeout", "1ns", "--out", out)
	if code != exitIncomplete || !strings.Contains(stdout, "2 of 2 runs not fully checked") ||
		!strings.Contains(stdout, "incomplete: 2 of 2 runs done, 2 of them not fully checked") {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}
}

// TestRealRunTimeout: a run that reaches --run-timeout ends the campaign
// as incomplete with a message that names the limit and the flag (the limit
// was a hidden 2 minutes, and the ending blamed "a run's machinery").
func TestRealRunTimeout(t *testing.T) {
	// Paused for 2 to 3 ttls at every pause point: 50 tasks a resource
	// cannot be done in 300ms.
	code, stdout, stderr := explore(t, "real", "--run-timeout", "300ms", "--ttl", "100ms", "--pause", "1", "--tasks", "50",
		"--runs", "2", "--out", t.TempDir())
	if code != exitIncomplete || !strings.Contains(stdout, "--run-timeout 300ms") || !strings.Contains(stdout, "time limit of 300ms") ||
		strings.Contains(stdout, "machinery") || strings.Contains(stdout, "deadline exceeded") {
		t.Fatalf("exit %d, want 3 naming --run-timeout 300ms\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = explore(t, "real", "--run-timeout", "300ms", "--ttl", "100ms", "--pause", "1", "--tasks", "50",
		"--runs", "2", "--out", t.TempDir(), "--json")
	var v struct {
		Runs int `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || code != exitIncomplete || v.Runs != 0 {
		t.Fatalf("--json: exit %d, %v, runs %d; want 3 and no run counted done (the first ended early)\n%s", code, err, v.Runs, stdout)
	}
	// Reached while the run's sink was still being made: the same ending,
	// not an error of a run that "could not start".
	code, stdout, stderr = explore(t, "real", "--run-timeout", "1ns", "--runs", "2", "--out", t.TempDir())
	if code != exitIncomplete || !strings.Contains(stdout, "--run-timeout 1ns") {
		t.Fatalf("--run-timeout 1ns: exit %d, want 3 naming it\n%s%s", code, stdout, stderr)
	}
}
