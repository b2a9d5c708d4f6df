// Package bench holds the comparison of fencecheck with Spin (run.sh, the
// Promela models, cmd/fencebench) and, in this test, the differential test
// that the comparison rests on.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// asserted is what the Promela models assert: every invariant but
// absolute-validity (not a guarantee of the protocol), linearizable-sink
// (judged on histories, not on states) and idempotent-result (their sink
// keys results by task, as every variant here does, so it cannot fail).
var asserted = func() spec.Set {
	var s spec.Set
	for _, inv := range spec.Invariants {
		if inv.ID != spec.AbsoluteValidity && inv.ID != spec.LinearizableSink && inv.ID != spec.IdempotentResult {
			s |= spec.SetOf(inv.ID)
		}
	}
	return s
}()

// TestSpinAgrees is a differential test of the model and of checker.BFS
// against two implementations that share no code with them: fencing.pml,
// the same protocol written in Promela as one process, explored by Spin
// without reduction, and fencing_procs.pml, written the way a Spin user
// would (a process per node), explored with Spin's partial-order
// reduction. On each bound (every fault kind among them; the reference and
// the four variants the Promela models have), Spin must find an assertion
// violated in fencing.pml exactly when the BFS finds an asserted invariant
// violated, and in fencing_procs.pml too on the bound with every fault and
// on each variant's; and, on all bounds but one (too large for a test), Spin's
// exploration of fencing.pml must store the same number of distinct states
// as the BFS's of the whole space and take the same transitions (one more:
// Spin's initial step). A model change that adds or merges a state, in
// either model, shows here. Spin and gcc are needed (test.sh installs them);
// without them the test is skipped, or fails when CI=true.
func TestSpinAgrees(t *testing.T) {
	for _, tool := range []string{"spin", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := fmt.Sprintf("%s not found: TestSpinAgrees needs Spin and gcc (apt-get install spin gcc)", tool)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	none := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 1, Grants: 2, InFlight: 1}
	every := none
	every.Drops, every.Dups, every.Crashes, every.Restarts, every.Forgeries = 1, 1, 1, 1, 1
	with := func(c model.Config, f func(*model.Config)) model.Config { f(&c); return c }
	bounds := []struct {
		variant      string
		c            model.Config
		count, procs bool // compare the counts too (else the verdicts only); and fencing_procs.pml's verdict
	}{
		{"reference", every, true, true},
		{"reference", with(none, func(c *model.Config) { c.Resources, c.Ops, c.Grants = 2, 2, 1 }), true, false},
		{"reference", with(none, func(c *model.Config) { c.Workers = 3 }), true, false},
		{"reference", with(none, func(c *model.Config) { c.TTL, c.Ops = 3, 2 }), true, false},
		{"check-then-write", with(none, func(c *model.Config) { c.Ops = 2 }), true, true},
		{"check-then-write", with(none, func(c *model.Config) { c.TTL, c.Ops, c.InFlight = 1, 2, 2 }), false, true},
		{"grant-before-fence", with(every, func(c *model.Config) { c.Dups, c.Forgeries = 0, 0 }), true, true},
		{"ttl-only-lock", with(none, func(c *model.Config) { c.Ops = 2 }), true, true},
		{"no-acquire-dedup", with(every, func(c *model.Config) { c.Dups, c.Forgeries = 0, 0 }), true, true},
	}
	for _, b := range bounds {
		name := fmt.Sprintf("%s/W%d_R%d_ttl%d_ops%d_grants%d_inFlight%d_drops%d_dups%d_crashes%d_restarts%d_forgeries%d",
			b.variant, b.c.Workers, b.c.Resources, b.c.TTL, b.c.Ops, b.c.Grants, b.c.InFlight,
			b.c.Drops, b.c.Dups, b.c.Crashes, b.c.Restarts, b.c.Forgeries)
		t.Run(name, func(t *testing.T) {
			v, err := spec.LookupVariant(designs.All(), b.variant)
			if err != nil {
				t.Fatal(err)
			}
			m, err := v.Machine(b.c)
			if err != nil {
				t.Fatal(err)
			}
			opt := checker.BFSOptions{Exhaustive: true}
			if !b.count {
				opt = checker.BFSOptions{Stop: asserted}
			}
			res := checker.BFS(context.Background(), m, opt)
			if b.count && res.Stopped != checker.StopComplete {
				t.Fatalf("the BFS stopped: %s", res.Stopped)
			}
			want := res.Violated&asserted != 0
			pan := buildPan(t, "fencing.pml", b.variant, b.c, "-DNOREDUCE")
			verdict := runPan(t, pan) // stops at the first assertion violated
			verdicts := []panVerdict{{"fencing.pml", verdict.errors}}
			if b.procs {
				verdicts = append(verdicts, panVerdict{"fencing_procs.pml", runPan(t, buildPan(t, "fencing_procs.pml", b.variant, b.c)).errors})
			}
			for _, p := range verdicts {
				if found := p.errors > 0; found != want {
					t.Errorf("Spin on %s finds an assertion violated: %v; the BFS finds %v (asserted: %v)",
						p.file, found, res.ViolatedIDs, want)
				}
			}
			t.Logf("violated: BFS %v; Spin's errors %v", res.ViolatedIDs, verdicts)
			if !b.count {
				return
			}
			all := verdict
			if verdict.errors > 0 {
				all = runPan(t, pan, "-A") // every state, assertions ignored
			}
			if all.states != res.States || all.transitions != res.Transitions+1 {
				t.Errorf("Spin: %d states, %d transitions; BFS: %d states, %d transitions (+1: %d)",
					all.states, all.transitions, res.States, res.Transitions, res.Transitions+1)
			}
			t.Logf("%d states, %d transitions", res.States, res.Transitions)
		})
	}
}

// promelaVariants are the designs the Promela models have, by the macro that
// selects each (none: the reference).
var promelaVariants = map[string]string{"reference": "", "check-then-write": "CHECK_THEN_WRITE",
	"grant-before-fence": "GRANT_BEFORE_FENCE", "ttl-only-lock": "TTL_ONLY_LOCK", "no-acquire-dedup": "NO_ACQUIRE_DEDUP"}

// buildPan writes Spin's verifier of the Promela file for the variant and
// config into a temporary directory and compiles it with the gcc flags
// given (-O0: these bounds are small, and gcc -O2 takes longer than the
// searches), returning its path.
func buildPan(t *testing.T, file, variant string, c model.Config, gccFlags ...string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-a"}
	for _, d := range []struct {
		name string
		v    int
	}{{"W", c.Workers}, {"R", c.Resources}, {"TTL", c.TTL}, {"OPS", c.Ops}, {"GRANTS", c.Grants},
		{"INFLIGHT", c.InFlight}, {"DROPS", c.Drops}, {"DUPS", c.Dups}, {"CRASHES", c.Crashes},
		{"RESTARTS", c.Restarts}, {"FORGERIES", c.Forgeries}} {
		args = append(args, fmt.Sprintf("-D%s=%d", d.name, d.v))
	}
	macro, ok := promelaVariants[variant]
	if !ok {
		t.Fatalf("the Promela models have no variant %s", variant)
	}
	if macro != "" {
		args = append(args, "-D"+macro)
	}
	run(t, dir, "spin", append(args, file)...)
	run(t, dir, "gcc", append(append([]string{"-O0", "-DSAFETY"}, gccFlags...), "-o", "pan", "pan.c")...)
	return filepath.Join(dir, "pan")
}

// panVerdict is the errors Spin's verifier of one Promela file found.
type panVerdict struct {
	file   string
	errors uint64
}

// panResult is what a run of Spin's verifier counted.
type panResult struct{ states, transitions, errors uint64 }

var (
	panStates      = regexp.MustCompile(`(?m)^\s*(\d+) states, stored`)
	panTransitions = regexp.MustCompile(`(?m)^\s*(\d+) transitions \(= stored\+matched\)`)
	panErrors      = regexp.MustCompile(`errors: (\d+)`)
)

// runPan runs the verifier at pan with a 2^22-slot hash table, no depth
// limit that these bounds reach, and no report of end states (-E: the BFS
// has none; a state with no step is a state like any other), so that its
// errors are assertions violated; and parses its counts.
func runPan(t *testing.T, pan string, args ...string) panResult {
	t.Helper()
	out := run(t, filepath.Dir(pan), pan, append([]string{"-m200000", "-w22", "-E"}, args...)...)
	var r panResult
	for _, f := range []struct {
		re *regexp.Regexp
		n  *uint64
	}{{panStates, &r.states}, {panTransitions, &r.transitions}, {panErrors, &r.errors}} {
		m := f.re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no %q in its output:\n%s", pan, f.re, out)
		}
		*f.n, _ = strconv.ParseUint(m[1], 10, 64)
	}
	return r
}

// run runs name with args in dir and returns its output; a failure ends the
// test with the output.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}
