// Package bench holds the comparison of fencecheck with Spin (run.sh, the
// Promela models, cmd/fencebench) and, in this test, the differential test
// that the comparison rests on.
package bench

import (
	"context"
	"flag"
	"fmt"
	"maps"
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

var spinLarge = flag.Bool("spin.large", false,
	"TestSpinAgrees: also explore larger bounds with fencing.pml (every design with faults its small bound leaves out; about 7 minutes more)")

// asserted is what the Promela models assert: every invariant but
// absolute-validity (not a guarantee of the protocol) and linearizable-sink
// (judged on histories, not on states). idempotent-result can fail only
// where results are keyed by attempt (request-id-key); elsewhere the sink
// keeps one result per task.
var asserted = func() spec.Set {
	var s spec.Set
	for _, inv := range spec.Invariants {
		if inv.ID != spec.AbsoluteValidity && inv.ID != spec.LinearizableSink {
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
// the twenty-seven variants the Promela models have), Spin explores the
// whole space of fencing.pml past every assertion violated (pan -c0), and
// the BFS the whole space too (BFSOptions.Exhaustive): the invariants Spin
// finds violated (the models' CHECK names each) must be the asserted
// invariants the BFS finds violated, each on as many transitions (Spin's
// "violated: id" lines against BFSResult.Violations), and Spin must store
// the same number of distinct states and take the same transitions (one
// more: Spin's initial step). The same set is asked of fencing_procs.pml on
// each bound but two-step-commit-check's (safe, so nothing would stop its
// 9M-state search), row-version-cas's and those with clock skew (not in
// that model) and request-id-key's with two messages in flight (4.8M
// states there); on check-then-write's its whole space (5M states) is too
// large for a test, and its search stops at the first assertion violated:
// there it must only find one exactly when the BFS does. The bounds violate
// every asserted invariant, so that a CHECK naming the wrong one fails. A
// model change that adds or merges a state, or breaks or mends an
// invariant, in either model, shows here. With -spin.large it also explores
// larger bounds with fencing.pml alone: every design with faults its small
// bound leaves out. Spin and gcc are needed (test.sh installs them);
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
	// how fencing_procs.pml is searched on a bound
	const (
		procsNone  = iota // not at all
		procsFirst        // to the first assertion violated: the verdict only
		procsWhole        // the whole space: the verdict and the invariants violated
	)
	none := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 1, Grants: 2, InFlight: 1}
	every := none
	every.Drops, every.Dups, every.Crashes, every.Restarts, every.Forgeries = 1, 1, 1, 1, 1
	with := func(c model.Config, f func(*model.Config)) model.Config { f(&c); return c }
	type bound struct {
		variant string
		c       model.Config
		procs   int
	}
	bounds := []bound{
		{"reference", every, procsWhole},
		{"reference", with(none, func(c *model.Config) { c.Resources, c.Ops, c.Grants = 2, 2, 1 }), procsNone},
		{"reference", with(none, func(c *model.Config) { c.Workers = 3 }), procsNone},
		{"reference", with(none, func(c *model.Config) { c.TTL, c.Ops = 3, 2 }), procsNone},
		{"check-then-write", with(none, func(c *model.Config) { c.TTL, c.Ops, c.InFlight = 1, 2, 2 }), procsFirst},
		{"grant-before-fence", with(every, func(c *model.Config) { c.Dups, c.Forgeries = 0, 0 }), procsWhole},
		{"ttl-only-lock", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsWhole},
		{"no-acquire-dedup", with(every, func(c *model.Config) { c.Dups, c.Forgeries = 0, 0 }), procsWhole},
		{"renew-token-only", with(none, func(c *model.Config) { c.Ops, c.Grants, c.Crashes = 2, 1, 1 }), procsWhole},
		{"renew-at-deadline", with(none, func(c *model.Config) { c.TTL, c.Ops = 1, 2 }), procsWhole},
		{"global-fence", with(none, func(c *model.Config) { c.Resources, c.Ops, c.Grants = 2, 2, 1 }), procsWhole},
		{"volatile-counter", with(none, func(c *model.Config) { c.Restarts = 1 }), procsWhole},
		{"accept-higher-token", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsWhole},
		{"dedup-before-fence", with(none, func(c *model.Config) { c.TTL, c.Ops = 1, 3 }), procsWhole},
		{"release-advances-fence", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsWhole},
		{"renew-from-old-deadline", with(none, func(c *model.Config) { c.Ops, c.Grants = 3, 1 }), procsWhole},
		{"two-step-commit-check", with(none, func(c *model.Config) { c.TTL, c.Ops, c.InFlight = 1, 2, 2 }), procsNone},
		{"scheduler-only-check", with(none, func(c *model.Config) { c.Ops = 2 }), procsWhole},
		{"restart-no-grace", with(none, func(c *model.Config) { c.Restarts = 1 }), procsWhole},
		{"restart-no-grace", with(none, func(c *model.Config) { c.Ops, c.Restarts = 2, 1 }), procsWhole},
		{"failover-ttl-reset", with(none, func(c *model.Config) { c.Ops, c.Grants, c.Restarts = 2, 1, 1 }), procsWhole},
		{"etcd-revisions", with(none, func(c *model.Config) { c.Resources, c.Grants = 2, 1 }), procsWhole},
		{"holder-clock", with(none, func(c *model.Config) { c.Ops = 2 }), procsWhole},
		{"holder-clock-no-fence", with(none, func(c *model.Config) { c.Ops = 2 }), procsWhole},
		{"holder-margin", with(none, func(c *model.Config) { c.Ops = 2 }), procsWhole},
		{"lock-delay-no-fence", with(none, func(c *model.Config) { c.Ops = 2 }), procsWhole},
		{"sink-deadline", with(none, func(c *model.Config) { c.Ops = 2 }), procsWhole},
		{"producer-epochs", with(none, func(c *model.Config) { c.Ops, c.Crashes = 2, 1 }), procsWhole},
		{"row-version-cas", with(none, func(c *model.Config) { c.Ops = 3 }), procsNone},
		{"volatile-sink-fence", with(none, func(c *model.Config) { c.SinkRestarts = 1 }), procsWhole},
		{"worker-clock", with(none, func(c *model.Config) { c.Skew = 1 }), procsNone},
		{"request-id-key", with(none, func(c *model.Config) { c.TTL, c.Ops = 1, 3 }), procsWhole},
		{"request-id-key", with(none, func(c *model.Config) { c.TTL, c.Ops, c.InFlight = 1, 2, 2 }), procsNone},
		{"reference", with(none, func(c *model.Config) { c.Skew = 1 }), procsNone},
		{"holder-margin", with(none, func(c *model.Config) { c.Skew = 1 }), procsNone},
	}
	if *spinLarge { // fencing.pml alone: bounds of up to 17M states, every design with faults its small bound leaves out
		bounds = append(bounds, []bound{
			{"reference", with(none, func(c *model.Config) { c.Ops, c.Dups, c.Crashes, c.Forgeries = 2, 1, 1, 1 }), procsNone},
			{"reference", with(every, func(c *model.Config) { c.SinkRestarts = 1 }), procsNone},
			{"reference", with(none, func(c *model.Config) { c.Resources, c.Ops, c.Grants, c.Drops, c.Dups = 2, 2, 1, 1, 1 }), procsNone},
			{"reference", with(none, func(c *model.Config) { c.Workers, c.Crashes, c.Restarts = 3, 1, 1 }), procsNone},
			{"check-then-write", with(none, func(c *model.Config) { c.TTL, c.Ops, c.InFlight, c.SinkRestarts = 1, 2, 2, 1 }), procsNone},
			{"check-then-write", with(none, func(c *model.Config) { c.TTL, c.Ops, c.InFlight, c.Dups = 1, 2, 2, 1 }), procsNone},
			{"grant-before-fence", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsNone},
			{"ttl-only-lock", with(none, func(c *model.Config) { c.Ops, c.Dups, c.Crashes, c.Forgeries = 2, 1, 1, 1 }), procsNone},
			{"no-acquire-dedup", with(none, func(c *model.Config) { c.Ops, c.Drops, c.Dups = 2, 1, 1 }), procsNone},
			{"renew-token-only", with(none, func(c *model.Config) { c.Ops, c.Grants, c.Crashes, c.Drops = 2, 1, 1, 1 }), procsNone},
			{"renew-at-deadline", with(none, func(c *model.Config) { c.TTL, c.Ops = 1, 3 }), procsNone},
			{"global-fence", with(none, func(c *model.Config) { c.Resources, c.Ops, c.Grants, c.Forgeries = 2, 2, 1, 1 }), procsNone},
			{"volatile-counter", with(none, func(c *model.Config) { c.Ops, c.Restarts, c.Forgeries = 2, 1, 1 }), procsNone},
			{"volatile-counter", with(none, func(c *model.Config) { c.Ops, c.Grants, c.Restarts = 2, 3, 1 }), procsNone},
			{"accept-higher-token", with(none, func(c *model.Config) { c.Ops, c.Forgeries, c.Dups = 2, 1, 1 }), procsNone},
			{"dedup-before-fence", with(none, func(c *model.Config) { c.TTL, c.Ops, c.Forgeries = 1, 3, 1 }), procsNone},
			{"release-advances-fence", with(none, func(c *model.Config) { c.Ops = 3 }), procsNone},
			{"renew-from-old-deadline", with(none, func(c *model.Config) { c.Ops, c.Crashes = 3, 1 }), procsNone},
			{"two-step-commit-check", with(none, func(c *model.Config) { c.Ops, c.SinkRestarts = 2, 1 }), procsNone},
			{"scheduler-only-check", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsNone},
			{"scheduler-only-check", with(none, func(c *model.Config) { c.Ops, c.InFlight = 2, 2 }), procsNone},
			{"restart-no-grace", with(none, func(c *model.Config) { c.Ops, c.Grants, c.Restarts = 2, 3, 1 }), procsNone},
			{"failover-ttl-reset", with(none, func(c *model.Config) { c.Ops, c.Restarts = 2, 1 }), procsNone},
			{"etcd-revisions", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsNone},
			{"etcd-revisions", with(none, func(c *model.Config) { c.Resources, c.Ops, c.Grants, c.Restarts = 2, 2, 1, 1 }), procsNone},
			{"holder-clock", with(none, func(c *model.Config) { c.Ops, c.Skew = 2, 1 }), procsNone},
			{"holder-clock-no-fence", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsNone},
			{"holder-margin", with(none, func(c *model.Config) { c.Ops, c.Drops, c.Dups = 2, 1, 1 }), procsNone},
			{"lock-delay-no-fence", with(none, func(c *model.Config) { c.Ops, c.Forgeries = 2, 1 }), procsNone},
			{"lock-delay-no-fence", with(none, func(c *model.Config) { c.Ops, c.Restarts = 2, 1 }), procsNone},
			{"sink-deadline", with(none, func(c *model.Config) { c.Ops, c.Restarts = 2, 1 }), procsNone},
			{"producer-epochs", with(none, func(c *model.Config) { c.Ops, c.Crashes = 3, 1 }), procsNone},
			{"row-version-cas", with(none, func(c *model.Config) { c.Ops, c.Crashes, c.Forgeries = 3, 1, 1 }), procsNone},
			{"volatile-sink-fence", with(none, func(c *model.Config) { c.Ops, c.SinkRestarts, c.Forgeries = 2, 1, 1 }), procsNone},
			{"worker-clock", with(none, func(c *model.Config) { c.Skew = 2 }), procsNone},
			{"request-id-key", with(none, func(c *model.Config) { c.TTL, c.Ops, c.Dups, c.Forgeries = 1, 3, 1, 1 }), procsNone},
		}...)
	}
	for _, b := range bounds {
		name := fmt.Sprintf("%s/W%d_R%d_ttl%d_ops%d_grants%d_inFlight%d_drops%d_dups%d_crashes%d_restarts%d_forgeries%d",
			b.variant, b.c.Workers, b.c.Resources, b.c.TTL, b.c.Ops, b.c.Grants, b.c.InFlight,
			b.c.Drops, b.c.Dups, b.c.Crashes, b.c.Restarts, b.c.Forgeries)
		if b.c.SinkRestarts > 0 {
			name += fmt.Sprintf("_sinkRestarts%d", b.c.SinkRestarts)
		}
		if b.c.Skew > 0 {
			name += fmt.Sprintf("_skew%d", b.c.Skew)
		}
		t.Run(name, func(t *testing.T) {
			v, err := spec.LookupVariant(designs.All(), b.variant)
			if err != nil {
				t.Fatal(err)
			}
			m, err := v.Machine(b.c)
			if err != nil {
				t.Fatal(err)
			}
			res := checker.BFS(context.Background(), m, checker.BFSOptions{Exhaustive: true})
			if res.Stopped != checker.StopComplete {
				t.Fatalf("the BFS stopped: %s", res.Stopped)
			}
			want := res.Violated & asserted
			t.Logf("BFS: %d states, %d transitions; violated %v", res.States, res.Transitions, res.ViolatedIDs)
			runs := []panRun{runPan(t, "fencing.pml", buildPan(t, "fencing.pml", b.variant, b.c, "-DNOREDUCE"), true)}
			if b.procs != procsNone {
				const file = "fencing_procs.pml"
				runs = append(runs, runPan(t, file, buildPan(t, file, b.variant, b.c), b.procs == procsWhole))
			}
			for _, p := range runs {
				t.Logf("Spin on %s: %d states, %d transitions; %d assertions violated, of %v",
					p.file, p.states, p.transitions, p.errors, p.violated.IDs())
				if found := p.errors > 0; found != (want != 0) {
					t.Errorf("Spin on %s finds an assertion violated: %v; the BFS finds %v (asserted: %v)",
						p.file, found, res.ViolatedIDs, want != 0)
				}
				if p.whole && p.violated != want {
					t.Errorf("Spin on %s finds violated %v; the BFS finds %v of the asserted invariants (all it finds: %v)",
						p.file, p.violated.IDs(), want.IDs(), res.ViolatedIDs)
				}
			}
			counts := map[string]uint64{}
			for id, n := range res.Violations {
				if spec.SetOf(id)&asserted != 0 {
					counts[id] = n
				}
			}
			if got := runs[0].counts; !maps.Equal(got, counts) {
				t.Errorf("Spin on fencing.pml: violating transitions %v; BFS: %v", got, counts)
			}
			if all := runs[0]; all.states != res.States || all.transitions != res.Transitions+1 {
				t.Errorf("Spin on fencing.pml: %d states, %d transitions; BFS: %d states, %d transitions (+1: %d)",
					all.states, all.transitions, res.States, res.Transitions, res.Transitions+1)
			}
		})
	}
}

// promelaVariants are the designs the Promela models have, by the macro that
// selects each (none: the reference).
var promelaVariants = map[string]string{"reference": "", "check-then-write": "CHECK_THEN_WRITE",
	"grant-before-fence": "GRANT_BEFORE_FENCE", "ttl-only-lock": "TTL_ONLY_LOCK", "no-acquire-dedup": "NO_ACQUIRE_DEDUP",
	"renew-token-only": "RENEW_TOKEN_ONLY", "renew-at-deadline": "RENEW_AT_DEADLINE", "global-fence": "GLOBAL_FENCE",
	"volatile-counter": "VOLATILE_COUNTER", "accept-higher-token": "ACCEPT_HIGHER_TOKEN",
	"dedup-before-fence": "DEDUP_BEFORE_FENCE", "release-advances-fence": "RELEASE_ADVANCES_FENCE",
	"renew-from-old-deadline": "RENEW_FROM_OLD_DEADLINE", "two-step-commit-check": "TWO_STEP_COMMIT_CHECK",
	"scheduler-only-check": "SCHEDULER_ONLY_CHECK", "restart-no-grace": "RESTART_NO_GRACE",
	"failover-ttl-reset": "FAILOVER_TTL_RESET", "etcd-revisions": "ETCD_REVISIONS", "holder-clock": "HOLDER_CLOCK",
	"holder-clock-no-fence": "HOLDER_CLOCK_NO_FENCE", "holder-margin": "HOLDER_MARGIN",
	"lock-delay-no-fence": "LOCK_DELAY_NO_FENCE", "sink-deadline": "SINK_DEADLINE", "producer-epochs": "PRODUCER_EPOCHS",
	"row-version-cas": "ROW_VERSION_CAS", "volatile-sink-fence": "VOLATILE_SINK_FENCE", "worker-clock": "WORKER_CLOCK",
	"request-id-key": "REQUEST_ID_KEY"}

// buildPan writes Spin's verifier of the Promela file for the variant and
// config into a temporary directory and compiles it with -DPRINTF (it
// prints the models' "violated: id" lines) and the gcc flags given (-O0:
// these bounds are small, and gcc -O2 takes longer than the searches),
// returning its path.
func buildPan(t *testing.T, file, variant string, c model.Config, gccFlags ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{file, "designs.pml"} { // the model and the decisions it includes
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-a"}
	for _, d := range []struct {
		name string
		v    int
	}{{"W", c.Workers}, {"R", c.Resources}, {"TTL", c.TTL}, {"OPS", c.Ops}, {"GRANTS", c.Grants},
		{"INFLIGHT", c.InFlight}, {"DROPS", c.Drops}, {"DUPS", c.Dups}, {"CRASHES", c.Crashes},
		{"RESTARTS", c.Restarts}, {"FORGERIES", c.Forgeries}, {"SINKRESTARTS", c.SinkRestarts}, {"SKEW", c.Skew}} {
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
	run(t, dir, "gcc", append(append([]string{"-O0", "-DSAFETY", "-DPRINTF"}, gccFlags...), "-o", "pan", "pan.c")...)
	return filepath.Join(dir, "pan")
}

// panRun is what a run of Spin's verifier of one Promela file, through its
// whole space or to the first assertion violated, counted, and the
// invariants it found violated: those of its "violated: id" lines.
type panRun struct {
	file                        string
	whole                       bool
	states, transitions, errors uint64
	violated                    spec.Set
	counts                      map[string]uint64 // the "violated: id" lines of each id
}

var (
	panStates      = regexp.MustCompile(`(?m)^\s*(\S+) states, stored`)
	panTransitions = regexp.MustCompile(`(?m)^\s*(\S+) transitions \(= stored\+matched\)`)
	panErrors      = regexp.MustCompile(`errors: (\d+)`)
	panViolated    = regexp.MustCompile(`(?m)^violated: (.*)$`)
)

// runPan runs pan, the verifier of the Promela file, with a 2^22-slot
// hash table, no depth limit that these bounds reach, and no report of end
// states (-E: the BFS has none; a state with no step is a state like any
// other), so that its errors are assertions violated; if whole, past every
// error (-c0: it then explores, and counts, the whole space), else to the
// first. It parses its counts and its "violated: id" lines, one before
// each assertion violated (the models' CHECK), and fails the test if one
// names no invariant of spec.Invariants or if there are not as many as
// errors (an assert without CHECK).
func runPan(t *testing.T, file, pan string, whole bool) panRun {
	t.Helper()
	args := []string{"-m200000", "-w22", "-E"}
	if whole {
		args = append(args, "-c0")
	}
	out := run(t, filepath.Dir(pan), pan, args...)
	r := panRun{file: file, whole: whole, counts: map[string]uint64{}}
	for _, f := range []struct {
		re *regexp.Regexp
		n  *uint64
	}{{panStates, &r.states}, {panTransitions, &r.transitions}, {panErrors, &r.errors}} {
		m := f.re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("pan of %s: no %q in its output:\n%s", file, f.re, out)
		}
		n, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil { // pan prints counts of 10^8 and more rounded (%g): 1.42619e+08
			t.Fatalf("pan of %s: %q is not an exact count (pan rounds those of 10^8 and more): this bound is too large to compare", file, m[0])
		}
		*f.n = n
	}
	lines := panViolated.FindAllStringSubmatch(out, -1)
	for _, m := range lines {
		id := spec.SetOf(m[1])
		if id == 0 {
			t.Fatalf("pan of %s printed %q: no invariant of spec.Invariants", file, m[0])
		}
		r.violated |= id
		r.counts[m[1]]++
	}
	if uint64(len(lines)) != r.errors {
		t.Fatalf("pan of %s: %d errors but %d \"violated:\" lines: an assert without CHECK?", file, r.errors, len(lines))
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
