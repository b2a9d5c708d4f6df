package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
	"github.com/fencecheck/fencecheck/viz"
)

// TestCheckInterrupted: a check that Ctrl-C stops before it ends judged
// nothing it can report: incomplete (exit 3), saying so, in --json too.
func TestCheckInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := "../histories/seed/1-renew-at-deadline.jsonl"
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"check", path}, &out, &errb, designs.All()); code != exitIncomplete ||
		!strings.Contains(out.String(), "incomplete: interrupted before the check ended") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	var rep struct {
		Complete *bool  `json:"complete"`
		Stopped  string `json:"stopped"`
	}
	code := run(ctx, []string{"check", "--json", path}, &out, &errb, designs.All())
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || code != exitIncomplete || rep.Complete == nil || *rep.Complete || rep.Stopped != "interrupted" {
		t.Errorf("--json: exit %d, %v, %+v", code, err, rep)
	}
}

// TestCheckStdinIsNamedStdin: the report on standard input names it as
// the reader's errors do.
func TestCheckStdinIsNamedStdin(t *testing.T) {
	f, err := os.Open("../histories/seed/1-renew-at-deadline.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	if code, stdout, _ := explore(t, "check", "-"); code != exitOK || !strings.HasPrefix(stdout, "<stdin>: 6 events") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// fullDisk fails every write, as standard output on a full disk does.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestLostOutputIsAnError: a verb whose output could not be written ends
// with exit 2 saying so, not with the verdict's status as if it had been
// read (check's text output did not look at its writes).
func TestLostOutputIsAnError(t *testing.T) {
	for _, args := range [][]string{
		{"check", "../histories/seed/1-renew-at-deadline.jsonl"},
		{"check", "--help"},
		{"variants"},
	} {
		var errb bytes.Buffer
		if code := run(context.Background(), args, fullDisk{}, &errb, designs.All()); code != exitUsage || !strings.Contains(errb.String(), "no space left") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestSearchReportsADesignFault: a design whose decision returns a reply
// code none of its own makes search say so, with the run to it (random) or
// the step (bfs), exit 1 and "fault" in --json; not a Go panic, nor a
// proof; and so does the merge of a split search.
func TestSearchReportsADesignFault(t *testing.T) {
	faulty := spec.Variant{Name: "faulty", Summary: "Check answers 42 to a stale write", Design: model.Design{
		Check: func(v model.SinkView, w model.Msg) uint8 {
			if w.Token < v.Fence {
				return 42
			}
			return model.RefCheck(v, w)
		}}}
	cat := append(designs.All(), faulty)
	bounds := []string{"--workers", "2", "--resources", "1", "--ttl", "1", "--ops", "2", "--grants", "2", "--in-flight", "2",
		"--drops", "0", "--dups", "0", "--crashes", "0", "--restarts", "0", "--forgeries", "0", "--skew", "0", "--sink-restarts", "0"}
	for _, c := range []struct {
		mode, want string
	}{{"random", "the run to it ("}, {"bfs", "at depth "}} {
		args := append([]string{"search", "--variant", "faulty", "--invariant", "fencing", "--mode", c.mode, "--out", t.TempDir()}, bounds...)
		code, stdout, stderr := exploreWith(t, cat, args...)
		if code != exitViolation || !strings.Contains(stdout, "faulty: the design's decision failed: design: Check returned reply code 42") ||
			!strings.Contains(stdout, c.want) {
			t.Errorf("%s: exit %d\n%s%s", c.mode, code, stdout, stderr)
		}
		var res struct {
			Complete bool
			Fault    *struct{ Cause string }
		}
		code, stdout, _ = exploreWith(t, cat, append(args, "--json")...)
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitViolation || res.Complete || res.Fault == nil {
			t.Errorf("%s --json: exit %d, %v, %+v", c.mode, code, err, res)
		}
		// The merge of a split search where a job met the fault says so
		// too (it said only that the job stopped early).
		var files []string
		for _, shard := range []string{"0/2", "1/2"} {
			_, stdout, _ = exploreWith(t, cat, append(args, "--json", "--shard", shard)...)
			f := filepath.Join(t.TempDir(), "job.json")
			if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		code, stdout, stderr = exploreWith(t, cat, append([]string{"merge"}, files...)...)
		if code != exitViolation || !strings.Contains(stdout, "faulty: the design's decision failed in job ") {
			t.Errorf("%s merge: exit %d\n%s%s", c.mode, code, stdout, stderr)
		}
		res.Fault = nil
		code, stdout, _ = exploreWith(t, cat, append([]string{"merge", "--json"}, files...)...)
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitViolation || res.Complete || res.Fault == nil {
			t.Errorf("%s merge --json: exit %d, %v, %+v", c.mode, code, err, res)
		}
	}
	// A sweep's point where the design fails is no verdict: incomplete,
	// saying why, not safe within its budget.
	args := append([]string{"sweep", "--variant", "faulty", "--param", "ttl=1..2", "--invariant", "fencing", "--max-states", "3",
		"--runs", "300", "--json", "--out", t.TempDir()}, bounds[6:]...)
	code, stdout, stderr := exploreWith(t, cat, args...)
	var sw sweepResult
	if err := json.Unmarshal([]byte(stdout), &sw); err != nil || code != exitIncomplete || len(sw.Grid.Cells) != 2 {
		t.Fatalf("sweep: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	for _, c := range sw.Grid.Cells {
		if c.Verdict != viz.VerdictIncomplete || !strings.Contains(c.Detail, "the design's decision failed: design: Check returned reply code 42") {
			t.Errorf("sweep cell %+v", c)
		}
	}
}

// TestRealKeepsEveryRun: with --keep, run N's history is in run-N.jsonl
// (N from 1, as the messages count runs), one file a run, each its own:
// a caught run was saved again one number up, over the next run's file,
// and a run's history was lost.
func TestRealKeepsEveryRun(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := explore(t, "real", "--runs", "4", "--sink", "check-then-write", "--keep", "--seed", "1", "--out", out)
	if code != exitViolation {
		t.Fatalf("exit %d, want 1 (check-then-write caught)\n%s%s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "real-builtin-sqlite-check-then-write")
	for n := 1; n <= 4; n++ {
		h, err := history.ReadFile(filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", n)))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("; run %d of seed 1", n); !strings.HasSuffix(h.Header.Note, want) {
			t.Errorf("run-%d.jsonl holds %q, want a note ending %q", n, h.Header.Note, want)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "run-*.jsonl")); len(files) != 4 {
		t.Errorf("%d run files, want 4: %v", len(files), files)
	}
}

// TestCheckReportIsPlainText: a resource's name or a message holding
// control characters is printed escaped ("job\nno invariant violated" made
// a line of its own), and a violation the header expects and the history
// does not show is said (check said only "no invariant violated"), and so
// are the violations a report leaves out.
func TestCheckReportIsPlainText(t *testing.T) {
	dir := t.TempDir()
	hostile := jsonString(t, "job\nno invariant violated\x1b[2K")
	hist := strings.ReplaceAll(`{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":RES,"value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":RES,"value":{"token":1}}
{"time":5,"process":"w2","type":"invoke","f":"acquire","resource":RES,"value":{"owner":"w2","incarnation":1,"requestId":"b1","ttl":1}}
{"time":5,"process":"w2","type":"ok","f":"acquire","resource":RES,"value":{"token":2}}
{"time":6,"process":"w1","type":"invoke","f":"write","resource":RES,"value":{"token":1,"resultId":"r","payload":"p"}}
{"time":6,"process":"w1","type":"ok","f":"write","resource":RES,"value":{"outcome":"written"}}
`, "RES", hostile)
	path := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(path, []byte(hist), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := explore(t, "check", path)
	if code != exitViolation || strings.Contains(stdout, "\nno invariant violated") || strings.Contains(stdout, "\x1b") ||
		!strings.Contains(stdout, `on job\nno invariant violated\x1b[2K: `) {
		t.Errorf("exit %d, want 1 and the name escaped:\n%q", code, stdout)
	}
	quiet := `{"format":"fencecheck-history","version":1,"expect":["exclusive-lease"]}
{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a1","ttl":1}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":1}}
{"time":0,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":1}}
`
	if err := os.WriteFile(path, []byte(quiet), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = explore(t, "check", path)
	if code != exitOK || !strings.Contains(stdout, "expected by the header, not found in the history: exclusive-lease\n") {
		t.Errorf("exit %d, want 0 and the expected violation said missing:\n%s", code, stdout)
	}
	// Seven stale writes accepted: five are listed, and the text says two
	// more were left out (only --json counted them).
	many := `{"format":"fencecheck-history","version":1}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":2}}
`
	for i := range 7 {
		many += fmt.Sprintf(`{"time":1,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":1,"resultId":"r%d","payload":"a"}}
{"time":1,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, i)
	}
	if err := os.WriteFile(path, []byte(many), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = explore(t, "check", path)
	if code != exitViolation || !strings.Contains(stdout, "\nand 2 more violations not listed") {
		t.Errorf("exit %d, want 1 and the two violations left out counted:\n%s", code, stdout)
	}
}
