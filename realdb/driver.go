package realdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fencecheck/fencecheck/history"
	leases "github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/spec"
)

// Config says what Run does. Zero fields take the defaults given.
type Config struct {
	// DB is SQLite (default) or Postgres.
	DB string
	// DSN is the PostgreSQL connection string (required for Postgres). For
	// SQLite it is the directory for the database files (default: a new
	// temporary directory, removed at the end).
	DSN string
	// Sink is Atomic (default), CheckThenWrite, MaxToken or None.
	Sink string
	// Lease is the lease service: Builtin (default: the driver's own
	// coordinator, which advances the fence before it grants), Etcd or Redis
	// (the adapters of packages lease/etcdlease and lease/redislock; the
	// holder raises the fence itself, package lease). LeaseEndpoints are the
	// service's client URLs (etcd) or its one address, HOST:PORT (Redis);
	// Run checks them before the first run (CheckLeaseService).
	Lease          string
	LeaseEndpoints []string
	// Faults, if set, runs beside each run's workers until they finish (its
	// context is then cancelled): a nemesis that kills a leader, restarts a
	// database, ... and records each fault in rec. Its error ends the run.
	Faults func(ctx context.Context, run int, rec *history.Recorder) error
	// Workers is the number of goroutine workers and Procs the number of
	// process workers (the executable run again; it must call
	// MaybeRunWorker first thing). Default: 4 goroutine workers.
	Workers, Procs int
	// Resources is the number of resources (leases, fences), default 2;
	// Tasks the number of results to compute per resource, default 3.
	Resources, Tasks int
	// Attempts bounds each worker's acquire attempts per run (default 24);
	// a worker stops sooner when it has seen every task done.
	Attempts int
	// TTL is the length of a lease (default 20ms; etcd 1s, its minimum with
	// fast elections; Redis 100ms: DefaultTTL). Pauses last 2 to 3 TTLs.
	// With Etcd it is a whole number of seconds (etcd grants no other), and
	// one the cluster grants as asked (not below its minimum lease); with
	// Redis a whole number of milliseconds (PX counts no other).
	TTL time.Duration
	// PauseProb is the chance that a worker is paused at each of its pause
	// points: before renewing, before writing, and inside the sink's write
	// (default 0.2; negative for none). Process workers are also stopped at
	// random instants.
	PauseProb float64
	// RenewProb is the chance that a worker renews before writing (default
	// 0.5); DropProb the chance that an acquire's reply is played as lost
	// and the request retried with the same id (default 0.05). Negative
	// means never.
	RenewProb, DropProb float64
	// Runs is the number of runs (default 1); run i (from 0) uses seed
	// Seed+i for the driver's own choices.
	Runs int
	Seed uint64
	// StopAtFirst stops after the first run whose history violates an
	// invariant it is not expected to.
	StopAtFirst bool
	// CheckTimeout bounds the linearizability check per resource (default
	// 30s); a check that runs out is reported in Report.Unknown.
	CheckTimeout time.Duration
	// RunTimeout bounds one run (default 2 minutes): a run still going at
	// its end ends early, its RunResult.Err wrapping ErrRunTimeout. Runs
	// take a few ttls per task; a long TTL needs a longer RunTimeout.
	RunTimeout time.Duration
	// Out, if set, is a folder where each run's history is written line by
	// line as it is recorded (run-N.jsonl), so that a crash leaves a valid
	// prefix; a run's file is removed when the run ended cleanly, was fully
	// checked (nothing in Report.Unknown) and has no unexpected violation,
	// unless KeepAll.
	Out     string
	KeepAll bool
	// KillAfter, if positive, kills the first process worker with SIGKILL
	// that long into each run: the run ends early, with the worker's crash
	// recorded and its open operation left open.
	KillAfter time.Duration
}

// ErrRunTimeout is the cause of a run that reached Config.RunTimeout: the
// run ends early (RunResult.Err wraps ErrRunTimeout and says the limit),
// and what it recorded until then is checked.
var ErrRunTimeout = errors.New("the run reached its time limit")

// Expected lists the invariants a history of the reference protocol may
// violate: plain fencing does not promise absolute validity (a write after
// the lease's deadline but before any takeover is accepted). Every other
// violation is a bug in the sink or the coordinator.
var Expected = []string{spec.AbsoluteValidity}

// RunResult is one run: its history, the checker's report on it, and the
// violations beyond Expected.
type RunResult struct {
	// Run is the run's number, from 0; Seed its seed.
	Run  int
	Seed uint64
	// History is what was recorded (time unit ns).
	History    *history.History
	Report     spec.Report
	Unexpected []spec.Violation
	Stats      Stats
	Elapsed    time.Duration
	// Err is the failure of the machinery that ended the run early (a lease
	// server gone, a database down, a worker killed): the history is the
	// prefix recorded until then, and Report its check.
	Err error
}

// Caught reports whether the run's history violates an invariant beyond
// Expected.
func (r RunResult) Caught() bool { return len(r.Unexpected) > 0 }

// Stats counts what happened in a run: events recorded, leases granted
// (Takeovers: granted while the previous holder had not released), pauses
// and reads.
type Stats struct {
	Events, Grants, Takeovers, Pauses, Reads int
	// Writes by outcome: written, replayed, fenced, conflict (and info for
	// writes whose outcome is unknown).
	Writes map[string]int
}

// Result is what Run did.
type Result struct {
	Config Config
	Runs   []RunResult
	// Caught counts the runs with an unexpected violation; FirstCaught is
	// the number (from 1) of the first, 0 if none.
	Caught, FirstCaught int
	// Unknown counts the runs whose check ran out of budget (some
	// invariant in their Report.Unknown), a run that ended early included.
	Unknown int
	Elapsed time.Duration
}

// DefaultTTL is the lease length Run uses when Config.TTL is zero: 1s on
// etcd (its minimum with fast elections), 100ms on Redis, 20ms on the
// built-in coordinator.
func DefaultTTL(lease string) time.Duration {
	switch lease {
	case Etcd:
		return time.Second
	case Redis:
		return 100 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// withDefaults fills in the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.DB == "" {
		c.DB = SQLite
	}
	if c.Sink == "" {
		c.Sink = Atomic
	}
	if c.Lease == "" {
		c.Lease = Builtin
	}
	if c.Workers == 0 && c.Procs == 0 {
		c.Workers = 4
	}
	def(&c.Resources, 2)
	def(&c.Tasks, 3)
	def(&c.Attempts, 24)
	def(&c.Runs, 1)
	if c.TTL == 0 {
		c.TTL = DefaultTTL(c.Lease)
	}
	prob := func(p *float64, d float64) {
		switch {
		case *p == 0:
			*p = d
		case *p < 0:
			*p = 0
		}
	}
	prob(&c.PauseProb, 0.2)
	prob(&c.RenewProb, 0.5)
	prob(&c.DropProb, 0.05)
	if c.CheckTimeout == 0 {
		c.CheckTimeout = 30 * time.Second
	}
	if c.RunTimeout == 0 {
		c.RunTimeout = 2 * time.Minute
	}
	switch {
	case c.DB == Postgres && c.DSN == "":
		return c, errors.New("realdb: postgres needs a DSN")
	case c.Workers < 0 || c.Procs < 0 || c.Resources < 0 || c.Tasks < 0 || c.Attempts < 0 || c.Runs < 0:
		return c, errors.New("realdb: counts must not be negative")
	case c.TTL < time.Millisecond:
		return c, fmt.Errorf("realdb: ttl %v is below 1ms", c.TTL)
	case c.Lease == Etcd && c.TTL%time.Second != 0:
		// etcd would grant the ttl rounded up, and pauses, sized from the
		// ttl asked for, would never outlast the lease.
		return c, fmt.Errorf("realdb: ttl %v: etcd's leases are whole seconds, at least 1s", c.TTL)
	case c.Lease == Redis && c.TTL%time.Millisecond != 0:
		// go-redis would send it truncated (PX counts milliseconds), and
		// the history would record a longer lease than Redis keeps.
		return c, fmt.Errorf("realdb: ttl %v: Redis's lock ttls are whole milliseconds", c.TTL)
	case c.RunTimeout < 0:
		return c, fmt.Errorf("realdb: run timeout %v is negative", c.RunTimeout)
	case !slices.Contains(LeaseKinds, c.Lease):
		return c, fmt.Errorf("realdb: unknown lease service %q (want one of %v)", c.Lease, LeaseKinds)
	case c.Lease != Builtin && len(c.LeaseEndpoints) == 0:
		return c, fmt.Errorf("realdb: lease service %s needs its endpoints", c.Lease)
	}
	return c, SinkConfig{DB: c.DB, Kind: c.Sink, DSN: "-"}.validate()
}

// Run runs the protocol cfg.Runs times against a real database and checks
// each run's history. An error is a failure of the machinery (database,
// processes, recording), never a verdict: verdicts are in the result. An
// external lease service is checked first (CheckLeaseService): one that
// cannot be used is an error before any run.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg, err = cfg.withDefaults()
	res = Result{Config: cfg}
	if err != nil {
		return res, err
	}
	if err := CheckLeaseService(ctx, cfg.Lease, cfg.LeaseEndpoints, cfg.TTL); err != nil {
		return res, fmt.Errorf("realdb: %w", err)
	}
	start := time.Now()
	defer func() { res.Elapsed = time.Since(start) }()
	dir, err := os.MkdirTemp("", "fencecheck-real-")
	if err != nil {
		return res, fmt.Errorf("realdb: %w", err)
	}
	defer os.RemoveAll(dir)
	for i := range cfg.Runs {
		r, err := runOnce(ctx, cfg, i, dir)
		if err != nil && r.History == nil {
			return res, fmt.Errorf("realdb: run %d (seed %d): %w", i+1, cfg.Seed+uint64(i), err)
		}
		res.Runs = append(res.Runs, r)
		if len(r.Report.Unknown) > 0 {
			res.Unknown++
		}
		if r.Caught() {
			res.Caught++
			if res.FirstCaught == 0 {
				res.FirstCaught = i + 1
			}
		}
		if err != nil {
			// The machinery failed mid-run: the run's prefix is checked
			// (res.Runs holds it), and the campaign stops here.
			return res, fmt.Errorf("realdb: run %d (seed %d) ended early, after %d events (checked as recorded): %w", // runs count from 1, as FirstCaught does
				i+1, cfg.Seed+uint64(i), len(r.History.Events), err)
		}
		if r.Caught() && cfg.StopAtFirst {
			break
		}
	}
	return res, nil
}

// runOnce makes one run: a fresh sink, a coordinator, the workers; then the
// check.
func runOnce(ctx context.Context, cfg Config, run int, dir string) (out RunResult, err error) {
	seed := cfg.Seed + uint64(run)
	out = RunResult{Run: run, Seed: seed}
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, cfg.RunTimeout,
		fmt.Errorf("%w of %v", ErrRunTimeout, cfg.RunTimeout))
	defer cancel()
	defer func() { // a setup step cut by the time limit or an interrupt says so (ErrRunTimeout)
		if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w: %w", cause, err)
		}
	}()

	sc := SinkConfig{DB: cfg.DB, Kind: cfg.Sink}
	switch cfg.DB {
	case SQLite:
		base := dir
		if cfg.DSN != "" {
			base = cfg.DSN
		}
		sc.DSN = filepath.Join(base, fmt.Sprintf("fencecheck-run-%d-%d.db", os.Getpid(), run))
	case Postgres:
		sc.DSN, sc.Schema = cfg.DSN, fmt.Sprintf("fencecheck_real_%d_%d", os.Getpid(), run)
	}
	coordSink, err := Create(ctx, sc)
	if err != nil {
		return out, err
	}
	defer func() {
		coordSink.Close()
		if derr := Drop(context.WithoutCancel(ctx), sc); derr != nil && err == nil {
			err = derr
		}
	}()

	clock := history.MonotonicClock(time.Nanosecond)
	var file *os.File
	if cfg.Out != "" {
		if file, err = os.Create(runFile(cfg.Out, run)); err != nil {
			return out, fmt.Errorf("realdb: %w", err)
		}
		defer file.Close()
	}
	var w io.Writer
	if file != nil {
		w = file
	}
	rec := history.NewRecorder(history.Header{
		Seed: seed, TimeUnit: "ns", Expect: Expected,
		Note: fmt.Sprintf("explore real: %s lease, %s sink on %s; %d goroutine and %d process workers, %d resources, %d tasks each, ttl %v; run %d of seed %d",
			cfg.Lease, cfg.Sink, cfg.DB, cfg.Workers, cfg.Procs, cfg.Resources, cfg.Tasks, cfg.TTL, run+1, cfg.Seed), // runs counted from 1, as run-N.jsonl and the messages count them
	}, clock, w)
	coord := NewCoordinator(coordSink, clock, rec)
	log := leases.RecorderLog(rec)
	var clients *leaseClients
	tokens := &counter{}
	if cfg.Lease != Builtin {
		if clients, err = openLeaseClients(cfg.Lease, cfg.LeaseEndpoints); err != nil {
			return out, err
		}
		defer clients.Close()
	}
	prefix := fmt.Sprintf("/fencecheck/%d-%d-%d/", os.Getpid(), seed, run)
	if cfg.Lease == Redis {
		prefix = fmt.Sprintf("fencecheck:%d-%d-%d:", os.Getpid(), seed, run)
	}

	specs := make([]workerSpec, 0, cfg.Workers+cfg.Procs)
	for i := range cfg.Workers + cfg.Procs {
		id := fmt.Sprintf("w%d", i+1)
		if i >= cfg.Workers {
			id = fmt.Sprintf("p%d", i-cfg.Workers+1)
		}
		specs = append(specs, workerSpec{ID: id, Incarnation: fmt.Sprint(seed), Seed: seed<<8 | uint64(i),
			Resources: cfg.Resources, Tasks: cfg.Tasks, Attempts: cfg.Attempts, TTL: cfg.TTL,
			RenewProb: cfg.RenewProb, DropProb: cfg.DropProb, Sink: sc,
			Lease: cfg.Lease, Endpoints: cfg.LeaseEndpoints, Prefix: prefix})
	}

	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	fail := func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
		stop(err)
	}
	for _, s := range specs[:cfg.Workers] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lessorFor := func(sink Sink) lessor {
				if cfg.Lease == Builtin {
					return coord
				}
				return newExtLessor(s, clients, sink, log, tokens.next)
			}
			if err := runGoroutineWorker(ctx, s, lessorFor, log, rec, cfg.PauseProb); err != nil {
				fail(err)
			}
		}()
	}
	faultsDone := make(chan error, 1)
	faultCtx, stopFaults := context.WithCancel(ctx)
	if cfg.Faults != nil {
		go func() { faultsDone <- cfg.Faults(faultCtx, run, rec) }()
	} else {
		faultsDone <- nil
	}
	if cfg.Procs > 0 {
		if err := runProcessWorkers(ctx, cfg, specs[cfg.Workers:], coord, log, rec, dir, run, tokens, fail); err != nil {
			fail(err)
		}
	}
	wg.Wait()
	stopFaults()
	if err := <-faultsDone; err != nil && !errors.Is(err, context.Canceled) {
		errs = append(errs, fmt.Errorf("faults: %w", err))
	}
	errMu.Lock()
	runErr := errors.Join(append(causes(errs), rec.Err())...)
	errMu.Unlock()
	if cause := context.Cause(ctx); errors.Is(cause, ErrRunTimeout) {
		// The run's time ran out before anything else failed: the workers'
		// "deadline exceeded" (or, for process workers, nothing at all)
		// are its effects, the limit its cause.
		runErr = errors.Join(cause, rec.Err())
	}
	out.History = rec.History()
	out.Report = spec.Check(out.History, spec.Options{Timeout: cfg.CheckTimeout})
	for _, v := range out.Report.Violations {
		if !slices.Contains(Expected, v.Invariant) {
			out.Unexpected = append(out.Unexpected, v)
		}
	}
	out.Stats = stats(out.History)
	out.Elapsed = time.Since(start)
	out.Err = runErr
	if file != nil {
		if err := file.Sync(); err != nil && runErr == nil {
			runErr = err
		}
		file.Close()
		if !out.Caught() && runErr == nil && len(out.Report.Unknown) == 0 && !cfg.KeepAll {
			os.Remove(file.Name())
		}
	}
	return out, runErr
}

// causes drops the cancellations that the first failure caused in the other
// workers, unless there is nothing else.
func causes(errs []error) []error {
	var out []error
	for _, err := range errs {
		if !errors.Is(err, context.Canceled) {
			out = append(out, err)
		}
	}
	if len(out) == 0 {
		return errs
	}
	return out
}

// runFile is where run's history (run counts from 0) is written as it
// happens, under dir: run-N.jsonl with N counting from 1, as the runs are
// named to a person ("run 3", "first at run 3").
func runFile(dir string, run int) string {
	return filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", run+1))
}

// RunFile is the path of run's history under Config.Out (it stays there
// when the run violated an invariant beyond Expected or ended early, or
// with KeepAll).
func (c Config) RunFile(run int) string { return runFile(c.Out, run) }

func newWorker(s workerSpec, coord lessor, sink Sink, log leases.Log, p pauser) *worker {
	_, self := coord.(selfRecorder)
	return &worker{spec: s, rng: rand.New(rand.NewPCG(s.Seed, 1)), coord: coord, sink: sink,
		log: log, pause: p, done: map[string]bool{}, selfRecording: self}
}

// runGoroutineWorker runs a worker in this process, with its own connection
// to the database; its pauses block it.
func runGoroutineWorker(ctx context.Context, s workerSpec, lessorFor func(Sink) lessor, log leases.Log, rec *history.Recorder, prob float64) error {
	p := &sleepPauser{id: s.ID, rng: rand.New(rand.NewPCG(s.Seed, 2)), prob: prob, ttl: s.TTL, rec: rec}
	var pauseErr error
	s.Sink.Window = func(ctx context.Context) {
		if err := p.maybePause(ctx, inWindow); err != nil && pauseErr == nil {
			pauseErr = err
		}
	}
	sink, err := Open(ctx, s.Sink)
	if err != nil {
		return err
	}
	defer sink.Close()
	if err := newWorker(s, lessorFor(sink), sink, log, p).run(ctx); err != nil {
		return err
	}
	return pauseErr
}

// pauseLength draws a pause of 2 to 3 ttls: longer than any lease.
func pauseLength(rng *rand.Rand, ttl time.Duration) time.Duration {
	return 2*ttl + time.Duration(rng.Int64N(int64(ttl)+1))
}

// sleepPauser pauses a goroutine worker by blocking it.
type sleepPauser struct {
	id   string
	rng  *rand.Rand
	prob float64
	ttl  time.Duration
	rec  *history.Recorder
}

func (p *sleepPauser) maybePause(ctx context.Context, _ string) error {
	if p.rng.Float64() >= p.prob {
		return nil
	}
	d := pauseLength(p.rng, p.ttl)
	p.rec.Fault(p.id, history.Pause, history.Value{})
	defer p.rec.Fault(p.id, history.Resume, history.Value{})
	return Sleep(ctx, d)
}

// Sleep waits for d, or until ctx is done (then it returns ctx's error): a
// pause of a real run that an interrupt or a deadline cuts short.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// proc is a process worker as the driver sees it. Its mutex is held while
// the process is stopped, so that two pauses never overlap.
type proc struct {
	id   string
	cmd  *exec.Cmd
	rec  *history.Recorder
	prob float64
	ttl  time.Duration
	rng  *rand.Rand // for pauses the worker asks for; used by one connection
	mu   sync.Mutex
	wg   sync.WaitGroup // pauses in progress
	done chan struct{}  // closed when the process has exited
	// started is closed once cmd.Start has returned: the process may ask to
	// be paused before the driver's goroutine is done starting it.
	started chan struct{}
}

// maybePause answers a worker at one of its pause points: it may stop the
// worker with SIGSTOP, then lets it go on with SIGCONT after 2 to 3 ttls. The
// answer reaches the worker when it is continued.
func (p *proc) maybePause(ctx context.Context, _ string) error {
	if p.rng.Float64() >= p.prob {
		return nil
	}
	return p.stop(ctx, pauseLength(p.rng, p.ttl), false)
}

// stop stops the process for d. With wait it returns once the process is
// continued; without, it returns at once and a goroutine continues it. It
// does nothing if the process is already stopped or has exited.
func (p *proc) stop(ctx context.Context, d time.Duration, wait bool) error {
	<-p.started
	if !p.mu.TryLock() {
		return nil
	}
	select {
	case <-p.done:
		p.mu.Unlock()
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		p.mu.Unlock()
		if errors.Is(err, os.ErrProcessDone) {
			return nil
		}
		return fmt.Errorf("stopping worker %s: %w", p.id, err)
	}
	p.rec.Fault(p.id, history.Pause, history.Value{})
	p.wg.Add(1)
	cont := func() {
		defer p.wg.Done()
		defer p.mu.Unlock()
		_ = Sleep(ctx, d) // cancelled or not, the process must go on
		p.rec.Fault(p.id, history.Resume, history.Value{})
		// An error means the process is gone: nothing left to continue.
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
	if wait {
		cont()
	} else {
		go cont()
	}
	return nil
}

// nemesis stops the process at random instants, every 2 to 8 ttls, until
// it exits.
func (p *proc) nemesis(ctx context.Context, rng *rand.Rand) error {
	for {
		t := time.NewTimer(2*p.ttl + time.Duration(rng.Int64N(int64(6*p.ttl))))
		select {
		case <-p.done:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if rng.Float64() < p.prob {
			if err := p.stop(ctx, pauseLength(rng, p.ttl), true); err != nil {
				return err
			}
		}
	}
}

// runProcessWorkers starts the process workers, serves them over a unix
// socket in dir, stops them at random, and waits for them all to exit. On
// failure or cancellation every worker is killed.
func runProcessWorkers(ctx context.Context, cfg Config, specs []workerSpec, coord *Coordinator,
	log leases.Log, rec *history.Recorder, dir string, run int, tokens *counter, fail func(error)) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the worker executable: %w", err)
	}
	sock := filepath.Join(dir, fmt.Sprintf("run-%d.sock", run))
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listening for process workers: %w", err)
	}
	srv := &server{ln: ln, coord: coord, log: log, procs: map[string]*proc{}, tokens: tokens}
	var procs []*proc
	var stderr []*bytes.Buffer
	for _, s := range specs {
		s.Sink.Window = nil
		env, err := json.Marshal(processConfig{Socket: sock, Spec: s})
		if err != nil {
			ln.Close()
			return fmt.Errorf("encoding worker %s's configuration: %w", s.ID, err)
		}
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), WorkerEnv+"="+string(env))
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		// Cancellation kills the workers (CommandContext); Pdeathsig also kills
		// them if the driver dies first (strictly: if the thread that started
		// them ends, which Go threads seldom do).
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.WaitDelay = time.Second
		p := &proc{id: s.ID, cmd: cmd, rec: rec, prob: cfg.PauseProb, ttl: cfg.TTL,
			rng: rand.New(rand.NewPCG(s.Seed, 3)), done: make(chan struct{}), started: make(chan struct{})}
		procs, stderr = append(procs, p), append(stderr, &buf)
		srv.procs[s.ID] = p
	}
	go srv.serve(ctx)
	var wg sync.WaitGroup
	for i, p := range procs {
		err := p.cmd.Start()
		close(p.started)
		if err != nil {
			fail(fmt.Errorf("starting worker %s: %w", p.id, err))
			close(p.done)
			continue
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			err := p.cmd.Wait()
			close(p.done)
			var exit *exec.ExitError
			if errors.As(err, &exit) && ctx.Err() == nil {
				if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					// Killed from outside (SIGKILL, the OOM killer): a crash,
					// recorded; its open operation stays open (info).
					rec.Fault(p.id, history.Crash, history.Value{})
				}
			}
			if err != nil && ctx.Err() != nil {
				return // killed by the run's end: the cause is reported already
			}
			if out := bytes.TrimSpace(stderr[i].Bytes()); err != nil && len(out) > 0 {
				fail(fmt.Errorf("worker %s: %w: %s", p.id, err, out))
			} else if err != nil {
				fail(fmt.Errorf("worker %s: %w", p.id, err))
			}
		}()
		if i == 0 && cfg.KillAfter > 0 {
			go func() {
				if Sleep(ctx, cfg.KillAfter) == nil {
					p.mu.Lock() // not while stopped: a stopped process would still die, but never resume
					_ = p.cmd.Process.Signal(syscall.SIGKILL)
					p.mu.Unlock()
				}
			}()
		}
		go func() {
			defer wg.Done()
			if err := p.nemesis(ctx, rand.New(rand.NewPCG(specs[i].Seed, 4))); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	for _, p := range procs {
		p.wg.Wait()
	}
	return srv.close()
}

// stats counts what happened in h.
func stats(h *history.History) Stats {
	s := Stats{Events: len(h.Events), Writes: map[string]int{}}
	type holder struct {
		process  string
		released bool
	}
	holders := map[string]holder{} // by resource: the last grantee
	for _, op := range h.Ops() {
		inv := h.Events[op.Invoke]
		t := h.Result(op)
		var v history.Value
		if op.Complete >= 0 {
			v = h.Events[op.Complete].Value
		}
		switch inv.F {
		case history.Acquire:
			if t == history.OK {
				s.Grants++
				if last, ok := holders[inv.Resource]; ok && !last.released && last.process != inv.Process {
					s.Takeovers++
				}
				holders[inv.Resource] = holder{process: inv.Process}
			}
		case history.Release:
			if last := holders[inv.Resource]; t == history.OK && last.process == inv.Process {
				holders[inv.Resource] = holder{process: inv.Process, released: true}
			}
		case history.Read:
			s.Reads++
		case history.Write:
			switch t {
			case history.OK:
				s.Writes[v.Outcome]++
			case history.Fail:
				s.Writes[v.Error]++
			default:
				s.Writes["info"]++
			}
		}
	}
	for _, e := range h.Events {
		if e.F == history.Pause {
			s.Pauses++
		}
	}
	return s
}
