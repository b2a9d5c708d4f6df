package explore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// configFlags registers the model bounds (model.Config) a verb can override.
func configFlags(fs interface {
	IntVar(*int, string, int, string)
}, c *model.Config) {
	fs.IntVar(&c.Workers, "workers", c.Workers, "worker processes (2..4)")
	fs.IntVar(&c.Resources, "resources", c.Resources, "resources (tasks), each with its own lease and fence (1..3)")
	fs.IntVar(&c.TTL, "ttl", c.TTL, "lease length in ticks")
	fs.IntVar(&c.Replicas, "replicas", c.Replicas, "coordinator replicas that believe they are primary (2: split brain)")
	fs.IntVar(&c.Ops, "ops", c.Ops, "operations each worker may start")
	fs.IntVar(&c.Grants, "grants", c.Grants, "grants per resource")
	fs.IntVar(&c.InFlight, "in-flight", c.InFlight, "messages in flight at once")
	fs.IntVar(&c.Drops, "drops", c.Drops, "messages the network may lose")
	fs.IntVar(&c.Dups, "dups", c.Dups, "messages the network may duplicate")
	fs.IntVar(&c.Crashes, "crashes", c.Crashes, "worker crash-and-restarts")
	fs.IntVar(&c.Restarts, "restarts", c.Restarts, "coordinator restarts")
	fs.IntVar(&c.Forgeries, "forgeries", c.Forgeries, "writes with a token the worker made up")
	fs.IntVar(&c.Skew, "skew", c.Skew, "largest worker clock offset, in ticks")
	fs.IntVar(&c.SinkRestarts, "sink-restarts", c.SinkRestarts, "sink crash-and-restarts")
}

func runCampaign(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("campaign", "[flags]", "Search every built-in variant against every invariant; print the verdict matrix; write each counterexample (history + HTML) under --out.", stdout)
	opt := checker.DefaultCampaign()
	configFlags(fs, &opt.Config)
	fs.Uint64Var(&opt.Seed, "seed", opt.Seed, "seed of the search")
	fs.IntVar(&opt.Runs, "runs", opt.Runs, "random runs per variant")
	fs.IntVar(&opt.Steps, "steps", opt.Steps, "actions per run")
	out := fs.String("out", "explore-out", "folder for counterexamples")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected argument %q (see --help)", fs.Arg(0))
	}
	if err := opt.Config.Validate(); err != nil {
		return 0, usageError{err}
	}
	show := progress(isTerminal(os.Stderr) && !*jsonOut)
	start := time.Now()
	variants := cat
	finished := map[string]bool{}
	var mu sync.Mutex // Progress is called from the searching goroutines
	opt.Progress = func(v string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done == total {
			finished[v] = true
		}
		show("%d/%d variants searched; %-20s %5d/%d runs  %s", len(finished), len(variants), v, done, total,
			time.Since(start).Round(time.Second))
	}
	results, err := checker.Campaign(ctx, variants, opt)
	show("")
	if err != nil {
		return 0, err
	}
	code := exitOK
	type cell struct {
		Invariant string `json:"invariant"`
		Verdict   string `json:"verdict"`
		Expected  bool   `json:"expected"`
		Ops       int    `json:"shortestOps,omitempty"`
		File      string `json:"file,omitempty"`
	}
	type row struct {
		Variant  string `json:"variant"`
		Expected bool   `json:"expected"`
		Problem  string `json:"problem,omitempty"`
		Runs     int    `json:"runs"`
		Cells    []cell `json:"cells"`
		// Reached counts the runs that reached each scene.
		Reached checker.Coverage `json:"reached"`
	}
	var rows []row
	for _, r := range results {
		rw := row{Variant: r.Variant.Name, Expected: r.Expected(), Problem: r.Problem(), Runs: r.Runs, Reached: r.Reached}
		if !rw.Expected {
			code = exitViolation
		}
		for _, inv := range spec.Invariants {
			found, ok := r.Expect.Verdict(inv.ID, r.Violated)
			c := cell{Invariant: inv.ID, Verdict: "holds", Expected: ok}
			if found {
				c.Verdict = "violated"
				f := r.Finding(inv.ID)
				h := checker.Counterexample(r.Variant.Name, opt.Seed, f.Run, fmt.Sprintf("%s violates %s (campaign seed %d, run %d, shrunk)", r.Variant.Name, inv.ID, opt.Seed, f.FirstRun))
				c.Ops = len(h.Ops())
				path, err := save(filepath.Join(*out, r.Variant.Name), inv.ID, h, cat)
				if err != nil {
					return 0, err
				}
				c.File = path
			}
			rw.Cells = append(rw.Cells, c)
		}
		rows = append(rows, rw)
	}
	if *jsonOut {
		return code, writeJSON(stdout, map[string]any{"ok": code == exitOK, "seed": opt.Seed, "runs": opt.Runs, "variants": rows})
	}
	fmt.Fprintf(stdout, "fencecheck campaign: %d variants x %d invariants, %d runs of %d actions each, seed %d, %s\n\n",
		len(results), len(spec.Invariants), opt.Runs, opt.Steps, opt.Seed, time.Since(start).Round(time.Millisecond))
	tw := tabwriter.NewWriter(stdout, 0, 4, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "variant\t")
	for i := range spec.Invariants {
		fmt.Fprintf(tw, "%c\t", 'A'+i)
	}
	fmt.Fprintln(tw, "verdict\t")
	for _, rw := range rows {
		fmt.Fprintf(tw, "%s\t", rw.Variant)
		for _, c := range rw.Cells {
			s := "ok"
			if c.Verdict == "violated" {
				s = fmt.Sprintf("X%d", c.Ops)
			}
			if !c.Expected {
				s += "!"
			}
			fmt.Fprintf(tw, "%s\t", s)
		}
		v := "as expected"
		if !rw.Expected {
			v = "UNEXPECTED"
		}
		fmt.Fprintf(tw, "%s\t\n", v)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nok = holds, Xn = violated (shortest counterexample: n operations), ! = not the expected verdict")
	for i, inv := range spec.Invariants {
		fmt.Fprintf(stdout, "  %c  %s\n", 'A'+i, inv.ID)
	}
	for _, rw := range rows {
		if rw.Problem != "" {
			fmt.Fprintf(stdout, "UNEXPECTED %s: %s\n", rw.Variant, rw.Problem)
		}
	}
	fmt.Fprintf(stdout, "\ncounterexamples (history + HTML) under %s/\n", strings.TrimSuffix(*out, "/"))
	return code, nil
}

func runSearch(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("search", "--variant NAME [flags]", "Search one variant; stop at the first violation (shrink it, save it) or when the budget ends.", stdout)
	cfg := model.DefaultConfig()
	configFlags(fs, &cfg)
	name := fs.String("variant", "", "variant to search (see explore variants)")
	invID := fs.String("invariant", "", "only this invariant (default: every invariant)")
	mode := fs.String("mode", "random", "random or bfs")
	seed := fs.Uint64("seed", 1, "seed of the random search")
	runs := fs.Int("runs", 100000, "random runs")
	steps := fs.Int("steps", 100, "actions per random run")
	depth := fs.Int("depth", 0, "bfs: depth bound (0: none)")
	budget := fs.Duration("time", 0, "stop after this long (0: no limit)")
	unexpected := fs.Bool("unexpected", false, "only invariants the variant is not expected to violate (a proof of the expected verdict)")
	shardFlag := fs.String("shard", "", "i/n: run as job i of n independent jobs (random: runs i, i+n, ...; bfs: split at --shard-depth); merge their --json with explore merge")
	shardDepth := fs.Int("shard-depth", 4, "bfs: the depth at which --shard splits the search")
	hashCompact := fs.Bool("hash-compact", false, "bfs: store a 64-bit hash per state (the chance of a missed state is reported)")
	cores := fs.Int("cores", 0, "bfs: goroutines (0: all cores); the result does not depend on it")
	out := fs.String("out", "explore-out", "folder for the counterexample")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected argument %q (see --help)", fs.Arg(0))
	}
	v, err := spec.LookupVariant(cat, *name)
	if err != nil {
		return 0, usagef("--variant: %v", err)
	}
	stop := ^spec.Set(0)
	if *invID != "" {
		if !spec.IsInvariant(*invID) {
			return 0, usagef("--invariant: unknown invariant %q (see explore invariants)", *invID)
		}
		stop = spec.SetOf(*invID)
	}
	if *unexpected {
		e := v.ExpectAt(cfg)
		stop &^= e.Violates | e.May
	}
	if *mode != "random" && *mode != "bfs" {
		return 0, usagef("--mode %q: want random or bfs", *mode)
	}
	var shard checker.Shard
	if *shardFlag != "" {
		if _, err := fmt.Sscanf(*shardFlag, "%d/%d", &shard.I, &shard.N); err != nil || shard.N < 1 || shard.I < 0 || shard.I >= shard.N {
			return 0, usagef("--shard %q: want i/n with 0 <= i < n", *shardFlag)
		}
		shard.Depth = *shardDepth
	}
	if err := cfg.Validate(); err != nil {
		return 0, usageError{err}
	}
	if *budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *budget)
		defer cancel()
	}
	m, err := v.Machine(cfg)
	if err != nil {
		return 0, usageError{err}
	}
	show := progress(isTerminal(os.Stderr) && !*jsonOut)
	start := time.Now()
	var run *model.Run
	var inv string
	summary := map[string]any{"variant": v.Name, "mode": *mode, "config": cfg, "shard": shard, "seed": *seed, "runs": *runs}
	if *mode == "bfs" {
		res := checker.BFS(ctx, m, checker.BFSOptions{Stop: stop, MaxDepth: *depth, Symmetry: model.SymWorkers | model.SymResources,
			HashCompact: *hashCompact, Goroutines: *cores, Shard: shard,
			Progress: func(p checker.BFSProgress) {
				show("depth %d: %d/%d of the level, %d states, %.0f states/s, %s", p.Depth, p.Expanded, p.Frontier,
					p.States, p.Rate, p.Elapsed.Round(time.Second))
			}})
		show("")
		summary["bfs"] = res
		if res.Counterexample != nil {
			run, inv = res.Counterexample, res.Violation.IDs()[0]
		}
		if !*jsonOut {
			printBFS(stdout, res, v)
		}
	} else {
		found := checker.Search(ctx, m, checker.SearchOptions{Seed: *seed, Runs: *runs, Steps: *steps, Stop: stop, Shard: shard,
			Progress: func(done int) {
				if done%1000 == 0 {
					show("%d runs, %s", done, time.Since(start).Round(time.Second))
				}
			}})
		show("")
		if found != nil {
			run, inv = found.Run, found.Invariant
			summary["runSeed"], summary["runIndex"] = found.Seed, found.Index
		}
	}
	summary["elapsed"] = time.Since(start).String()
	if run == nil {
		summary["violation"] = nil
		if *jsonOut {
			return exitOK, writeJSON(stdout, summary)
		}
		fmt.Fprintf(stdout, "%s: no violation found (%s)\n", v.Name, time.Since(start).Round(time.Millisecond))
		return exitOK, nil
	}
	h := checker.Counterexample(v.Name, *seed, run, fmt.Sprintf("%s violates %s (explore search --mode %s)", v.Name, inv, *mode))
	path, err := save(filepath.Join(*out, v.Name), inv, h, cat)
	if err != nil {
		return 0, err
	}
	summary["violation"] = map[string]any{"invariant": inv, "operations": len(h.Ops()), "actions": len(run.Actions), "file": path}
	if *jsonOut {
		return exitViolation, writeJSON(stdout, summary)
	}
	fmt.Fprintf(stdout, "%s violates %s: counterexample of %d operations (%d actions) in %s (and .html)\n",
		v.Name, inv, len(h.Ops()), len(run.Actions), path)
	return exitViolation, nil
}

func printBFS(w io.Writer, res checker.BFSResult, v spec.Variant) {
	fmt.Fprintf(w, "bfs: %d states (symmetry reduction %.2fx of %d), %d transitions, depth %d, %.0f states/s, %s, %.1f bytes/state, stopped: %s, complete: %v\n",
		res.States, res.Reduction, res.Unreduced, res.Transitions, res.MaxDepth, res.Rate,
		res.Elapsed.Round(time.Millisecond), res.BytesPerState, res.Stopped, res.Complete)
	if res.HashCompact {
		fmt.Fprintf(w, "hash compaction: the chance that a state was missed is at most %.3g\n", res.OmissionBound)
	}
	if len(res.ViolatedIDs) > 0 {
		fmt.Fprintf(w, "violated on some transition: %s\n", strings.Join(res.ViolatedIDs, ", "))
	}
	fmt.Fprintf(w, "scenes reached (transitions): %v\n", res.Reached)
	if miss := res.Reached.Missing(v.Scenes()); miss != 0 && res.Complete {
		fmt.Fprintf(w, "VACUOUS: %s's verdict depends on %s, which no transition reached: a wider bound is needed\n", v.Name, miss)
	}
}
