package explore

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/lease/etcdcluster"
	"github.com/fencecheck/fencecheck/lease/redisserver"
	"github.com/fencecheck/fencecheck/realdb"
	"github.com/fencecheck/fencecheck/spec"
)

// Faults of explore real (--fault).
const (
	faultNone          = "none"
	faultLeaderKill    = "leader-kill"    // etcd: stop the leader mid-run, for good (the run goes on with two members)
	faultLeaderRestart = "leader-restart" // etcd: stop the leader mid-run and start it again 2 ttls later
	faultServerKill    = "server-kill"    // etcd or redis: stop every member (the server) mid-run, for good
)

// The largest counts explore real takes: a run starts every worker (a
// process each with --procs) and keeps a lease, a fence and the results of
// every resource, so a count far past these is a typo, not a test.
const (
	maxRealWorkers   = 1000
	maxRealProcs     = 64
	maxRealResources = 1000
	maxRealTasks     = 1000
)

func runReal(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("real", "[--lease builtin|etcd|redis] [--db sqlite|postgres] [--sink atomic|check-then-write|max-token|none] [flags]",
		"Run real workers (goroutines and SIGSTOPped processes) against a lease service (the built-in coordinator, etcd embedded in this binary as a 3-member loopback cluster, or a throwaway redis-server) and a fenced sink on a real database, record each run's history (written line by line as it happens) and check it. Exit 1 when a run violates an invariant beyond absolute-validity.", stdout)
	cfg := realdb.Config{}
	fs.StringVar(&cfg.Lease, "lease", realdb.Builtin, "builtin, etcd or redis")
	fs.StringVar(&cfg.DB, "db", realdb.SQLite, "sqlite or postgres")
	fs.StringVar(&cfg.DSN, "dsn", "", "PostgreSQL connection string (required with --db postgres); for sqlite, an existing folder for the database files (not with --schedule)")
	fs.StringVar(&cfg.Sink, "sink", realdb.Atomic, "atomic, check-then-write, max-token or none")
	fs.IntVar(&cfg.Workers, "workers", 4, "goroutine workers (at most 1000)")
	fs.IntVar(&cfg.Procs, "procs", 0, "process workers, paused with SIGSTOP/SIGCONT (at most 64)")
	fs.IntVar(&cfg.Resources, "resources", 2, "resources (leases and fences), 1 to 1000")
	fs.IntVar(&cfg.Runs, "runs", 10, "runs")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the driver's choices (run i uses seed+i)")
	fs.DurationVar(&cfg.TTL, "ttl", 0, "lease length (default: builtin 20ms, etcd 1s, redis 100ms; etcd: whole seconds, redis: whole milliseconds)")
	fs.DurationVar(&cfg.CheckTimeout, "check-timeout", 30*time.Second, "the longest each resource's linearizability check of a run may take: a run not fully checked makes the campaign incomplete, and its history is kept")
	fs.DurationVar(&cfg.RunTimeout, "run-timeout", 2*time.Minute, "the longest a run may take: a run still going then ends early (runs take a few ttls per task: a long --ttl needs more)")
	pause := fs.Float64("pause", 0.2, "chance of a pause at each pause point, from 0 (no pauses) to 1")
	fs.BoolVar(&cfg.StopAtFirst, "stop", false, "stop at the first run that violates an invariant")
	fault := fs.String("fault", faultNone, "a fault mid-run: none, leader-kill or leader-restart (etcd), server-kill (etcd, redis)")
	endpoints := fs.String("endpoints", "", "use this lease service instead of starting one: etcd client URLs (comma-separated) or the one redis HOST:PORT; checked before the runs start")
	fs.BoolVar(&cfg.KeepAll, "keep", false, "keep every run's history under --out, not only the violating ones")
	fs.IntVar(&cfg.Tasks, "tasks", 3, "tasks (results) per resource, 1 to 1000")
	schedule := fs.String("schedule", "", "replay this model counterexample (histories/counterexamples/*.jsonl) event for event on the built-in coordinator and the --db sink, deterministically")
	tick := fs.Duration("tick", 10*time.Millisecond, "with --schedule only: the real length of one model tick")
	out := fs.String("out", "explore-out", "folder for the histories (each run's is written as it happens into OUT/real-LEASE-DB-SINK, or -2, -3, ... when that holds an earlier campaign's, and kept if it violates, ends early or is not fully checked; with --schedule, OUT/replay-DB)")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if err := realFlagsUsed(fs, *schedule != "", cfg.DB); err != nil {
		return 0, err
	}
	switch {
	case !slices.Contains(realdb.LeaseKinds, cfg.Lease):
		return 0, usagef("--lease %q: want builtin, etcd or redis", cfg.Lease)
	case cfg.DB != realdb.SQLite && cfg.DB != realdb.Postgres:
		return 0, usagef("--db %q: want sqlite or postgres", cfg.DB)
	case !slices.Contains(realdb.SinkKinds, cfg.Sink):
		return 0, usagef("--sink %q: want atomic, check-then-write, max-token or none", cfg.Sink)
	case cfg.DB == realdb.Postgres && cfg.DSN == "":
		return 0, usagef("--db postgres needs --dsn")
	case cfg.Runs < 1 || cfg.Workers < 0 || cfg.Procs < 0 || cfg.Workers+cfg.Procs < 2:
		return 0, usagef("need --runs >= 1 and at least two workers in all")
	case cfg.Workers > maxRealWorkers || cfg.Procs > maxRealProcs:
		return 0, usagef("--workers %d --procs %d: want at most %d goroutine and %d process workers", cfg.Workers, cfg.Procs, maxRealWorkers, maxRealProcs)
	case cfg.Resources < 1 || cfg.Resources > maxRealResources:
		return 0, usagef("--resources %d: want 1 to %d", cfg.Resources, maxRealResources)
	case cfg.Tasks < 1 || cfg.Tasks > maxRealTasks:
		return 0, usagef("--tasks %d: want 1 to %d", cfg.Tasks, maxRealTasks)
	case !slices.Contains([]string{faultNone, faultLeaderKill, faultLeaderRestart, faultServerKill}, *fault):
		return 0, usagef("--fault %q: want none, leader-kill, leader-restart or server-kill", *fault)
	case *fault != faultNone && cfg.Lease == realdb.Builtin:
		return 0, usagef("--fault %s needs --lease etcd or redis", *fault)
	case (*fault == faultLeaderKill || *fault == faultLeaderRestart) && cfg.Lease != realdb.Etcd:
		return 0, usagef("--fault %s needs --lease etcd", *fault)
	case *fault != faultNone && *endpoints != "":
		return 0, usagef("--fault needs the lease service this command starts (no --endpoints)")
	case *tick == 0:
		return 0, usagef("--tick 0s: want the positive length of a model tick")
	case cfg.TTL != 0 && cfg.TTL < time.Millisecond:
		return 0, usagef("--ttl %v: want at least 1ms (0: the lease service's default)", cfg.TTL)
	case cfg.Lease == realdb.Etcd && cfg.TTL%time.Second != 0:
		// etcd would grant it rounded up, and the pauses, sized from the ttl
		// asked for, would never outlast the lease granted.
		return 0, usagef("--ttl %v: etcd's leases are whole seconds, at least 1s", cfg.TTL)
	case cfg.Lease == realdb.Redis && cfg.TTL%time.Millisecond != 0:
		// go-redis would send it truncated (PX 1 for 1.999ms), and the
		// history would record a longer lease than Redis keeps.
		return 0, usagef("--ttl %v: Redis's lock ttls are whole milliseconds (PX): Redis would keep the lock for %v while the history records %v",
			cfg.TTL, cfg.TTL.Truncate(time.Millisecond), cfg.TTL)
	case cfg.CheckTimeout <= 0:
		return 0, usagef("--check-timeout %v: want a positive duration", cfg.CheckTimeout)
	case cfg.RunTimeout <= 0:
		return 0, usagef("--run-timeout %v: want a positive duration (the longest a run may take)", cfg.RunTimeout)
	case *endpoints != "" && cfg.Lease == realdb.Builtin:
		return 0, usagef("--endpoints %s: the built-in lease runs in this process; --endpoints is for --lease etcd or redis", *endpoints)
	}
	// A chance is a number from 0 to 1: NaN, an infinity or a negative one
	// is a mistake, not "never" (Float64 parses "NaN" and "-Inf").
	if math.IsNaN(*pause) || *pause < 0 || *pause > 1 {
		return 0, usagef("--pause %v: want a chance from 0 (no pauses) to 1", *pause)
	}
	cfg.PauseProb = *pause
	if *pause == 0 {
		cfg.PauseProb = -1 // realdb: negative is none, zero its default
	}
	if cfg.DB == realdb.SQLite && cfg.DSN != "" {
		// For SQLite --dsn is the folder the run's database files go in.
		st, err := os.Stat(cfg.DSN)
		switch {
		case err != nil:
			return 0, usagef("--dsn %s: %v (with --db sqlite, --dsn is an existing folder for the database files)", cfg.DSN, bare(err))
		case !st.IsDir():
			return 0, usagef("--dsn %s: not a folder (with --db sqlite, --dsn is an existing folder for the database files)", cfg.DSN)
		}
	}
	if cfg.DB == realdb.Postgres { // before a folder is made or a service started
		if err := realdb.CheckPostgres(ctx, cfg.DSN); err != nil && ctx.Err() == nil {
			return 0, usagef("--dsn: %s", strings.TrimPrefix(err.Error(), "realdb: "))
		}
	}
	if *schedule != "" {
		return runSchedule(ctx, *schedule, cfg, *tick, *out, *jsonOut, stdout)
	}
	if *endpoints != "" {
		if err := checkEndpoints(ctx, cfg, *endpoints, fs); err != nil {
			return 0, err
		}
	}
	dir, err := campaignDir(filepath.Join(*out, "real-"+cfg.Lease+"-"+cfg.DB+"-"+cfg.Sink))
	if err != nil {
		return 0, err
	}
	cfg.Out = dir

	var res realdb.Result
	svc, runErr := startService(ctx, cfg.Lease, *endpoints)
	switch {
	case runErr != nil && ctx.Err() == nil: // the service could not start: nothing was run
		os.Remove(dir)
		return 0, runErr
	case runErr == nil:
		defer svc.close()
		cfg.LeaseEndpoints = svc.endpoints
		if *fault != faultNone {
			cfg.Faults = svc.faults(*fault, cfg)
		}
		res, runErr = realdb.Run(ctx, cfg)
	} // else interrupted while the service started: incomplete, no run done
	done := 0 // the runs that ran to their end
	for _, r := range res.Runs {
		if r.Err == nil {
			done++
		}
	}
	code := exitOK
	var files []string
	var saveErr error     // the first history not saved
	var unknownRuns []int // numbered from 1
	for _, r := range res.Runs {
		if len(r.Report.Unknown) > 0 {
			unknownRuns = append(unknownRuns, r.Run+1)
		}
		if !r.Caught() && r.Err == nil && len(r.Report.Unknown) == 0 {
			continue
		}
		if r.Caught() {
			code = exitViolation
		}
		path, err := save(dir, strings.TrimSuffix(filepath.Base(cfg.RunFile(r.Run)), ".jsonl"), r.History, cat) // the file the run was written to as it happened
		if err != nil {                                                                                         // the verdicts are still reported, the error after them
			saveErr = cmp.Or(saveErr, err)
			continue
		}
		files = append(files, path)
	}
	byInvariant := map[string]int{}
	for _, r := range res.Runs {
		seen := map[string]bool{}
		for _, v := range r.Unexpected {
			if !seen[v.Invariant] {
				seen[v.Invariant] = true
				byInvariant[v.Invariant]++
			}
		}
	}
	// A campaign that ended early (an interrupt, a lease service or
	// database gone) is incomplete, not an error, once a run has started:
	// what was recorded was checked. One that could not start at all
	// (a bad --dsn) is an error.
	if runErr != nil && len(res.Runs) == 0 && ctx.Err() == nil && !errors.Is(runErr, realdb.ErrRunTimeout) {
		os.Remove(dir) // empty: nothing was run
		return 0, runErr
	}
	// A run whose check ran out of time has no verdict on what it did not
	// check: the campaign is incomplete too (a violation found stands).
	if (runErr != nil || res.Unknown > 0) && code == exitOK {
		code = exitIncomplete
	}
	if *jsonOut {
		j := map[string]any{"lease": cfg.Lease, "db": cfg.DB, "sink": cfg.Sink, "fault": *fault, "runs": done,
			"budget": cfg.Runs, "complete": runErr == nil && res.Unknown == 0,
			"caught": res.Caught, "firstCaught": res.FirstCaught, "unknown": res.Unknown, "unknownRuns": nonNil(unknownRuns),
			"caughtBy": byInvariant, "elapsed": res.Elapsed.String(), "folder": dir, "files": nonNil(files)}
		if runErr != nil {
			j["error"], j["stopped"] = runErr.Error(), realStopCause(ctx, runErr, cfg.RunTimeout)
		}
		if saveErr != nil {
			j["saveError"] = saveErr.Error()
		}
		if err := writeJSON(stdout, j); err != nil {
			return 0, err
		}
		return code, reported(code, saveErr)
	}
	fmt.Fprintf(stdout, "%s lease, %s sink on %s", cfg.Lease, cfg.Sink, cfg.DB)
	if *fault != faultNone {
		fmt.Fprintf(stdout, ", fault %s", *fault)
	}
	fmt.Fprintf(stdout, ": %d runs in %s, %d with a violation", len(res.Runs), res.Elapsed.Round(time.Millisecond), res.Caught)
	if res.FirstCaught > 0 {
		fmt.Fprintf(stdout, " (first at run %d)", res.FirstCaught)
	}
	fmt.Fprintln(stdout)
	if len(byInvariant) > 0 {
		var parts []string
		for inv, n := range byInvariant {
			parts = append(parts, fmt.Sprintf("%s %d", inv, n))
		}
		sort.Strings(parts)
		fmt.Fprintf(stdout, "  runs caught by: %s\n", strings.Join(parts, ", "))
	}
	for _, r := range res.Runs {
		for _, v := range r.Unexpected {
			fmt.Fprintf(stdout, "  run %d: %s on %s: %s\n", r.Run+1, v.Invariant, v.Resource, v.Message)
		}
	}
	fmt.Fprintf(stdout, "  folder: %s\n", dir)
	for _, f := range files {
		fmt.Fprintf(stdout, "  history: %s\n", f)
	}
	if res.Unknown > 0 {
		runs := make([]string, len(unknownRuns))
		for i, r := range unknownRuns {
			runs[i] = strconv.Itoa(r)
		}
		fmt.Fprintf(stdout, "%d of %d runs not fully checked: the linearizability check ran out of time (%s); their histories are kept (explore check --timeout DURATION FILE checks one with more time)\n",
			res.Unknown, len(res.Runs), named("run", runs...))
	}
	if runErr != nil {
		// The run that failed was checked as far as it was recorded (its
		// history is kept); say so, and how far the campaign got.
		if n := len(res.Runs); n > 0 && res.Runs[n-1].Err != nil {
			fmt.Fprintf(stdout, "run %d ended early; its %d recorded events were checked (%s)\n", n,
				len(res.Runs[n-1].History.Events), verdict(res.Runs[n-1]))
		}
		fmt.Fprintf(stdout, "error: %v\n", runErr)
		if code == exitIncomplete {
			fmt.Fprintf(stdout, "incomplete: %d of %d runs done (%s)%s; no violation found so far\n", done, cfg.Runs,
				realStopCause(ctx, runErr, cfg.RunTimeout), notChecked(res.Unknown))
		}
	} else if code == exitIncomplete {
		fmt.Fprintf(stdout, "incomplete: %d of %d runs done%s; no violation found in what was checked\n", len(res.Runs), cfg.Runs, notChecked(res.Unknown))
	}
	return code, reported(code, saveErr)
}

// notChecked says how many runs' checks ran out of time, if any.
func notChecked(unknown int) string {
	if unknown == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them not fully checked", unknown)
}

// checkEndpoints checks the lease service of --endpoints before anything
// is written or run (realdb.CheckLeaseService): an address where nothing
// answers, or not the service --lease names, or (etcd) a cluster that
// grants longer leases than --ttl is a usage error naming the flag and the
// address. (A campaign on it ended, 20 s later, "incomplete: 0 of N runs
// done", as if it had only been cut short.) Interrupted, it says nothing:
// the campaign then ends as interrupted.
func checkEndpoints(ctx context.Context, cfg realdb.Config, endpoints string, fs *flag.FlagSet) error {
	ttl := cmp.Or(cfg.TTL, realdb.DefaultTTL(cfg.Lease))
	err := realdb.CheckLeaseService(ctx, cfg.Lease, strings.Split(endpoints, ","), ttl)
	if err == nil || ctx.Err() != nil {
		return nil
	}
	var ep *realdb.EndpointError
	var te *realdb.TTLError
	switch {
	case errors.As(err, &ep):
		return usagef("--endpoints %s: %v", ep.Endpoint, ep.Err)
	case errors.As(err, &te):
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "ttl" })
		def := ""
		if !given {
			def = fmt.Sprintf(" (the default with --lease %s)", cfg.Lease)
		}
		return usagef("--ttl %v%s: %v", ttl, def, te)
	}
	return usagef("--endpoints %s: %v", endpoints, err)
}

// campaignDir makes the folder of one explore real campaign: base
// (OUT/real-LEASE-DB-SINK) when it is new or empty, else the first of
// base-2, base-3, ... that is. A campaign never writes into an earlier
// one's folder, whose kept histories (run-N.jsonl, run-N.html) it would
// overwrite or remove.
func campaignDir(base string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		dir := base
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // a file of that name: not ours to use
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		if len(entries) == 0 {
			return dir, nil
		}
	}
}

// scheduleIgnores says, for each flag of explore real that a --schedule
// replay does not use, why not: given with --schedule, it would be ignored,
// and the user would believe it tested (--sink atomic, say).
var scheduleIgnores = map[string]string{
	"sink":          "the replay's sink is the one of the schedule's design (its header's variant)",
	"workers":       "the schedule's processes are the workers",
	"procs":         "the schedule's processes are the workers",
	"resources":     "the schedule's events name the resources",
	"tasks":         "the schedule's events name the results",
	"runs":          "the replay plays the schedule once",
	"seed":          "the replay makes no random choice",
	"ttl":           "the schedule's acquires and renews give the ttls (--tick scales them)",
	"pause":         "the schedule's own pause events are its pauses",
	"stop":          "the replay plays the schedule once",
	"fault":         "the schedule's own fault lines are its faults",
	"endpoints":     "the replay runs on the built-in coordinator",
	"keep":          "the replay always keeps its history",
	"run-timeout":   "the replay plays the schedule's events at their ticks, to its end",
	"check-timeout": "the replay checks its one history with a limit of its own (30s)",
}

// realFlagsUsed is a usage error naming the first flag given explicitly
// (in name order) that this run would not use: with --schedule, those of
// scheduleIgnores (and --dsn with --db sqlite: the replay's database is a
// temporary file); without it, --tick.
func realFlagsUsed(fs *flag.FlagSet, schedule bool, db string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		why, ignored := scheduleIgnores[f.Name]
		if f.Name == "dsn" && db != realdb.Postgres {
			why, ignored = "the replay on SQLite makes its database in a temporary folder (--dsn is for --db postgres)", true
		}
		switch {
		case schedule && ignored:
			err = usagef("--%s %s: not used with --schedule: %s", f.Name, f.Value, why)
		case !schedule && f.Name == "tick":
			err = usagef("--tick %s: used only with --schedule (the real length of one model tick)", f.Value)
		}
	})
	return err
}

// realStopCause says why a real campaign ended early: an interrupt, a run
// that reached --run-timeout, or its machinery (runErr).
func realStopCause(ctx context.Context, runErr error, runTimeout time.Duration) string {
	switch {
	case ctx.Err() != nil:
		return stopCause(ctx)
	case errors.Is(runErr, realdb.ErrRunTimeout):
		return fmt.Sprintf("a run reached its time limit, --run-timeout %v: a long --ttl needs a longer one", runTimeout)
	}
	return "a run's machinery failed"
}

func verdict(r realdb.RunResult) string {
	if r.Caught() {
		return "violation"
	}
	return "nothing unexpected"
}

// service is the lease service of an explore real invocation.
type service struct {
	kind      string
	endpoints []string
	cluster   *etcdcluster.Cluster
	etcdDir   string
	redis     *redisserver.Server
}

func startService(ctx context.Context, kind, endpoints string) (*service, error) {
	s := &service{kind: kind}
	if endpoints != "" {
		s.endpoints = strings.Split(endpoints, ",")
		return s, nil
	}
	switch kind {
	case realdb.Etcd:
		dir, err := os.MkdirTemp("", "fencecheck-etcd-")
		if err != nil {
			return nil, err
		}
		s.etcdDir = dir
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if s.cluster, err = etcdcluster.Start(sctx, dir, 3); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.endpoints = s.cluster.Endpoints()
	case realdb.Redis:
		var err error
		if s.redis, err = redisserver.Start(ctx); err != nil {
			return nil, err
		}
		s.endpoints = []string{s.redis.Addr}
	}
	return s, nil
}

func (s *service) close() {
	if s.cluster != nil {
		s.cluster.Close()
		os.RemoveAll(s.etcdDir)
	}
	if s.redis != nil {
		s.redis.Stop()
	}
}

// faults returns the nemesis of a run: after 1 to 3 ttls (the workers are
// under way), it stops the etcd leader (leader-kill, leader-restart) or the
// whole service (server-kill) and records it as a crash of the nemesis's
// target; leader-restart starts the member again 2 ttls later and records a
// restart. A member killed for good stays down for the remaining runs.
func (s *service) faults(kind string, cfg realdb.Config) func(ctx context.Context, run int, rec *history.Recorder) error {
	ttl := cmp.Or(cfg.TTL, realdb.DefaultTTL(s.kind))
	done := false
	return func(ctx context.Context, run int, rec *history.Recorder) error {
		if done {
			return nil
		}
		rng := rand.New(rand.NewPCG(cfg.Seed+uint64(run), 9))
		if err := realdb.Sleep(ctx, ttl+time.Duration(rng.Int64N(int64(2*ttl)))); err != nil {
			return nil // the workers finished first
		}
		switch kind {
		case faultLeaderKill, faultLeaderRestart:
			i := s.cluster.Leader()
			if i < 0 {
				return errors.New("no etcd leader to kill")
			}
			rec.Fault(history.Nemesis, history.Crash, history.Value{Target: s.cluster.Name(i)})
			s.cluster.Stop(i)
			if kind == faultLeaderKill {
				done = true
				return nil
			}
			_ = realdb.Sleep(ctx, 2*ttl) // cancelled or not, the member comes back
			if err := s.cluster.Restart(context.WithoutCancel(ctx), i); err != nil {
				return err
			}
			rec.Fault(history.Nemesis, history.Restart, history.Value{Target: s.cluster.Name(i)})
		case faultServerKill:
			done = true
			if s.cluster != nil {
				rec.Fault(history.Nemesis, history.Crash, history.Value{Target: "etcd"})
				s.cluster.Close()
			}
			if s.redis != nil {
				rec.Fault(history.Nemesis, history.Crash, history.Value{Target: "redis"})
				s.redis.Stop()
				s.redis = nil
			}
		}
		return nil
	}
}

// runSchedule replays a model counterexample on the real stack.
func runSchedule(ctx context.Context, path string, cfg realdb.Config, tick time.Duration, out string, jsonOut bool, stdout io.Writer) (int, error) {
	if cfg.Lease != realdb.Builtin {
		return 0, usagef("--schedule replays on the built-in coordinator (no --lease %s)", cfg.Lease)
	}
	h, err := readHistory(path)
	if err != nil {
		return 0, err
	}
	res, err := realdb.Replay(ctx, h, realdb.ReplayConfig{DB: cfg.DB, DSN: cfg.DSN, Tick: tick})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	file, err := save(filepath.Join(out, "replay-"+cfg.DB), base, res.History, nil)
	if err != nil {
		return 0, err
	}
	var ids []string
	for _, v := range res.Report.Violations {
		if !slices.Contains(ids, v.Invariant) {
			ids = append(ids, v.Invariant)
		}
	}
	code := exitOK
	for _, id := range ids {
		if !slices.Contains(realdb.Expected, id) {
			code = exitViolation
		}
	}
	if jsonOut {
		return code, writeJSON(stdout, map[string]any{"schedule": path, "db": cfg.DB, "reproduced": res.Reproduced(),
			"mismatches": nonNil(res.Mismatches), "notes": nonNil(res.Notes), "violated": nonNil(ids), "modelExpect": h.Header.Expect, "file": file})
	}
	fmt.Fprintf(stdout, "%s replayed on the built-in coordinator and %s: reproduced %v\n", path, cfg.DB, res.Reproduced())
	for _, m := range res.Mismatches {
		fmt.Fprintf(stdout, "  mismatch: %s\n", m)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stdout, "  beyond the schedule: %s\n", n)
	}
	fmt.Fprintf(stdout, "  the real history violates %v (the model's expect: %v)\n  history: %s\n", ids, h.Header.Expect, file)
	return code, nil
}
