package explore

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
	"github.com/fencecheck/fencecheck/viz"
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
	fs.IntVar(&c.Pause, "pause", c.Pause, "longest worker pause in ticks (0: any)")
	fs.IntVar(&c.Delay, "delay", c.Delay, "largest message delay in ticks (0: any, an asynchronous network)")
}

func runCampaign(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("campaign", "[flags]", "Search every built-in variant against every invariant; print the verdict matrix; write each counterexample (history + HTML) under --out.", stdout)
	opt := checker.DefaultCampaign()
	configFlags(fs, &opt.Config)
	fs.Uint64Var(&opt.Seed, "seed", opt.Seed, "seed of the search")
	fs.IntVar(&opt.Runs, "runs", opt.Runs, "random runs per variant (0 searches nothing: incomplete, exit 3, as search --runs 0)")
	fs.IntVar(&opt.Steps, "steps", opt.Steps, "actions per run (0 searches nothing: incomplete, exit 3)")
	out := fs.String("out", "explore-out", "folder for counterexamples")
	budget := fs.Duration("time", 0, "stop after this long (0: no limit); stopping before every run is done is incomplete (exit 3)")
	quiet := fs.Bool("quiet", false, "no progress reports on standard error")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if err := opt.Config.Validate(); err != nil {
		return 0, usageError{err}
	}
	if *budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *budget)
		defer cancel()
	}
	meter := newMeter(envOf(ctx), *quiet)
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
		meter.update(func(el time.Duration) string {
			return fmt.Sprintf("%d/%d variants searched; %s %d/%d runs, %s", len(finished), len(variants), v, done, total, el)
		})
	}
	// --runs 0 or --steps 0 searches nothing: no verdict, as a campaign
	// that --time stopped before its first run has none.
	nothing := nothingSearched(opt.Runs, opt.Steps)
	search := opt
	if nothing != "" {
		search.Runs = 0
	}
	results, err := checker.Campaign(ctx, variants, search)
	meter.done()
	if err != nil && ctx.Err() == nil {
		return 0, err
	}
	code := exitOK
	type cell struct {
		Invariant string `json:"invariant"`
		Verdict   string `json:"verdict"` // holds, violated, or unknown (not found by an incomplete search)
		// Expected: the verdict is known and the spec's; false for an
		// unknown one, which is no verdict, expected or not.
		Expected bool   `json:"expected"`
		Ops      int    `json:"shortestOps,omitempty"`
		File     string `json:"file,omitempty"`
	}
	type row struct {
		Variant string `json:"variant"`
		// Expected: the variant's verdict is known (its search complete)
		// and the one the spec expects. Unexpected: a verdict the spec
		// does not expect was found (exit 1). Neither: no verdict yet (an
		// incomplete search, or not searched).
		Expected   bool   `json:"expected"`
		Unexpected bool   `json:"unexpected"`
		Problem    string `json:"problem,omitempty"`
		// NotSearched says why the variant was not searched at this
		// config (a design's own limit), when it was not.
		NotSearched string `json:"notSearched,omitempty"`
		// Vacuous names the scenes the verdict depends on that none of
		// the runs of a whole budget reached: the verdict stands (as
		// expected, or unexpected when an expected violation was not
		// found, which is then why), but says nothing about them.
		Vacuous  string `json:"vacuous,omitempty"`
		Complete bool   `json:"complete"`
		Runs     int    `json:"runs"` // runs done, of the budget
		Cells    []cell `json:"cells"`
		// Reached counts the runs that reached each scene.
		Reached checker.Coverage `json:"reached"`
	}
	var rows []row
	complete, runsDone, notSearched, saved := true, 0, 0, 0
	var saveErr error // the first counterexample not saved
	for _, r := range results {
		done := r.Runs == opt.Runs && nothing == ""
		miss := r.Vacuous()
		undecided := r.Fault == nil && !done
		// The verdict of a whole budget stands even when its runs never
		// reached a scene it depends on (the contract's exit 0 for the
		// campaign is "every verdict is the one the spec expects"): the
		// row says so (Vacuous); an expected violation it did not find is
		// UNEXPECTED, and Problem says its runs never reached the scene.
		rw := row{Variant: r.Variant.Name, Expected: r.Expected(), Unexpected: !r.Expected(), Problem: r.Problem(), Runs: r.Runs,
			Complete: done, Reached: r.Reached}
		if done && miss != 0 {
			rw.Vacuous = miss.String()
		}
		runsDone += r.Runs
		switch {
		case r.NotSearched != nil:
			// No verdict, and nothing unexpected: the campaign is
			// incomplete, and says why.
			complete, rw.Expected, rw.Unexpected, rw.NotSearched = false, false, false, r.NotSearched.Error()
			notSearched++
		case r.Fault != nil:
			// The design's decision failed (Problem says where), which
			// ended its runs: its author's to mend, unexpected.
		case undecided:
			// A missing violation is no verdict yet: only the violations
			// found that the spec does not allow are.
			complete = false
			rw.Problem = r.Expect.Extra(r.Violated)
			rw.Expected, rw.Unexpected = false, rw.Problem != ""
		case r.Expect.Missing(r.Violated) != 0 && miss != 0: // Problem says why
		case r.Expect.Missing(r.Violated) != 0:
			rw.Problem = spec.JoinProblems(r.Expect.Missed(r.Violated)+fmt.Sprintf(" (in %d random runs, which can miss them: "+
				"try more --runs, another --seed, or search --variant %s --mode bfs)", opt.Runs, r.Variant.Name),
				r.Expect.Extra(r.Violated))
		}
		if rw.Unexpected {
			code = exitViolation
		}
		for _, inv := range spec.Invariants {
			found, ok := r.Expect.Verdict(inv.ID, r.Violated)
			c := cell{Invariant: inv.ID, Verdict: "holds", Expected: ok}
			if !found && undecided {
				c.Verdict, c.Expected = "unknown", false // no verdict: not the expected one, nor another
			}
			if found {
				c.Verdict = "violated"
				f := r.Finding(inv.ID)
				h := checker.Counterexample(r.Variant.Name, opt.Seed, f.Run, findingNote(r.Variant.Name, opt.Seed, f))
				c.Ops = len(h.Ops())
				path, err := save(filepath.Join(*out, r.Variant.Name), inv.ID, h, cat)
				if err != nil { // the matrix is still reported, the error after it
					saveErr = cmp.Or(saveErr, err)
				} else {
					c.File = path
					saved++
				}
			}
			rw.Cells = append(rw.Cells, c)
		}
		rows = append(rows, rw)
	}
	if code == exitOK && !complete {
		code = exitIncomplete
	}
	if *jsonOut {
		o := map[string]any{"ok": code == exitOK, "complete": complete, "seed": opt.Seed, "budget": opt.Runs, "budgetTotal": opt.Runs * len(results), "runs": runsDone, "variants": rows}
		if !complete {
			o["stopped"] = campaignStop(ctx, notSearched, nothing)
		}
		if saveErr != nil { // "ok" is the verdicts'; the files are what did not go well
			o["saveError"] = saveErr.Error()
		}
		if err := writeJSON(stdout, o); err != nil {
			return 0, err
		}
		return code, reported(code, saveErr)
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
			switch c.Verdict {
			case "violated":
				s = fmt.Sprintf("X%d", c.Ops)
			case "unknown":
				s = "?"
			}
			if !c.Expected && c.Verdict != "unknown" {
				s += "!"
			}
			fmt.Fprintf(tw, "%s\t", s)
		}
		v := "as expected"
		switch {
		case rw.Unexpected:
			v = "UNEXPECTED"
		case rw.NotSearched != "":
			v = "not searched"
		case rw.Vacuous != "":
			v = "as expected, vacuous: no run reached " + rw.Vacuous
		case !rw.Complete:
			v = fmt.Sprintf("incomplete (%d/%d runs)", rw.Runs, opt.Runs)
		}
		fmt.Fprintf(tw, "%s\t\n", v)
	}
	tw.Flush()
	fmt.Fprint(stdout, "\nok = holds, Xn = violated (shortest counterexample: n operations), ! = not the expected verdict")
	if !complete {
		fmt.Fprint(stdout, ", ? = not found so far")
	}
	fmt.Fprintln(stdout)
	for i, inv := range spec.Invariants {
		fmt.Fprintf(stdout, "  %c  %s\n", 'A'+i, inv.ID)
	}
	for _, rw := range rows {
		switch {
		case rw.Unexpected:
			fmt.Fprintf(stdout, "UNEXPECTED %s: %s\n", rw.Variant, rw.Problem)
		case rw.NotSearched != "":
			fmt.Fprintf(stdout, "NOT SEARCHED %s: %s\n", rw.Variant, rw.NotSearched)
		case rw.Vacuous != "":
			fmt.Fprintf(stdout, "VACUOUS %s: as expected, but none of the %d runs reached %s, which the verdict depends on: they say nothing about it (no proof); more --runs or --steps may reach it\n",
				rw.Variant, rw.Runs, rw.Vacuous)
		}
	}
	if saved > 0 {
		fmt.Fprintf(stdout, "\ncounterexamples (history + HTML) under %s/\n", strings.TrimSuffix(*out, "/"))
	}
	if !complete {
		fmt.Fprintf(stdout, "incomplete (%s): %d of %d runs done (%d per variant); a row marked incomplete or not searched has no verdict\n",
			campaignStop(ctx, notSearched, nothing), runsDone, opt.Runs*len(results), opt.Runs)
	}
	return code, reported(code, saveErr)
}

func runSearch(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("search", "--variant NAME [flags]", "Search one variant; stop at the first violation (shrink it, save it) or when the budget ends. --mode bfs also reports what its proof covers: the invariants judged on every transition, those excluded and why, the bounds and the reductions (docs/exhaustive.md).", stdout)
	cfg := model.DefaultConfig()
	configFlags(fs, &cfg)
	name := fs.String("variant", "", "variant to search (see explore variants)")
	invID := fs.String("invariant", "", "only this invariant (default: every invariant); with --mode bfs one judged on transitions (explore invariants)")
	mode := fs.String("mode", "random", "random or bfs")
	seed := fs.Uint64("seed", 1, "seed of the random search")
	runs := fs.Int("runs", 100000, "random runs")
	steps := fs.Int("steps", 100, "actions per random run")
	depth := fs.Int("depth", 0, "the depth bound: bfs: of the search (0: none), a bound of the proof: exhausting it is complete (exit 0); random: the actions per run, as --steps")
	budget := fs.Duration("time", 0, "stop after this long (0: no limit); stopping before the budget is spent is incomplete (exit 3)")
	unexpected := fs.Bool("unexpected", false, "only invariants the variant is not expected to violate (a proof of the expected verdict)")
	needsFlag := fs.String("needs", "", "comma-separated scenes the verdict depends on (default: the variant's, spec.Variant.Needs, by default takeover and stale-write): a search that reaches none of one is vacuous: a BFS is then no proof, incomplete (exit 3), a random search whose budget was done says so and exits 0 with no violation; a design with no fence that is safe never makes a stale write reach the sink, so give it takeover; "+sceneList)
	shardFlag := fs.String("shard", "", "i/n: run as job i of n independent jobs (random: runs i, i+n, ...; bfs: split at --shard-depth); merge their --json with explore merge")
	shardDepth := fs.Int("shard-depth", 4, "bfs: the depth at which --shard splits the search")
	hashCompact := fs.Bool("hash-compact", false, "bfs: store 64 bits of a hash per state, not the state (the chance of a missed state is reported)")
	cores := fs.Int("cores", 0, "bfs: goroutines (0: all cores), at most 256 or the machine's cores if it has more (goroutines past the cores only cost memory and time; a fixed cap keeps a command line valid on a smaller machine); the result does not depend on it")
	maxStates := fs.Uint64("max-states", 0, "bfs: stop after the level at which this many states are stored (0: none); stopping there is incomplete (exit 3)")
	memBudget := memoryFlag(fs, "bfs: a budget of Go heap: 512MiB, 8GiB, 2G, 1.5g, bytes (0: no limit; the default is half the machine's memory or cgroup limit); when the heap reaches it the frontier and the parent links go to disk (--spill-dir), then the visited set to hash compaction (--compact-at-budget), then its tables fill to 7/8 instead of doubling, then full tables are kept and smaller ones follow them, then the search stops cleanly, incomplete (exit 3); while it runs the runtime's memory limit is held at the budget and a sixteenth, so that freed memory is returned")
	compactAtBudget := fs.Bool("compact-at-budget", true, "bfs: when the exact visited set meets --max-memory (the frontier gone to disk first), switch to hash compaction (reported, with the chance of a missed state) and go on; false: stop there")
	disk := newDiskFlags(fs)
	reduce := reduceFlag(fs)
	live := livenessFlags(fs)
	quiet := fs.Bool("quiet", false, "no progress reports on standard error")
	out := fs.String("out", "explore-out", "folder for the counterexample")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *cores > maxCores {
		return 0, usagef("--cores %d: at most %d (see --help)", *cores, maxCores)
	}
	if *name == "" {
		return 0, usagef("--variant is required: name the variant to search (explore variants lists them)")
	}
	v, err := spec.LookupVariant(cat, *name)
	if err != nil {
		return 0, usagef("--variant: %v", err)
	}
	if *needsFlag != "" {
		if v.Needs, err = parseNeeds(*needsFlag); err != nil {
			return 0, err
		}
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
		stop &^= e.Allowed()
	}
	if *mode != "random" && *mode != "bfs" {
		return 0, usagef("--mode %q: want random or bfs", *mode)
	}
	if err := disk.check(*mode); err != nil {
		return 0, err
	}
	var shard checker.Shard
	if *shardFlag != "" {
		if shard, err = parseShard(*shardFlag); err != nil {
			return 0, err
		}
		shard.Depth = *shardDepth
	}
	if err := provable(*mode, stop, *invID); err != nil {
		return 0, err
	}
	if err := live.validate(*mode, shard); err != nil {
		return 0, err
	}
	if err := unread(fs, *mode, live.on); err != nil {
		return 0, err
	}
	if err := randomDepth(fs, *mode, steps, *depth); err != nil {
		return 0, err
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
	if err := live.machine(m); err != nil {
		return 0, err
	}
	meter := newMeter(envOf(ctx), *quiet)
	start := time.Now()
	var run *model.Run
	var inv string
	var fault *checker.Fault // the step at which the design's decision failed
	summary := map[string]any{"variant": v.Name, "mode": *mode, "config": cfg, "shard": shard, "seed": *seed, "needs": v.Scenes().String()}
	complete := true
	var howFar string // for a person: how far an incomplete search got
	var reached checker.Coverage
	cause := func() string { return stopCause(ctx) } // what ended an incomplete search, in words
	var causeNote string                             // and more about it, for a person
	var pf *proof                                    // what a BFS proves
	var resume, resumeNote string                    // the command that goes on from a checkpoint, in words
	if *mode == "bfs" {
		summary["maxMemory"] = uint64(*memBudget)
		opt := checker.BFSOptions{Stop: stop, MaxDepth: *depth, MaxStates: *maxStates, MaxMemory: uint64(*memBudget), CompactAtBudget: *compactAtBudget,
			Symmetry: model.SymWorkers | model.SymResources, Reduce: model.Reduction(*reduce), HashCompact: *hashCompact, Goroutines: *cores, Shard: shard, Variant: v.Name,
			Progress: func(p checker.BFSProgress) { meter.update(func(time.Duration) string { return bfsProgressLine(p) }) }}
		disk.options(&opt)
		res := runBFS(ctx, m, opt)
		meter.done()
		var ckErr *checker.CheckpointError
		if res.Stopped == checker.StopError && (errors.As(res.Err, &ckErr) || len(res.Levels) == 0) {
			return 0, usageError{res.Err} // a checkpoint refused, or a directory unusable: nothing searched
		}
		if res.Err != nil { // a file not written: the search stopped there (incomplete), or its result stands without the checkpoint
			summary["error"] = res.Err.Error()
		}
		summary["bfs"] = res
		pf = newProof(m, v, opt, res, *invID)
		if live.on {
			pf.Progress = live.check(ctx, m, v, res, opt.Symmetry, uint64(*memBudget), *seed, *out, cat)
		}
		summary["proof"] = pf
		resume = resumeCommand(fs, res, opt.Checkpoint)
		resumeNote = resumeHint(res, resume)
		reached, fault = res.Reached, res.Fault
		if res.Counterexample != nil {
			run, inv = res.Counterexample, res.Violation.IDs()[0]
		}
		complete = bfsComplete(res)
		howFar = bfsHowFar(res)
		switch res.Stopped {
		case checker.StopMemory:
			cause = func() string { return "memory budget" }
			causeNote = fmt.Sprintf(" %s reached, peak heap %s", memBudget.String(),
				checker.FormatSize(res.PeakHeapBytes))
		case checker.StopError:
			cause = func() string { return "file error: " + res.Err.Error() }
		}
		if !*jsonOut {
			printBFSStopped(stdout, res, v, cancelCause(ctx))
			printDisk(stdout, res)
			pf.print(stdout)
		}
	} else {
		res := checker.RandomSearch(ctx, m, checker.SearchOptions{Seed: *seed, Runs: *runs, Steps: *steps, Stop: stop, Shard: shard,
			Progress: func(done int) {
				meter.update(func(el time.Duration) string { return randomProgressLine(done, *runs, shard, el) })
			}})
		meter.done()
		summary["runs"], summary["budget"] = res.Runs, *runs
		if shard.N > 1 {
			summary["shardBudget"] = res.Budget
		}
		if res.Found != nil {
			run, inv = res.Found.Run, res.Found.Invariant
			summary["runSeed"], summary["runIndex"] = res.Found.Seed, res.Found.Index
		}
		if fault = res.Fault; fault != nil {
			summary["faultRun"] = res.FaultRun
		}
		complete = res.Complete
		if nothing := nothingSearched(*runs, *steps); nothing != "" {
			complete, cause = false, func() string { return nothing }
		}
		howFar = fmt.Sprintf("%d of %d runs done", res.Runs, res.Budget)
		reached = res.Reached
		summary["reached"] = res.Reached
	}
	elapsed := time.Since(start)
	summary["elapsed"] = elapsed.String()
	summary["complete"] = complete || run != nil
	if fault != nil { // no verdict holds past it
		summary["fault"], summary["complete"] = fault, false
		if *jsonOut {
			return exitViolation, writeJSON(stdout, summary)
		}
		fmt.Fprintf(stdout, "%s: the design's decision failed: %s\n", v.Name, fault.Cause)
		switch {
		case *mode == "bfs" && len(fault.Actions) > 0:
			fmt.Fprintf(stdout, "  at depth %d, taking %s (the search's states are orbit representatives: explore search --mode random gives a whole run to it)\n",
				fault.Depth, fault.Actions[0])
		case len(fault.Actions) > 0:
			fmt.Fprintf(stdout, "  the run to it (%d steps):\n", len(fault.Actions))
			for i, a := range fault.Actions {
				fmt.Fprintf(stdout, "  %4d. %s\n", i+1, a)
			}
		}
		return exitViolation, nil
	}
	liveErr := pf.saveErr() // a progress witness found and not saved
	if run == nil {
		summary["violation"] = nil
		code := exitOK
		if !complete {
			code = exitIncomplete
			summary["stopped"] = cause()
			if resume != "" {
				summary["resume"] = resume
			}
		}
		// A search that never reached what the verdict depends on shows
		// nothing. A BFS that exhausted its bound without reaching it is
		// no proof, and a proof is what it claims: incomplete (exit 3),
		// so that a proof of the reference in which no stale write after
		// a takeover is reachable fails. A random search claims no proof:
		// its exit 0 is "every run of the budget done, no violation"
		// (the contract's), which stays true; it says plainly, in words
		// and in "vacuous", that its runs never reached those scenes and
		// that more --runs are needed for the verdict to mean anything.
		vacuous := reached.Missing(v.Scenes())
		if complete && vacuous != 0 {
			summary["vacuous"] = vacuous.String()
			if *mode == "bfs" {
				code = exitIncomplete
				summary["complete"] = false // not a proof of anything
			}
		}
		code = pf.exit(code)
		unchecked := "" // why the progress check asked for gave no verdict
		if complete {
			unchecked = pf.unchecked()
		}
		if unchecked != "" { // the search is not done: not a pass
			summary["complete"], summary["stopped"] = false, "progress not checked: "+unchecked
		}
		if *jsonOut {
			if err := writeJSON(stdout, summary); err != nil {
				return 0, err
			}
			return code, reported(code, liveErr)
		}
		if !complete {
			fmt.Fprintf(stdout, "%s: incomplete: %s in %s (%s%s); no violation found so far\n", v.Name, howFar,
				elapsed.Round(time.Millisecond), cause(), causeNote)
			fmt.Fprint(stdout, resumeNote)
			return code, reported(code, liveErr)
		}
		what, fails := "no violation found", ""
		if *unexpected {
			what = "no unexpected violation found"
		}
		switch {
		case code == exitViolation: // the progress check failed (above)
			fails = ", but progress fails"
		case unchecked != "":
			what, fails = "incomplete: "+what, ", but progress was not checked (above)"
		}
		if vacuous != 0 && *mode == "bfs" {
			what = strings.TrimPrefix(what, "incomplete: ")
			fmt.Fprintf(stdout, "%s: incomplete: %s%s (%s, %s), and the search never reached %s, which the verdict depends on\n",
				v.Name, what, fails, howFar, elapsed.Round(time.Millisecond), vacuous)
			return code, reported(code, liveErr)
		}
		if vacuous != 0 {
			fmt.Fprintf(stdout, "%s: %s (%s, %s), but vacuous: no run reached %s, which the verdict depends on, so the runs say nothing about it (no proof); a larger --runs is needed for the verdict to mean anything; scenes reached: %v\n",
				v.Name, what, howFar, elapsed.Round(time.Millisecond), vacuous, reached)
			return code, reported(code, liveErr)
		}
		fmt.Fprintf(stdout, "%s: %s%s (%s, %s); scenes reached: %v\n", v.Name, what, fails, howFar,
			elapsed.Round(time.Millisecond), reached)
		return code, reported(code, liveErr)
	}
	h := checker.Counterexample(v.Name, *seed, run, fmt.Sprintf("%s violates %s (explore search --mode %s)", v.Name, inv, *mode))
	// A counterexample that cannot be saved is still reported, with its
	// trace, and the error after it (reported): found, it is not lost.
	path, saveErr := save(filepath.Join(*out, v.Name), inv, h, cat)
	found := map[string]any{"invariant": inv, "operations": len(h.Ops()), "actions": len(run.Actions), "file": path}
	if saveErr != nil {
		found["saveError"] = saveErr.Error()
	}
	summary["violation"] = found
	if *jsonOut {
		if err := writeJSON(stdout, summary); err != nil {
			return 0, err
		}
		return exitViolation, reported(exitViolation, errors.Join(saveErr, liveErr))
	}
	where := "in " + path + " (and .html)"
	if saveErr != nil {
		where = "not saved (the error follows on standard error)"
	}
	expected := "" // a violation the variant expects reads as what it is
	if !*unexpected && v.Expect.Allowed().Has(inv) {
		expected = " — expected of this variant (--unexpected searches past the violations it expects)"
	}
	fmt.Fprintf(stdout, "%s violates %s: counterexample of %d operations (%d actions) %s%s\n",
		v.Name, inv, len(h.Ops()), len(run.Actions), where, expected)
	printTrace(stdout, "counterexample", run, h, cat)
	return exitViolation, reported(exitViolation, errors.Join(saveErr, liveErr))
}

// maxCores is the most --cores takes: 256, or the machine's cores if it
// has more. Goroutines past the cores do not make a search faster (the
// result does not depend on their number) and each costs its own buffers
// and spins waiting for work: --cores 1000000 took 3.7 GB and 18 s, past
// its --time, before the search stopped. The cap is fixed rather than a
// multiple of the cores so that a command line (a --resume command the
// search printed) keeps working on a smaller machine.
var maxCores = max(256, runtime.NumCPU())

// unread refuses the flags given that this search would not read, and
// so silently ignore: with a random search those whose help begins "bfs:"
// (--depth, --max-states, --hash-compact, --shard-depth, --cores,
// --max-memory, --reduce, ...) or "--liveness:"; without --liveness those
// whose help begins "--liveness:".
func unread(fs *flag.FlagSet, mode string, liveness bool) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case mode != "bfs" && (strings.HasPrefix(f.Usage, "bfs:") || strings.HasPrefix(f.Usage, "--liveness:")):
			err = usagef("--%s is for --mode bfs", f.Name)
		case !liveness && strings.HasPrefix(f.Usage, "--liveness:"):
			err = usagef("--%s is for --liveness (with --mode bfs)", f.Name)
		}
	})
	return err
}

// randomDepth makes --depth, given to a random search, the length of its
// runs (--steps): the contract's search takes --depth in either mode.
// Both given, they must agree.
func randomDepth(fs *flag.FlagSet, mode string, steps *int, depth int) error {
	if mode == "bfs" {
		return nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case !given["depth"]:
	case given["steps"] && *steps != depth:
		return usagef("--depth %d and --steps %d: a random search's --depth is the actions per run, its --steps: give one", depth, *steps)
	case depth > maxSteps:
		return usagef("--depth %d: at most %d for a random search (the actions per run, as --steps)", depth, maxSteps)
	default:
		*steps = depth
	}
	return nil
}

// nothingSearched says why a random search of runs runs of steps actions
// searches nothing (--runs 0, --steps 0), or is "": such a search has no
// verdict, as one stopped before its first run has none.
func nothingSearched(runs, steps int) string {
	switch {
	case runs == 0:
		return "nothing searched: --runs 0"
	case steps == 0:
		return "nothing searched: --steps 0, runs of no action"
	}
	return ""
}

// findingNote is the note of a campaign's counterexample: which run was
// shrunk to it, and which first violated the invariant when that is
// another (whose states alone showed it).
func findingNote(variant string, seed uint64, f *checker.Finding) string {
	how := "shrunk"
	if f.WithoutDups {
		how = "without its duplicated messages, shrunk"
	}
	first := ""
	if f.FirstRun != f.Shrunk {
		first = fmt.Sprintf("; first violated in run %d", f.FirstRun)
	}
	return fmt.Sprintf("%s violates %s (campaign seed %d, run %d %s%s)", variant, f.Invariant, seed, f.Shrunk, how, first)
}

// campaignStop says why a campaign is incomplete: it searched nothing (its
// budget, in nothing, when not ""), its context stopped it, or
// notSearched variants were not searched at the campaign's config.
func campaignStop(ctx context.Context, notSearched int, nothing string) string {
	if nothing != "" || ctx.Err() != nil {
		return cmp.Or(nothing, stopCause(ctx))
	}
	switch notSearched {
	case 0:
		return "stopped early"
	case 1:
		return "a variant not searched at this config"
	}
	return fmt.Sprintf("%d variants not searched at this config", notSearched)
}

// stopCause says what ended a search early.
func stopCause(ctx context.Context) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "time limit"
	case ctx.Err() != nil:
		return "interrupted"
	}
	return "state limit"
}

// cancelCause is what cancelled a search in words (stopCause: "time
// limit", "interrupted"), or "" while ctx is not done.
func cancelCause(ctx context.Context) string {
	if ctx.Err() == nil {
		return ""
	}
	return stopCause(ctx)
}

// stopMeaning says in words why a BFS ended.
var stopMeaning = map[string]string{
	checker.StopComplete:  "every reachable state explored",
	checker.StopDepth:     "every state within the depth bound explored",
	checker.StopViolation: "at the first level with a violation",
	checker.StopMaxStates: "at the state limit: incomplete",
	checker.StopCancelled: "stopped early: incomplete",
	checker.StopMemory:    "at the memory budget (--max-memory): incomplete",
	checker.StopFault:     "the design's decision failed: no verdict",
	checker.StopError:     "a checkpoint or spill file could not be written or read: incomplete",
}

// bfsComplete reports whether a BFS with no violation did what it was
// asked: it exhausted the state space within the bounds (--depth is one
// of them). Stopping at --max-states, at the memory budget
// (--max-memory) or on a cancellation is incomplete.
func bfsComplete(res checker.BFSResult) bool {
	switch res.Stopped {
	case checker.StopComplete, checker.StopDepth, checker.StopViolation:
		return true
	}
	return false
}

// bfsHowFar says how far a BFS got: states, depth, and for one that
// stopped early the frontier it left.
func bfsHowFar(res checker.BFSResult) string {
	if bfsComplete(res) {
		return fmt.Sprintf("%d states, depth %d", res.States, res.MaxDepth)
	}
	var frontier uint64
	if len(res.Levels) > 0 {
		frontier = res.Levels[len(res.Levels)-1]
	}
	return fmt.Sprintf("%d states, depth %d, frontier %d states", res.States, res.MaxDepth, frontier)
}

// randomProgressLine is a random search's progress report.
func randomProgressLine(done, runs int, shard checker.Shard, el time.Duration) string {
	budget := runs
	if shard.N > 1 && runs > shard.I {
		budget = (runs - shard.I + shard.N - 1) / shard.N
	}
	pct := 0.0
	if budget > 0 {
		pct = 100 * float64(done) / float64(budget)
	}
	return fmt.Sprintf("%d/%d runs (%.0f%%), %s", done, budget, pct, el)
}

// bfsProgressLine is a BFS's progress report; with a memory budget, the
// heap against it and what the search did at the budget so far.
func bfsProgressLine(p checker.BFSProgress) string {
	var line string
	if p.Marked < p.Frontier {
		line = fmt.Sprintf("depth %d: marking subsumed states, %d/%d of the level, %d states, %.0f states/s, %s", p.Depth,
			p.Marked, p.Frontier, p.States, p.Rate, p.Elapsed.Round(time.Second))
	} else {
		line = fmt.Sprintf("depth %d: %d/%d of the level, %d states, %.0f states/s, %s", p.Depth, min(p.Expanded, p.Frontier),
			p.Frontier, p.States, p.Rate, p.Elapsed.Round(time.Second))
	}
	if p.MaxMemory > 0 {
		line += fmt.Sprintf(", heap %s of %s", checker.FormatSize(p.Heap), checker.FormatSize(p.MaxMemory))
	}
	if p.OnDisk {
		line += ", levels on disk"
	}
	if p.CompactedAt > 0 {
		line += fmt.Sprintf(", hash-compact from %d states", p.CompactedAt)
	}
	if p.DenseAt > 0 {
		line += fmt.Sprintf(", tables filled to 7/8 from %d states", p.DenseAt)
	}
	if p.LayeredAt > 0 {
		line += fmt.Sprintf(", tables layered from %d states", p.LayeredAt)
	}
	if pr := p.Projection; pr.Made {
		line += ", projected " + statesRange(pr) + " states in all"
	}
	return line
}

// statesRange is a projection's range of states, "1.2 million to 1.5 million".
func statesRange(p checker.Projection) string {
	return checker.FormatCount(float64(p.States)) + " to " + checker.FormatCount(float64(p.StatesHigh))
}

// projectionLine says what a search that stopped early projects of its
// total (checker.Project), the time and the memory that would take at its
// rate and bytes a state stored so far, and what that is worth.
func projectionLine(res checker.BFSResult) string {
	p := res.Projection
	if !p.Made {
		return "projection: none: " + p.Why
	}
	left := func(total uint64) time.Duration {
		d := time.Duration(float64(total-min(total, res.States)) / max(res.Rate, 1e-9) * float64(time.Second))
		if d >= time.Minute {
			return d.Round(time.Minute)
		}
		return max(d.Round(time.Second), time.Second)
	}
	return fmt.Sprintf("projection: %s states in all, to depth %d to %d; at this rate %s to %s more, and at %.1f bytes a state %s to %s stored (a fit of the last levels' sizes, not a bound: the totals of the completed searches it was tested on were within %gx of its range)",
		statesRange(*p), p.Depth, p.DepthHigh, left(p.States), left(p.StatesHigh),
		res.BytesPerState, checker.FormatSize(uint64(float64(p.States)*res.BytesPerState)),
		checker.FormatSize(uint64(float64(p.StatesHigh)*res.BytesPerState)), checker.ProjectionSlack)
}

func printBFS(w io.Writer, res checker.BFSResult, v spec.Variant) { printBFSStopped(w, res, v, "") }

// printBFSStopped is printBFS naming what cancelled the search, cause
// (cancelCause: "time limit", "interrupted"), where it would say
// "cancelled"; "" keeps that.
func printBFSStopped(w io.Writer, res checker.BFSResult, v spec.Variant, cause string) {
	stopped := func(s string) string {
		if s == checker.StopCancelled && cause != "" {
			return cause
		}
		return s
	}
	fmt.Fprintf(w, "bfs: %d states (symmetry reduction %.2fx of %d), %d transitions, depth %d, %.0f states/s, %s, %.1f bytes/state, stopped: %s (%s)\n",
		res.States, res.Reduction, res.Unreduced, res.Transitions, res.MaxDepth, res.Rate,
		res.Elapsed.Round(time.Millisecond), res.BytesPerState, stopped(res.Stopped), stopMeaning[res.Stopped])
	if res.Reductions != "" {
		fmt.Fprintf(w, "reductions: %s (the same verdicts and shortest counterexamples from fewer states)\n", res.Reductions)
	}
	if a := res.Again; a != nil {
		const unsure = "the counterexamples found are runs of the machine, not known to be the shortest"
		if a.States == 0 { // cancelled before it began: nothing stored, not even the initial state
			fmt.Fprintf(w, "not searched again without dead-delivered for the shortest counterexamples: stopped (%s) before it began; %s\n", stopped(a.Stopped), unsure)
		} else {
			end := " before its end; " + unsure
			if a.Replaced {
				end = " (the violations and counterexamples reported are its)"
			}
			fmt.Fprintf(w, "searched again without dead-delivered, to depth %d, for the shortest counterexamples: %d states, %d transitions, %s, stopped: %s%s\n",
				a.Depth, a.States, a.Transitions, a.Elapsed.Round(time.Millisecond), stopped(a.Stopped), end)
		}
	}
	if res.Subsumed > 0 {
		fmt.Fprintf(w, "subsumed: %d of the states stored were not expanded: a state stored no deeper simulates each\n", res.Subsumed)
	}
	if res.CompactedAt > 0 {
		fmt.Fprintf(w, "switched to hash compaction at the memory budget, after %d states\n", res.CompactedAt)
	}
	if res.DenseAt > 0 {
		fmt.Fprintf(w, "filled the visited set's tables to 7/8 at the memory budget, after %d states, rather than double them\n", res.DenseAt)
	}
	if res.LayeredAt > 0 {
		fmt.Fprintf(w, "kept the visited set's full tables at the memory budget and stored the states that followed in smaller ones, after %d states\n", res.LayeredAt)
	}
	if res.HashCompact {
		fmt.Fprintf(w, "hash compaction: the chance that a state was missed is at most %.3g\n", res.OmissionBound)
	}
	if res.Projection != nil {
		fmt.Fprintln(w, projectionLine(res))
	}
	if res.Stopped == checker.StopMemory {
		fmt.Fprintf(w, "memory: peak heap %s, %s stored; --hash-compact stores less a state, --shard splits the search\n",
			checker.FormatSize(res.PeakHeapBytes), checker.FormatSize(res.StoredBytes))
	}
	if len(res.ViolatedIDs) > 0 {
		fmt.Fprintf(w, "violated on some transition: %s\n", strings.Join(res.ViolatedIDs, ", "))
	}
	fmt.Fprintf(w, "scenes reached (transitions): %v\n", res.Reached)
	if miss := res.Reached.Missing(v.Scenes()); miss != 0 && res.Complete {
		fmt.Fprintf(w, "vacuous: %s's verdict depends on %s, which no transition reached: a wider bound is needed, or, if the design cannot reach it when safe (a design with no fence never lands a stale write), --needs names what it depends on\n", v.Name, miss)
	}
}

// printTrace prints a run for a person (see viz.Trace), headed by what it
// is: a counterexample, or a progress witness.
func printTrace(w io.Writer, what string, run *model.Run, h *history.History, cat []spec.Variant) {
	fmt.Fprintf(w, "\n%s, step by step (%d steps, %d events):\n", what, len(run.Actions), len(h.Events))
	viz.Trace(w, run, checker.Highlights(h, cat))
}

// reduceFlag registers --reduce: every reduction by default.
func reduceFlag(fs *flag.FlagSet) *reduceValue {
	r := reduceValue(model.Reductions)
	fs.Var(&r, "reduce", "bfs: the model's reductions: leave out the steps they strike (pauses under an asynchronous network, losing or duplicating a reply nobody waits for, reads the design ignores), store states with the clocks nothing reads any more cut (timers) and the messages nobody will take delivered (dead-delivered: a search that finds a violation searches again without it, to the counterexamples' length, for the shortest), and leave out a state when the same state with a fault less spent (budgets) or requests a tick younger (ages) is stored: the same verdicts and shortest counterexamples from fewer states; true (all), false (the full search), or a list of pauses, dead-replies, reads, timers, budgets, ages, dead-delivered")
	return &r
}

// reduceValue is a --reduce value: true, false, or reduction names.
type reduceValue model.Reduction

func (r *reduceValue) String() string {
	switch model.Reduction(*r) {
	case model.Reductions:
		return "true"
	case 0:
		return "false"
	}
	return model.Reduction(*r).String()
}

func (r *reduceValue) Set(s string) error {
	switch s {
	case "true":
		*r = reduceValue(model.Reductions)
	case "false":
		*r = 0
	default:
		v, err := model.ParseReduction(s)
		if err != nil {
			return err
		}
		*r = reduceValue(v)
	}
	return nil
}

// sizeFlag is a --max-memory value: a size in bytes (checker.ParseSize).
type sizeFlag uint64

func (f *sizeFlag) String() string { return checker.FormatSize(uint64(*f)) }

func (f *sizeFlag) Set(s string) error {
	n, err := checker.ParseSize(s)
	*f = sizeFlag(n)
	return err
}

// runBFS is checker.BFS with the Go runtime's memory limit held at
// memoryLimit(opt.MaxMemory), when a budget is set and that is lower than
// the limit in force (GOMEMLIMIT), and restored after. The budget BFS
// keeps is of heap in use; heap the collector has freed but not yet
// returned to the system stays resident too, and without the limit the
// resident set of a long search went up to 36% over its budget
// (BENCHMARKS.md). Under the limit the runtime returns freed pages to
// keep below it.
func runBFS(ctx context.Context, m *model.Machine, opt checker.BFSOptions) checker.BFSResult {
	defer holdMemoryLimit(opt.MaxMemory)()
	return checker.BFS(ctx, m, opt)
}

// holdMemoryLimit sets the Go runtime's memory limit to
// memoryLimit(budget), when a budget is set and that is lower than the
// limit in force, and returns the function that restores it.
func holdMemoryLimit(budget uint64) (restore func()) {
	if limit := memoryLimit(budget); budget > 0 && limit < debug.SetMemoryLimit(-1) {
		old := debug.SetMemoryLimit(limit)
		return func() { debug.SetMemoryLimit(old) }
	}
	return func() {}
}

// memoryLimit is the runtime memory limit runBFS holds for a heap budget:
// the budget and a sixteenth. The search keeps its heap under the budget;
// the sixteenth is room for the runtime's own memory and freed pages not
// yet returned. A limit at the budget itself left the collector running
// almost without pause once the live heap neared it: a proof whose last
// levels did took 24% longer, where with the sixteenth it took no longer
// than with no limit (BENCHMARKS.md).
func memoryLimit(budget uint64) int64 {
	if budget >= math.MaxInt64/17*16 {
		return math.MaxInt64 // none: the sum would not fit
	}
	return int64(budget + budget/16)
}

// memoryFlag registers --max-memory, a heap budget defaulting to
// checker.DefaultMemoryBudget.
func memoryFlag(fs *flag.FlagSet, usage string) *sizeFlag {
	f := sizeFlag(checker.DefaultMemoryBudget())
	fs.Var(&f, "max-memory", usage)
	return &f
}
