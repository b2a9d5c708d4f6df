package realdb

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/lease/etcdcluster"
	"github.com/fencecheck/fencecheck/lease/redisserver"
)

// The lease services the tests run against: an etcd cluster of three
// members inside the test binary, and a redis-server (Debian's) started as a
// throwaway non-root process on a spare loopback port. Without redis-server
// the Redis tests are skipped — except under CI=true, where they fail.

var services struct {
	etcdOnce  sync.Once
	etcd      *etcdcluster.Cluster
	etcdDir   string
	etcdErr   error
	redisOnce sync.Once
	redis     *redisserver.Server
	redisErr  error
}

func needEtcd(t testing.TB) *etcdcluster.Cluster {
	t.Helper()
	services.etcdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fencecheck-etcd-")
		if err != nil {
			services.etcdErr = err
			return
		}
		services.etcdDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		services.etcd, services.etcdErr = etcdcluster.Start(ctx, dir, 3)
	})
	if services.etcdErr != nil {
		t.Fatalf("embedded etcd: %v", services.etcdErr)
	}
	return services.etcd
}

func needRedis(t testing.TB) string {
	t.Helper()
	services.redisOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		services.redis, services.redisErr = redisserver.Start(ctx)
	})
	if services.redisErr != nil {
		msg := "no redis-server for the tests (install Debian's redis-server): " + services.redisErr.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return services.redis.Addr
}

func stopServices() error {
	var err error
	if services.etcd != nil {
		services.etcd.Close()
		os.RemoveAll(services.etcdDir)
	}
	if services.redis != nil {
		err = services.redis.Stop()
	}
	return err
}

// serviceConfig is the tests' workload on a lease service: 3 goroutine
// workers on 2 resources with 2 tasks each.
func serviceConfig(kind string, endpoints []string, sink string, runs int, seed uint64) Config {
	return Config{Lease: kind, LeaseEndpoints: endpoints, Sink: sink, Runs: runs, Seed: seed,
		Workers: 3, Tasks: 2}
}

// byInvariant counts the runs caught by each invariant.
func byInvariant(res Result) map[string]int {
	n := map[string]int{}
	for _, r := range res.Runs {
		seen := map[string]bool{}
		for _, v := range r.Unexpected {
			if !seen[v.Invariant] {
				seen[v.Invariant] = true
				n[v.Invariant]++
			}
		}
	}
	return n
}

// TestEtcdFencedSinkPasses: etcd's lock with the holder's raise and an atomic
// or max-token sink, on SQLite and PostgreSQL, shows nothing beyond
// absolute-validity.
func TestEtcdFencedSinkPasses(t *testing.T) {
	c := needEtcd(t)
	for _, tc := range []struct{ db, sink string }{{SQLite, Atomic}, {Postgres, MaxToken}} {
		t.Run(tc.db+"/"+tc.sink, func(t *testing.T) {
			cfg := serviceConfig(Etcd, c.Endpoints(), tc.sink, 1, 1)
			if tc.db == Postgres {
				cfg.DB, cfg.DSN = Postgres, needPostgres(t)
			}
			checkAtomicPasses(t, run(t, cfg), false)
		})
	}
}

// TestEtcdLockAloneCaught: the lock alone (a sink that checks nothing) lets a
// paused holder's write land after the takeover.
func TestEtcdLockAloneCaught(t *testing.T) {
	c := needEtcd(t)
	cfg := serviceConfig(Etcd, c.Endpoints(), None, 10, 2)
	cfg.StopAtFirst = true
	res := run(t, cfg)
	checkCaught(t, res)
	t.Logf("caught by %v", byInvariant(res))
}

// TestEtcdProcessWorkers: process workers with their own etcd clients,
// stopped with SIGSTOP, and the atomic sink.
func TestEtcdProcessWorkers(t *testing.T) {
	c := needEtcd(t)
	cfg := serviceConfig(Etcd, c.Endpoints(), Atomic, 1, 7)
	cfg.Workers, cfg.Procs, cfg.Resources, cfg.Tasks, cfg.Attempts = 1, 2, 1, 1, 6
	checkAtomicPasses(t, run(t, cfg), false)
}

func TestRedisAtomicPasses(t *testing.T) {
	addr := needRedis(t)
	checkAtomicPasses(t, run(t, serviceConfig(Redis, []string{addr}, Atomic, 3, 1)), false)
}

// TestRedisWithoutTokenCaught: the Redis lock and a sink with nothing to
// fence on.
func TestRedisWithoutTokenCaught(t *testing.T) {
	addr := needRedis(t)
	cfg := serviceConfig(Redis, []string{addr}, None, 30, 1)
	cfg.StopAtFirst = true
	res := run(t, cfg)
	checkCaught(t, res)
	t.Logf("caught by %v", byInvariant(res))
}

// TestRedisProcessWorkers: process workers with their own Redis clients and
// tokens drawn from the driver.
func TestRedisProcessWorkers(t *testing.T) {
	addr := needRedis(t)
	cfg := serviceConfig(Redis, []string{addr}, Atomic, 1, 7)
	cfg.Workers, cfg.Procs, cfg.PauseProb = 1, 2, 0.3
	checkAtomicPasses(t, run(t, cfg), false)
}

// TestServerGoneMidRun: the Redis server is killed mid-run. The run ends with
// an error naming the cause, and what was recorded until then is kept (the
// history file is a valid prefix) and checked.
func TestServerGoneMidRun(t *testing.T) {
	ctx := context.Background()
	srv, err := redisserver.Start(ctx)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer srv.Stop()
	out := t.TempDir()
	cfg := serviceConfig(Redis, []string{srv.Addr}, Atomic, 3, 1)
	cfg.Out = out
	cfg.Faults = func(ctx context.Context, run int, rec *history.Recorder) error {
		if err := Sleep(ctx, 150*time.Millisecond); err != nil {
			return nil
		}
		rec.Fault(history.Nemesis, history.Crash, history.Value{Target: "redis"})
		return srv.Stop()
	}
	res, err := Run(ctx, cfg)
	t.Logf("error: %v", err)
	if len(res.Runs) != 1 {
		t.Fatalf("%d runs recorded, want the one that the fault ended", len(res.Runs))
	}
	r := res.Runs[0]
	if err == nil && r.Err == nil {
		// Workers may all have finished before the kill: then the fault line
		// is there and nothing failed.
		t.Logf("the run finished before the server went away")
	}
	h, rerr := history.ReadFile(cfg.RunFile(0))
	if rerr != nil {
		t.Fatalf("the history written as it happened does not read back: %v", rerr)
	}
	if len(h.Events) != len(r.History.Events) {
		t.Fatalf("file has %d events, the recorder %d", len(h.Events), len(r.History.Events))
	}
	crash := false
	for _, e := range h.Events {
		crash = crash || e.F == history.Crash
	}
	if !crash {
		t.Fatal("no crash line in the history")
	}
	if r.Caught() {
		t.Fatalf("the prefix violates %v", r.Unexpected)
	}
}

// TestWorkerKilled: a process worker killed with SIGKILL mid-run. The run
// ends early with a message naming it, its crash is recorded, and the
// prefix is checked (nothing unexpected with the atomic sink).
func TestWorkerKilled(t *testing.T) {
	cfg := Config{Workers: 1, Procs: 2, Runs: 5, Seed: 3, KillAfter: 40 * time.Millisecond, Out: t.TempDir()}
	res, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("a run with a worker killed ended without an error")
	}
	t.Logf("error: %v", err)
	r := res.Runs[len(res.Runs)-1] // the runs before it finished before the kill
	if r.Err == nil {
		t.Fatalf("the last run has no error")
	}
	crash := 0
	for _, e := range r.History.Events {
		if e.F == history.Crash && e.Process == "p1" {
			crash++
		}
	}
	if crash != 1 || r.Caught() {
		t.Fatalf("crash lines %d (want 1), unexpected %v", crash, r.Unexpected)
	}
	if _, err := history.ReadFile(cfg.RunFile(r.Run)); err != nil {
		t.Fatalf("the history file is not a valid prefix: %v", err)
	}
}

// TestDatabaseRestartMidRun: every connection to PostgreSQL is cut mid-run
// (pg_terminate_backend: what clients see of a database restart). The
// operation that meets it is recorded info, the run ends early with the
// database's error, and the recorded prefix is checked and kept.
func TestDatabaseRestartMidRun(t *testing.T) {
	dsn := needPostgres(t)
	cfg := runConfig(Postgres, dsn, Atomic, 5, 11)
	cfg.Out = t.TempDir()
	cfg.Faults = func(ctx context.Context, run int, rec *history.Recorder) error {
		if err := Sleep(ctx, 60*time.Millisecond); err != nil {
			return nil
		}
		conn, err := pgx.Connect(context.WithoutCancel(ctx), dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		rec.Fault(history.Nemesis, history.Crash, history.Value{Target: "postgres"})
		_, err = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'`)
		rec.Fault(history.Nemesis, history.Restart, history.Value{Target: "postgres"})
		return err
	}
	res, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatalf("no run ended early in %d runs", len(res.Runs))
	}
	t.Logf("error: %v", err)
	r := res.Runs[len(res.Runs)-1]
	info := 0
	for _, e := range r.History.Events {
		if e.Type == history.Info && history.IsOperation(e.F) {
			info++
		}
	}
	if info == 0 || r.Caught() {
		t.Fatalf("info completions %d (want some), unexpected %v", info, r.Unexpected)
	}
	if _, err := history.ReadFile(cfg.RunFile(r.Run)); err != nil {
		t.Fatalf("the history file is not a valid prefix: %v", err)
	}
}
