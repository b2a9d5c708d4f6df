package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
	"github.com/fencecheck/fencecheck/viz"
)

// noOutput fails the test when the output folder of a refused command
// exists: an input error writes nothing there.
func noOutput(t *testing.T, what, out string) {
	t.Helper()
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: the output folder %s was made on an input error (%v)", what, out, err)
	}
}

// TestParseShard: --shard takes exactly i/n, two unsigned decimal integers
// and one '/', with 0 <= i < n; anything else is a usage error naming the
// flag and the value.
func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want checker.Shard
	}{{"0/1", checker.Shard{I: 0, N: 1}}, {"1/2", checker.Shard{I: 1, N: 2}}, {"9/10", checker.Shard{I: 9, N: 10}}, {"007/8", checker.Shard{I: 7, N: 8}}} {
		got, err := parseShard(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseShard(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"1/2/3", "1/2abc", "0/2/x", "+1/2", "0/+2", " 1/2", "1/ 2", "1/2 ", "-1/2", "0/-2",
		"1", "/", "1/", "/2", "2/2", "3/2", "0/0", "1//2", "0x1/2", "1_0/20", "1.0/2", "99999999999999999999/1", "1/2\n", "１/2"} {
		_, err := parseShard(in)
		var ue usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "--shard") || !strings.Contains(err.Error(), `"`+strings.ReplaceAll(in, "\n", `\n`)+`"`) {
			t.Errorf("parseShard(%q): %v; want a usage error naming --shard and the value", in, err)
		}
	}
}

// TestShardFlagIsStrict: search and sweep both refuse a --shard that is not
// exactly i/n (fmt.Sscanf read these as 1/2 or 0/2), before anything runs.
func TestShardFlagIsStrict(t *testing.T) {
	for _, shard := range []string{"1/2/3", "1/2abc", "0/2/x", "+1/2", "0/+2", " 1/2", "1/ 2"} {
		for _, verb := range [][]string{
			{"search", "--variant", "reference", "--runs", "2", "--quiet"},
			{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--runs", "2", "--max-states", "10", "--quiet"},
		} {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := explore(t, append(verb, "--shard", shard, "--out", out)...)
			if code != exitUsage || !strings.Contains(stderr, `--shard "`+shard+`"`) || stdout != "" {
				t.Errorf("%s --shard %q: exit %d, stderr %q; want 2 naming --shard and the value", verb[0], shard, code, stderr)
			}
			noOutput(t, verb[0]+" --shard "+shard, out)
		}
	}
}

// TestMergeBoundsWhatItReads: merge reads at most maxResultSize bytes of a
// file, whatever it is (it read /dev/zero until the memory ran out): a
// bigger regular file is refused without reading it, a stream once it has
// given more, both as an input error naming the file.
func TestMergeBoundsWhatItReads(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxResultSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()

	fifo := filepath.Join(dir, "endless")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// The stream: zeros, a MiB more than the bound (not endless, so that
	// a merge that reads it all ends too), until the reader closes it.
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		_, _ = io.CopyN(w, zeros{}, maxResultSize+1<<20)
	}()

	for _, path := range []string{big, fifo} {
		code, stdout, stderr := explore(t, "merge", "--json", path)
		var got struct{ Error, File string }
		if code != exitUsage || !strings.Contains(stderr, path+": more than 64 MiB") || json.Unmarshal([]byte(stdout), &got) != nil || got.File != path {
			t.Errorf("merge %s: exit %d, stderr %q, stdout %q; want 2, the file named, and more than 64 MiB", path, code, stderr, stdout)
		}
	}
	code, _, stderr := explore(t, "merge", dir)
	if code != exitUsage || !strings.Contains(stderr, dir+": is a directory") {
		t.Errorf("merge DIR: exit %d, stderr %q", code, stderr)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// scheduleFile is a model counterexample the real replay plays.
var scheduleFile = filepath.Join("..", "histories", "counterexamples", "check-then-write.jsonl")

// TestRealScheduleRefusesFlagsItIgnores: with --schedule, a flag the replay
// does not use is a usage error naming it, even at its default value (the
// sink, say, is the schedule's design's: --sink atomic would read as an
// atomic sink tested); so is --tick without --schedule. The flags the replay
// uses are taken.
func TestRealScheduleRefusesFlagsItIgnores(t *testing.T) {
	for _, arg := range []string{"--sink=atomic", "--sink=none", "--workers=4", "--procs=0", "--resources=2", "--tasks=3",
		"--runs=10", "--seed=1", "--ttl=20ms", "--pause=0.2", "--pause=NaN", "--stop", "--stop=false", "--fault=none",
		"--endpoints=", "--keep", "--dsn=" + t.TempDir()} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := explore(t, "real", "--schedule", scheduleFile, arg, "--out", out)
		name, _, _ := strings.Cut(arg, "=")
		if code != exitUsage || !strings.Contains(stderr, name) || !strings.Contains(stderr, "not used with --schedule") || stdout != "" {
			t.Errorf("real --schedule FILE %s: exit %d, stderr %q; want 2 naming %s", arg, code, stderr, name)
		}
		noOutput(t, arg, out)
	}
	// Every flag of explore real is either used by the replay or refused
	// with --schedule (a flag added later must be one or the other).
	_, help, _ := explore(t, "real", "--help", "--json")
	var h struct{ Flags []struct{ Name string } }
	if err := json.Unmarshal([]byte(help), &h); err != nil || len(h.Flags) == 0 {
		t.Fatalf("real --help --json: %v\n%s", err, help)
	}
	for _, f := range h.Flags {
		used := slices.Contains([]string{"schedule", "db", "dsn", "tick", "out", "json", "lease"}, f.Name)
		if _, refused := scheduleIgnores[f.Name]; used == refused {
			t.Errorf("--%s: used by the replay %v, refused with --schedule %v; want exactly one", f.Name, used, refused)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := explore(t, "real", "--tick", "5ms", "--runs", "1", "--out", out)
	if code != exitUsage || !strings.Contains(stderr, "--tick") {
		t.Errorf("real --tick without --schedule: exit %d, stderr %q; want 2 naming --tick", code, stderr)
	}
	noOutput(t, "--tick", out)

	// Every flag the replay uses, given explicitly.
	code, stdout, stderr := explore(t, "real", "--schedule", scheduleFile, "--lease", "builtin", "--db", "sqlite", "--tick", "10ms",
		"--out", t.TempDir(), "--json")
	var res struct{ Reproduced bool }
	if code != exitViolation || json.Unmarshal([]byte(stdout), &res) != nil || !res.Reproduced {
		t.Errorf("real --schedule with the flags it uses: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestRealFlagValues: --pause is a chance from 0 to 1 (NaN, infinities,
// negatives and more than 1 are usage errors); --dsn with --db sqlite is
// an existing folder, not a file. Nothing is written to --out.
func TestRealFlagValues(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--pause", "NaN"}, {"--pause", "nan"}, {"--pause", "Inf"}, {"--pause", "+Inf"}, {"--pause", "-Inf"},
		{"--pause", "-1"}, {"--pause", "-0.5"}, {"--pause", "1.5"},
		{"--dsn", file}, {"--dsn", filepath.Join(t.TempDir(), "missing")},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := explore(t, append([]string{"real", "--runs", "1", "--out", out}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, args[0]+" ") || stdout != "" {
			t.Errorf("real %v: exit %d, stderr %q; want 2 naming %s", args, code, stderr, args[0])
		}
		noOutput(t, strings.Join(args, " "), out)
	}
	// A folder for --dsn, and no pauses at all, are taken.
	dsn := t.TempDir()
	code, stdout, stderr := explore(t, "real", "--runs", "1", "--pause", "0", "--dsn", dsn, "--out", t.TempDir(), "--json")
	var res struct{ Runs int }
	if code != exitOK || json.Unmarshal([]byte(stdout), &res) != nil || res.Runs != 1 {
		t.Errorf("real --pause 0 --dsn DIR: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestRealScheduleFileErrors: a --schedule that is a directory, or is
// missing, is an error about the file, with no line (as explore check
// DIR's), and with --json an object naming the file.
func TestRealScheduleFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.jsonl")
	for _, c := range []struct{ path, want string }{{dir, dir + ": is a directory"}, {missing, missing + ": cannot open"}} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := explore(t, "real", "--schedule", c.path, "--out", out)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Contains(stderr, c.path+":1") {
			t.Errorf("real --schedule %s: exit %d, stderr %q; want 2 and %q, no line", c.path, code, stderr, c.want)
		}
		code, stdout, _ := explore(t, "real", "--schedule", c.path, "--out", out, "--json")
		var got map[string]any
		if code != exitUsage || json.Unmarshal([]byte(stdout), &got) != nil || got["file"] != c.path || got["line"] != nil || got["error"] == "" {
			t.Errorf("real --schedule %s --json: exit %d, %s; want the file, no line", c.path, code, stdout)
		}
		noOutput(t, c.path, out)
	}
}

// TestSweepPinnedParameter: a sweep of a parameter that --variant
// NAME@p=v pins is a usage error naming it (every point would be the same
// design, titled NAME@p=v); a pin of another parameter stays at every point
// of the sweep, which the grid's title and the counterexamples' headers say.
func TestSweepPinnedParameter(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := explore(t, append([]string{"sweep", "--variant", "restart-no-grace@grace=1", "--param", "grace=0..1", "--out", out}, small...)...)
	if code != exitUsage || !strings.Contains(stderr, "--param grace") || !strings.Contains(stderr, "pins grace") {
		t.Errorf("sweep of a pinned parameter: exit %d, stderr %q; want 2 naming grace", code, stderr)
	}
	noOutput(t, "sweep", out)

	// A design of two parameters: extra changes nothing, but its pin must
	// stay while grace is swept.
	twoKnobs := func(vals []int) spec.Variant {
		v := designs.RestartGrace(vals[0])
		v.Name = "two-knobs"
		return v
	}
	own := twoKnobs([]int{0})
	own.Params = []spec.Param{own.Params[0], {Name: "extra", Min: 0, Max: 5, Default: 0, Doc: "nothing"}}
	own.At = twoKnobs
	cat := append(designs.All(), own)
	dir := t.TempDir()
	args := append([]string{"sweep", "--variant", "two-knobs@extra=3", "--param", "grace=0..1", "--param", "ttl=1..2",
		"--invariant", "exclusive-lease", "--out", dir, "--json"}, small...)
	var stdout, errb bytes.Buffer
	code = run(context.Background(), args, &stdout, &errb, cat)
	var res sweepResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || code == exitUsage {
		t.Fatalf("exit %d, %v\n%s", code, err, errb.String())
	}
	if res.Variant != "two-knobs@extra=3" || res.Grid.Variant != "two-knobs@extra=3" {
		t.Errorf("sweep titled %q (grid %q), want two-knobs@extra=3", res.Variant, res.Grid.Variant)
	}
	violated := 0
	for _, c := range res.Grid.Cells {
		if c.Verdict != viz.VerdictViolated {
			continue
		}
		violated++
		path := filepath.Join(dir, "sweep", res.Variant, strings.TrimSuffix(c.Link, ".html")+".jsonl")
		h, err := history.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := "two-knobs@grace=" + string(rune('0'+c.X)) + ",extra=3"; h.Header.Variant != want {
			t.Errorf("cell grace=%d ttl=%d: the counterexample's variant is %q, want %q", c.X, c.Y, h.Header.Variant, want)
		}
		var rout, rerr bytes.Buffer
		if code := run(context.Background(), []string{"replay", path}, &rout, &rerr, cat); code == exitUsage || !strings.Contains(rout.String(), "reproduces all") {
			t.Errorf("replay %s: exit %d\n%s%s", path, code, rout.String(), rerr.String())
		}
	}
	if violated == 0 {
		t.Errorf("no violated cell: %+v", res.Grid.Cells)
	}
}

// TestSweepRefusesBeforeSearching: an invariant given twice and an --out
// that is a file are usage errors before any point is searched (both were
// found only after the whole grid, with its counterexamples written);
// and a sweep whose proofs --depth bounds says so in its legend and rule,
// not "proven".
func TestSweepRefusesBeforeSearching(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"sweep", "--variant", "restart-no-grace", "--param", "grace=0..1", "--param", "ttl=1..2"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(append(slices.Clone(base), "--invariant", "exclusive-lease,exclusive-lease", "--out", dir), small...), "--invariant: exclusive-lease given twice"},
		{append(append(slices.Clone(base), "--out", file), small...), "--out " + file + ": not a folder"},
	} {
		code, _, stderr := explore(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q", c.args[6:], code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "sweep")); err == nil {
			t.Errorf("%v: wrote under --out", c.args[6:])
		}
	}
	args := append(append(slices.Clone(base), "--invariant", "exclusive-lease", "--depth", "12", "--out", dir), small...)
	_, stdout, _ := explore(t, args...)
	if !strings.Contains(stdout, "✓ proven for runs of up to 12 actions (--depth 12)") ||
		!strings.Contains(stdout, "rule found on this grid, for runs of up to 12 actions: ") {
		t.Errorf("--depth 12:\n%s", stdout)
	}
}

// TestRealRefusesBeforeWriting: a --ttl below the lease services' 1ms (or
// not whole seconds, for etcd), --endpoints with the built-in lease, counts
// out of range, a --run-timeout of 0 and a --dsn whose server cannot be
// reached are usage errors naming the flag, before --out is written (the first named no flag
// after making the run's folder; the second was ignored; --resources 0 ran
// with 2, --workers 1000000 started them).
func TestRealRefusesBeforeWriting(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ttl", "1ns"}, "--ttl 1ns: want at least 1ms"},
		{[]string{"--endpoints", "127.0.0.1:1"}, "--endpoints 127.0.0.1:1: the built-in lease"},
		{[]string{"--resources", "0"}, "--resources 0: want 1 to 1000"}, // 0 was the driver's default, 2
		{[]string{"--tasks", "-1"}, "--tasks -1: must not be negative"},
		{[]string{"--tasks", "1001"}, "--tasks 1001: want 1 to 1000"},
		{[]string{"--workers", "1000000"}, "want at most 1000 goroutine and 64 process workers"},
		{[]string{"--procs", "65"}, "want at most 1000 goroutine and 64 process workers"},
		// etcd grants whole seconds (rounded up): a 100ms ttl ran on 1 s
		// leases that the pauses, 2 to 3 times 100ms, never outlasted.
		{[]string{"--lease", "etcd", "--ttl", "100ms"}, "--ttl 100ms: etcd's leases are whole seconds, at least 1s"},
		{[]string{"--lease", "etcd", "--ttl", "1500ms"}, "--ttl 1.5s: etcd's leases are whole seconds"},
		{[]string{"--run-timeout", "0s"}, "--run-timeout 0s: want a positive duration"},
		// A server that cannot be reached: the embedded etcd was started
		// and the campaign's folder made before the first run found it.
		{[]string{"--lease", "etcd", "--db", "postgres", "--dsn", "postgres://nobody@127.0.0.1:1/x"}, "--dsn: connecting to postgres"},
		{[]string{"--db", "postgres", "--dsn", "postgres://nobody@127.0.0.1:1/x?port=x"}, "--dsn: parsing the postgres DSN: cannot parse"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := explore(t, append([]string{"real", "--runs", "1", "--out", out}, c.args...)...)
		if _, err := os.Stat(out); code != exitUsage || !strings.Contains(stderr, c.want) || err == nil {
			t.Errorf("%v: exit %d, stderr %q, --out written: %v", c.args, code, stderr, err == nil)
		}
	}
}
