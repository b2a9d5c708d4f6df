package explore

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
)

// bfsCounts is what an uninterrupted search and a resumed one must agree on.
type bfsCounts struct {
	Stopped     string            `json:"stopped"`
	States      uint64            `json:"states"`
	Transitions uint64            `json:"transitions"`
	Levels      []uint64          `json:"levels"`
	Violated    []string          `json:"violated"`
	Reached     map[string]uint64 `json:"reached"`
	Shortest    []struct {
		Invariant string   `json:"invariant"`
		Length    int      `json:"length"`
		Trace     []string `json:"trace"`
	} `json:"shortest"`
}

// searchJSON runs explore search with --json and returns its exit status,
// the BFS's counts and the summary's resume command.
func searchJSON(t *testing.T, args ...string) (int, bfsCounts, string) {
	t.Helper()
	code, stdout, stderr := explore(t, append(args, "--json")...)
	var out struct {
		BFS    bfsCounts `json:"bfs"`
		Resume string    `json:"resume"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, stdout, stderr)
	}
	return code, out.BFS, out.Resume
}

// TestSearchCheckpointResume: a BFS stopped at --max-states with
// --checkpoint exits 3 and says how to go on; the command it prints
// completes the search, exit 0, with the counts, verdicts and shortest
// counterexamples of one uninterrupted run. In --json the command is
// "resume".
func TestSearchCheckpointResume(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--quiet", "--out", t.TempDir()}, tinyBFS...)
	code, want, _ := searchJSON(t, base...)
	if code != exitOK || want.Stopped != checker.StopComplete {
		t.Fatalf("uninterrupted: exit %d, %s", code, want.Stopped)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	code, stdout, stderr := explore(t, append(base, "--checkpoint", dir, "--max-states", "1000")...)
	_, cmd, found := strings.Cut(stdout, "to go on from there:\n  ")
	if code != exitIncomplete || !found || !strings.Contains(stdout, "incomplete") {
		t.Fatalf("stopped at --max-states: exit %d, want 3 and how to resume\n%s%s", code, stdout, stderr)
	}
	args := strings.Fields(strings.TrimSpace(cmd))
	if args[0] != "explore" || !strings.Contains(cmd, "--resume "+dir) || strings.Contains(cmd, "--max-states") ||
		strings.Contains(cmd, "--checkpoint") {
		t.Fatalf("the resume command: %q", cmd)
	}
	code, got, _ := searchJSON(t, args[1:]...)
	if code != exitOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed: exit %d\n%+v\nwant %+v", code, got, want)
	}

	dir = filepath.Join(t.TempDir(), "ck")
	code, _, resume := searchJSON(t, append(base, "--checkpoint", dir, "--max-states", "1600")...)
	if code != exitIncomplete || !strings.HasPrefix(resume, "explore search ") || !strings.HasSuffix(resume, "--resume "+dir) {
		t.Fatalf("--json: exit %d, resume %q", code, resume)
	}
	args = strings.Fields(resume)[1:]
	if !slices.Contains(args, "--json") { // the command goes on as given, --json with it
		t.Fatalf("--json's resume command: %q", resume)
	}
	code, got, _ = searchJSON(t, slices.DeleteFunc(args, func(a string) bool { return a == "--json" })...) // searchJSON adds --json
	if code != exitOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed from --json's command: exit %d\n%+v\nwant %+v", code, got, want)
	}
}

// TestSearchResumeBadCheckpoint: resuming another search's checkpoint, a
// corrupt one, or none is an input error (exit 2) naming the file and
// what is wrong, in --json too; so is a new search into a directory with
// a checkpoint, and --resume or --checkpoint with a random search.
func TestSearchResumeBadCheckpoint(t *testing.T) {
	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--quiet", "--out", t.TempDir()}, tinyBFS...)
	dir := t.TempDir()
	if code, stdout, stderr := explore(t, append(base, "--checkpoint", dir, "--max-states", "1600")...); code != exitIncomplete {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	file := filepath.Join(dir, checker.CheckpointFile)
	for _, c := range []struct {
		args  []string
		field string
	}{
		{[]string{"--ttl", "2"}, "config.ttl"},
		{[]string{"--hash-compact"}, "mode"},
		{[]string{"--invariant", "exclusive-lease"}, "stop"},
		{[]string{"--shard", "0/2", "--shard-depth", "2"}, "shard"},
	} {
		args := append(withFlags(base, c.args...), "--resume", dir) // base's --ttl, --invariant replaced: a flag may be given once
		code, stdout, stderr := explore(t, args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, file+": "+c.field+": ") {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr)
		}
		code, stdout, _ = explore(t, append(args, "--json")...)
		var e map[string]any
		if err := json.Unmarshal([]byte(stdout), &e); err != nil || code != exitUsage || e["file"] != file || e["field"] != c.field {
			t.Errorf("%v --json: exit %d, %v %v", c.args, code, e, err)
		}
	}
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte{}, good...)
	bad[len(bad)/2] ^= 0x10
	for _, c := range []struct {
		what string
		data []byte
	}{{"flipped", bad}, {"cut", good[:len(good)/3]}} {
		if err := os.WriteFile(file, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := explore(t, append(base, "--resume", dir)...)
		if code != exitUsage || !strings.Contains(stderr, file+": ") || !strings.Contains(stderr, "corrupt") {
			t.Errorf("a %s checkpoint: exit %d, stderr %q", c.what, code, stderr)
		}
	}
	if code, _, stderr := explore(t, append(base, "--checkpoint", dir)...); code != exitUsage || !strings.Contains(stderr, "already there") {
		t.Errorf("a new search into a checkpoint's directory: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := explore(t, append(base, "--resume", t.TempDir())...); code != exitUsage || !strings.Contains(stderr, "no checkpoint") {
		t.Errorf("resuming from an empty directory: exit %d, stderr %q", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if code, _, stderr := explore(t, append(base, "--resume", missing)...); code != exitUsage || !strings.Contains(stderr, "no checkpoint") {
		t.Errorf("resuming from a missing directory: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("resuming from a missing directory made it: %v", err)
	}
	if code, _, stderr := explore(t, append(base, "--checkpoint-every", "1m")...); code != exitUsage || !strings.Contains(stderr, "--checkpoint-every needs") {
		t.Errorf("--checkpoint-every with no directory to save in: exit %d, stderr %q", code, stderr)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := explore(t, append(base, "--spill-dir", notDir)...); code != exitUsage || !strings.Contains(stderr, "--spill-dir: "+notDir+" is a file") {
		t.Errorf("a file for --spill-dir: exit %d, stderr %q", code, stderr)
	}
	for _, flag := range []string{"--resume", "--checkpoint", "--spill-dir"} {
		code, _, stderr := explore(t, "search", "--variant", "reference", "--mode", "random", flag, dir)
		if code != exitUsage || !strings.Contains(stderr, flag+" is for --mode bfs") {
			t.Errorf("%s with a random search: exit %d, stderr %q", flag, code, stderr)
		}
	}
}

// TestSearchCheckpointNotWritten: a checkpoint that cannot be written (its
// temporary file's name taken by a directory, as a full disk would refuse
// it) loses nothing of the search. As the search ends: the violation is
// reported and its counterexample saved (exit 1), a complete search's
// verdict holds (exit 0), each with a note and, in --json, "error". At a
// level's start: the search is incomplete (exit 3), saying the cause and
// how far it got, and goes on from the last checkpoint written, or says
// there is none. A second search into a directory a search holds is
// refused (exit 2) naming the lock.
func TestSearchCheckpointNotWritten(t *testing.T) {
	block := func(dir string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, checker.CheckpointFile+".tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	dir := filepath.Join(t.TempDir(), "ck")
	block(dir)
	violating := append([]string{"search", "--variant", "grant-before-fence", "--quiet", "--out", out}, tinyBFS...)
	code, stdout, stderr := explore(t, append(violating, "--checkpoint", dir, "--checkpoint-every", "1h")...)
	saved := filepath.Join(out, "grant-before-fence", "fence-before-grant.jsonl")
	if _, err := os.Stat(saved); code != exitViolation || err != nil || !strings.Contains(stdout, "checkpoint not saved as the search ended (its result stands)") {
		t.Fatalf("a violation, its checkpoint not written: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	code, stdout, _ = explore(t, append(violating, "--checkpoint", dir, "--checkpoint-every", "1h", "--json")...)
	var e struct {
		Error     string         `json:"error"`
		Violation map[string]any `json:"violation"`
	}
	if err := json.Unmarshal([]byte(stdout), &e); err != nil || code != exitViolation || e.Violation == nil || !strings.Contains(e.Error, "bfs.checkpoint") {
		t.Fatalf("--json: exit %d, %+v, %v", code, e, err)
	}

	base := append([]string{"search", "--variant", "reference", "--invariant", "fencing", "--quiet", "--out", out}, tinyBFS...)
	code, stdout, _ = explore(t, append(base, "--checkpoint", dir, "--checkpoint-every", "1h")...)
	if code != exitOK || !strings.Contains(stdout, "no violation found (") || !strings.Contains(stdout, "checkpoint not saved") {
		t.Fatalf("a complete search, its checkpoint not written: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = explore(t, append(base, "--checkpoint", dir)...)
	if code != exitIncomplete || !strings.Contains(stdout, "incomplete: ") || !strings.Contains(stdout, "file error: checkpoint ") ||
		!strings.Contains(stdout, "no checkpoint was written") {
		t.Fatalf("stopped at level 0's checkpoint: exit %d\n%s", code, stdout)
	}

	dir = filepath.Join(t.TempDir(), "ck")
	if code, stdout, stderr := explore(t, append(base, "--checkpoint", dir, "--max-states", "1000")...); code != exitIncomplete {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	block(dir)
	code, stdout, _ = explore(t, append(base, "--resume", dir)...)
	_, cmd, found := strings.Cut(stdout, "to go on from there once the file can be written (room on its disk):\n  ")
	if code != exitIncomplete || !found || !strings.Contains(stdout, "the last checkpoint written, of depth ") ||
		!strings.Contains(cmd, "--resume "+dir) {
		t.Fatalf("resumed, its next checkpoint not written: exit %d\n%s", code, stdout)
	}

	host, _ := os.Hostname()
	lock := filepath.Join(dir, checker.LockFile)
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())+" "+host+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := explore(t, append(base, "--resume", dir)...); code != exitUsage || !strings.Contains(stderr, lock+": another search") {
		t.Fatalf("a directory another search holds: exit %d, %q", code, stderr)
	}
}
