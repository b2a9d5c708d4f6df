package realdb

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

var soak = flag.Int("realdb.soak", 0, "runs per database and sink for TestSoak (0: skip it)")

// runConfig is the tests' workload: 4 goroutine workers on 2 resources with
// 3 tasks each, 20ms leases.
func runConfig(db, dsn, sink string, runs int, seed uint64) Config {
	return Config{DB: db, DSN: dsn, Sink: sink, Runs: runs, Seed: seed}
}

func run(t *testing.T, cfg Config) Result {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// total adds the runs' stats up.
func total(res Result) Stats {
	s := Stats{Writes: map[string]int{}}
	for _, r := range res.Runs {
		s.Events += r.Stats.Events
		s.Grants += r.Stats.Grants
		s.Takeovers += r.Stats.Takeovers
		s.Pauses += r.Stats.Pauses
		s.Reads += r.Stats.Reads
		for k, n := range r.Stats.Writes {
			s.Writes[k] += n
		}
	}
	return s
}

// checkAtomicPasses asserts that no run of the atomic sink violated an
// invariant beyond Expected; with exercised, also that the runs did what
// they are for: pauses, takeovers, stale writes fenced.
func checkAtomicPasses(t *testing.T, res Result, exercised bool) {
	t.Helper()
	for _, r := range res.Runs {
		if r.Caught() || len(r.Report.Unknown) > 0 {
			var b bytes.Buffer
			history.Encode(&b, r.History)
			t.Fatalf("run %d (seed %d): unexpected %+v, unknown %v\n%s", r.Run, r.Seed, r.Unexpected, r.Report.Unknown, b.String())
		}
	}
	s := total(res)
	t.Logf("%d runs passed in %v: %+v", len(res.Runs), res.Elapsed.Round(time.Millisecond), s)
	if exercised && (s.Pauses == 0 || s.Takeovers == 0 || s.Writes[history.Fenced] == 0 || s.Writes[history.Written] == 0) {
		t.Fatalf("the runs did not exercise takeovers and stale writes: %+v", s)
	}
}

// checkCaught asserts that a run of the check-then-write sink was caught.
func checkCaught(t *testing.T, res Result) {
	t.Helper()
	if res.FirstCaught == 0 {
		t.Fatalf("check-then-write not caught in %d runs: %+v", len(res.Runs), total(res))
	}
	r := res.Runs[res.FirstCaught-1]
	t.Logf("caught at run %d of %d (seed %d) in %v: %v", res.FirstCaught, len(res.Runs), r.Seed,
		res.Elapsed.Round(time.Millisecond), r.Unexpected)
}

func TestAtomicSQLitePasses(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 5
	}
	checkAtomicPasses(t, run(t, runConfig(SQLite, "", Atomic, runs, 1)), true)
}

func TestCheckThenWriteSQLiteCaught(t *testing.T) {
	cfg := runConfig(SQLite, "", CheckThenWrite, 40, 1)
	cfg.StopAtFirst = true
	checkCaught(t, run(t, cfg))
}

// TestCheckThenWriteCaughtByReportedFence: a stale write that check-then-write
// lets through reports the fence it committed under, above its token, and
// the history check proves fencing from that report alone.
func TestCheckThenWriteCaughtByReportedFence(t *testing.T) {
	res := run(t, runConfig(SQLite, "", CheckThenWrite, 20, 100))
	byFence := 0
	for _, r := range res.Runs {
		for _, v := range r.Unexpected {
			if v.Invariant == spec.Fencing && strings.Contains(v.Message, "accepted although the sink reported its fence at") {
				byFence++
				break
			}
		}
	}
	t.Logf("%d of %d runs caught by the reported fence (%d caught in all)", byFence, len(res.Runs), res.Caught)
	if byFence == 0 {
		t.Fatalf("no run of 20 was caught by the reported fence: %+v", total(res))
	}
}

func TestAtomicPostgresPasses(t *testing.T) {
	runs := 10
	if testing.Short() {
		runs = 3
	}
	checkAtomicPasses(t, run(t, runConfig(Postgres, needPostgres(t), Atomic, runs, 1)), true)
}

func TestCheckThenWritePostgresCaught(t *testing.T) {
	cfg := runConfig(Postgres, needPostgres(t), CheckThenWrite, 40, 1)
	cfg.StopAtFirst = true
	checkCaught(t, run(t, cfg))
}

// TestProcessWorkers runs workers as separate processes of this test binary,
// stopped with SIGSTOP and continued with SIGCONT, beside goroutine workers.
func TestProcessWorkers(t *testing.T) {
	for _, db := range []string{SQLite, Postgres} {
		t.Run(db, func(t *testing.T) {
			dsn := ""
			if db == Postgres {
				dsn = needPostgres(t)
			}
			cfg := runConfig(db, dsn, Atomic, 3, 7)
			cfg.Workers, cfg.Procs, cfg.PauseProb = 1, 3, 0.3
			res := run(t, cfg)
			// Where a SIGSTOP lands is up to the scheduler: stale writes are
			// likely here, not certain.
			checkAtomicPasses(t, res, false)
			stopped := 0
			for _, r := range res.Runs {
				for _, e := range r.History.Events {
					if e.F == history.Pause && strings.HasPrefix(e.Process, "p") {
						stopped++
					}
				}
			}
			if stopped == 0 {
				t.Fatal("no process worker was stopped")
			}
		})
	}
}

// TestRunHistoryIsWellFormed writes a run's history in the format and reads
// it back.
func TestRunHistoryIsWellFormed(t *testing.T) {
	res := run(t, runConfig(SQLite, "", CheckThenWrite, 1, 3))
	h := res.Runs[0].History
	var b bytes.Buffer
	if err := history.Encode(&b, h); err != nil {
		t.Fatal(err)
	}
	got, err := history.ReadAll("run", &b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(h.Events) || got.Header.TimeUnit != "ns" || got.Header.Seed != 3 {
		t.Fatalf("read back %d events, header %+v", len(got.Events), got.Header)
	}
	writes := 0
	for _, e := range got.Events {
		if e.F == history.Write && e.Type == history.Invoke {
			writes++
			if e.Value.Task == "" {
				t.Fatalf("write without task: %+v", e)
			}
		}
	}
	if writes == 0 {
		t.Fatal("no writes")
	}
}

// TestRunTimeout lets a run with process workers outlast its RunTimeout:
// Run returns the error once every worker has been killed and reaped, and
// the error says the run reached its time limit, naming it (it said only
// what the limit did to each worker: "context deadline exceeded"). With
// goroutine workers alone, too; the run's history is kept.
func TestRunTimeout(t *testing.T) {
	for _, procs := range []int{2, 0} {
		cfg := runConfig(SQLite, "", Atomic, 1, 5)
		cfg.Workers, cfg.Procs, cfg.Attempts, cfg.Tasks = 1, procs, 1000, 50
		if procs == 0 {
			cfg.Workers = 3
		}
		// Paused twice for 2 to 3 ttls before every write: no write can end
		// before 800 ms, and the run needs 100 of them. (With the default 20 ms
		// ttl and 3 tasks a run could end, rarely, inside the deadline.)
		cfg.PauseProb, cfg.TTL = 1, 200*time.Millisecond
		cfg.RunTimeout = 500 * time.Millisecond
		cfg.Out = t.TempDir()
		start := time.Now()
		res, err := Run(context.Background(), cfg)
		if !errors.Is(err, ErrRunTimeout) || !strings.Contains(err.Error(), "time limit of 500ms") ||
			strings.Contains(err.Error(), "deadline exceeded") {
			t.Fatalf("procs %d: Run = %v, want the run's time limit, 500ms, and no worker's deadline", procs, err)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("procs %d: Run took %v to give up", procs, d)
		}
		if len(res.Runs) != 1 || !errors.Is(res.Runs[0].Err, ErrRunTimeout) {
			t.Fatalf("procs %d: runs %+v", procs, res.Runs)
		}
		if _, err := os.Stat(cfg.RunFile(0)); err != nil {
			t.Errorf("procs %d: the history of the run that reached its limit: %v", procs, err)
		}
		t.Log(err)
	}
}

// TestUnknownRunsAreKept: a run whose check ran out of time (CheckTimeout)
// is counted in Result.Unknown and its history is kept, as one that was
// caught; so is a run that ended early (it was counted only when it ended
// cleanly, and its history removed).
func TestUnknownRunsAreKept(t *testing.T) {
	cfg := runConfig(SQLite, "", Atomic, 2, 1)
	cfg.CheckTimeout, cfg.Out = time.Nanosecond, t.TempDir()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unknown != 2 {
		t.Fatalf("%d runs unknown, want 2 (reports %v, %v)", res.Unknown, res.Runs[0].Report.Unknown, res.Runs[1].Report.Unknown)
	}
	for run := range 2 {
		if _, err := os.Stat(cfg.RunFile(run)); err != nil {
			t.Errorf("run %d not fully checked, its history removed: %v", run+1, err)
		}
	}
	// A run that ends early (its time limit) and whose check runs out too.
	cfg = runConfig(SQLite, "", Atomic, 1, 5)
	cfg.Workers, cfg.Attempts, cfg.Tasks = 3, 1000, 50
	cfg.PauseProb, cfg.TTL, cfg.RunTimeout = 0.3, 50*time.Millisecond, 1500*time.Millisecond
	cfg.CheckTimeout = time.Nanosecond
	res, err = Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("Run = nil, want the run's time limit")
	}
	if len(res.Runs) != 1 || len(res.Runs[0].Report.Unknown) == 0 {
		t.Fatalf("the prefix's check did not run out: %+v", res.Runs)
	}
	if res.Unknown != 1 {
		t.Errorf("a run that ended early and was not fully checked: Unknown %d, want 1", res.Unknown)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{DB: "oracle"},
		{Sink: "optimistic"},
		{DB: Postgres},
		{TTL: time.Microsecond},
		{Workers: -1},
		{RunTimeout: -time.Second},
		// etcd grants whole seconds: these would run on leases of 1 s and 2 s.
		{Lease: Etcd, LeaseEndpoints: []string{"127.0.0.1:1"}, TTL: 100 * time.Millisecond},
		{Lease: Etcd, LeaseEndpoints: []string{"127.0.0.1:1"}, TTL: 1500 * time.Millisecond},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("Run(%+v) succeeded", cfg)
		}
	}
}

// TestSoak runs many seeds on every database and sink: go test -run Soak
// ./realdb -realdb.soak=200.
func TestSoak(t *testing.T) {
	if *soak == 0 || testing.Short() {
		t.Skip("set -realdb.soak=N to soak")
	}
	for _, db := range []string{SQLite, Postgres} {
		dsn := ""
		if db == Postgres {
			dsn = needPostgres(t)
		}
		atomic := run(t, runConfig(db, dsn, Atomic, *soak, 1000))
		checkAtomicPasses(t, atomic, true)
		ctw := run(t, runConfig(db, dsn, CheckThenWrite, *soak, 1000))
		t.Logf("%s check-then-write: %d of %d runs caught, first at run %d", db, ctw.Caught, len(ctw.Runs), ctw.FirstCaught)
		if ctw.Caught == 0 {
			t.Errorf("%s check-then-write never caught", db)
		}
	}
}
