package explore

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/fencecheck/fencecheck/realdb"
	"github.com/fencecheck/fencecheck/spec"
)

func runReal(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("real", "[--db sqlite|postgres] [--sink atomic|check-then-write] [flags]",
		"Run real workers (goroutines and SIGSTOPped processes) against a real coordinator and a fenced sink on a real database, record each run's history and check it. Exit 1 when a run violates an invariant beyond absolute-validity.", stdout)
	cfg := realdb.Config{}
	fs.StringVar(&cfg.DB, "db", realdb.SQLite, "sqlite or postgres")
	fs.StringVar(&cfg.DSN, "dsn", "", "PostgreSQL connection string (required with --db postgres); for sqlite, a folder for the database")
	fs.StringVar(&cfg.Sink, "sink", realdb.Atomic, "atomic or check-then-write")
	fs.IntVar(&cfg.Workers, "workers", 4, "goroutine workers")
	fs.IntVar(&cfg.Procs, "procs", 0, "process workers (paused with SIGSTOP/SIGCONT)")
	fs.IntVar(&cfg.Resources, "resources", 2, "resources (leases and fences)")
	fs.IntVar(&cfg.Runs, "runs", 10, "runs")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the driver's choices (run i uses seed+i)")
	fs.DurationVar(&cfg.TTL, "ttl", 20*time.Millisecond, "lease length")
	fs.BoolVar(&cfg.StopAtFirst, "stop", false, "stop at the first run that violates an invariant")
	out := fs.String("out", "explore-out", "folder for the histories of violating runs")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected argument %q (see --help)", fs.Arg(0))
	}
	switch {
	case cfg.DB != realdb.SQLite && cfg.DB != realdb.Postgres:
		return 0, usagef("--db %q: want sqlite or postgres", cfg.DB)
	case cfg.Sink != realdb.Atomic && cfg.Sink != realdb.CheckThenWrite:
		return 0, usagef("--sink %q: want atomic or check-then-write", cfg.Sink)
	case cfg.DB == realdb.Postgres && cfg.DSN == "":
		return 0, usagef("--db postgres needs --dsn")
	case cfg.Runs < 1 || cfg.Workers < 0 || cfg.Procs < 0 || cfg.Workers+cfg.Procs < 2:
		return 0, usagef("need --runs >= 1 and at least two workers in all")
	}
	res, err := realdb.Run(ctx, cfg)
	if err != nil {
		return 0, err
	}
	code := exitOK
	var files []string
	for _, r := range res.Runs {
		if !r.Caught() {
			continue
		}
		code = exitViolation
		path, err := save(filepath.Join(*out, "real-"+cfg.DB+"-"+cfg.Sink), fmt.Sprintf("run-%d", r.Run), r.History, cat)
		if err != nil {
			return 0, err
		}
		files = append(files, path)
	}
	if *jsonOut {
		return code, writeJSON(stdout, map[string]any{"db": cfg.DB, "sink": cfg.Sink, "runs": len(res.Runs),
			"caught": res.Caught, "firstCaught": res.FirstCaught, "unknown": res.Unknown,
			"elapsed": res.Elapsed.String(), "files": nonNil(files)})
	}
	fmt.Fprintf(stdout, "%s sink on %s: %d runs in %s, %d with a violation", cfg.Sink, cfg.DB, len(res.Runs),
		res.Elapsed.Round(time.Millisecond), res.Caught)
	if res.FirstCaught > 0 {
		fmt.Fprintf(stdout, " (first at run %d)", res.FirstCaught)
	}
	fmt.Fprintln(stdout)
	for _, r := range res.Runs {
		for _, v := range r.Unexpected {
			fmt.Fprintf(stdout, "  run %d: %s on %s: %s\n", r.Run, v.Invariant, v.Resource, v.Message)
		}
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "  history: %s\n", f)
	}
	if res.Unknown > 0 {
		fmt.Fprintf(stdout, "%d runs could not be fully checked in time (unknown)\n", res.Unknown)
	}
	return code, nil
}
