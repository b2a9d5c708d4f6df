// Command fencebench runs fencecheck's exhaustive BFS (checker.BFS) on the
// configuration of bench/fencing.pml, so that its figures can be set beside
// Spin's (bench/run.sh). It prints one line per run, key=value, for the
// script to parse:
//
//	fencebench -ops 1 -runs exact:1,exact:0,hc:1,hc:0
//
// A run is mode:goroutines, mode exact (the states themselves are stored)
// or hc (hash compaction); goroutines 0 means GOMAXPROCS.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

func main() {
	c := model.Config{Replicas: 1}
	flag.IntVar(&c.Workers, "workers", 2, "workers (W)")
	flag.IntVar(&c.Resources, "resources", 1, "resources (R)")
	flag.IntVar(&c.TTL, "ttl", 2, "lease length in ticks (TTL)")
	flag.IntVar(&c.Ops, "ops", 1, "operations per worker (OPS)")
	flag.IntVar(&c.Grants, "grants", 2, "grants per resource (GRANTS)")
	flag.IntVar(&c.InFlight, "inflight", 2, "messages in flight (INFLIGHT)")
	flag.IntVar(&c.Drops, "drops", 1, "message losses (DROPS)")
	flag.IntVar(&c.Dups, "dups", 1, "message duplications (DUPS)")
	flag.IntVar(&c.Crashes, "crashes", 1, "worker crash-restarts (CRASHES)")
	flag.IntVar(&c.Restarts, "restarts", 1, "coordinator restarts (RESTARTS)")
	flag.IntVar(&c.Forgeries, "forgeries", 1, "forged writes (FORGERIES)")
	flag.IntVar(&c.SinkRestarts, "sink-restarts", 0, "sink crash-restarts (SINKRESTARTS)")
	flag.IntVar(&c.Skew, "skew", 0, "largest worker clock offset in ticks (SKEW)")
	variant := flag.String("variant", "reference", "the design: a name of explore variants")
	runs := flag.String("runs", "exact:1,exact:0,hc:1,hc:0", "comma-separated mode:goroutines")
	sym := flag.Bool("symmetry", false, "worker and resource symmetry reduction (Spin has none here)")
	reduce := flag.Bool("reduce", false, "the model's reductions (model.Reductions: pauses, dead replies, reads, timers, budgets, ages)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	flag.Parse()

	v, err := spec.LookupVariant(designs.All(), *variant)
	if err != nil {
		fail(err)
	}
	m, err := v.Machine(c)
	if err != nil {
		fail(err)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	// absolute-validity is not a guarantee of the reference protocol (the
	// Promela model does not assert it): every other invariant stops.
	stop := spec.Set(0)
	for _, inv := range spec.Invariants {
		if inv.ID != spec.AbsoluteValidity && inv.ID != spec.LinearizableSink {
			stop |= spec.SetOf(inv.ID)
		}
	}
	for _, run := range strings.Split(*runs, ",") {
		mode, gs, ok := strings.Cut(run, ":")
		g, err := strconv.Atoi(gs)
		if !ok || err != nil || (mode != "exact" && mode != "hc") {
			fail(fmt.Errorf("bad run %q: want exact:N or hc:N", run))
		}
		opt := checker.BFSOptions{Stop: stop, HashCompact: mode == "hc", Goroutines: g}
		if *sym {
			opt.Symmetry = model.SymWorkers | model.SymResources
		}
		if *reduce {
			opt.Reduce = model.Reductions
		}
		if g == 0 {
			g = runtime.GOMAXPROCS(0)
		}
		runtime.GC()
		start := time.Now()
		res := checker.BFS(context.Background(), m, opt)
		wall := time.Since(start)
		fmt.Printf("run=%s goroutines=%d stopped=%s states=%d transitions=%d depth=%d seconds=%.3f "+
			"rate=%.0f stored_bytes=%d bytes_per_state=%.1f frontier_bytes=%d peak_heap=%d violation=%s violated=%s\n",
			mode, g, res.Stopped, res.States, res.Transitions, res.MaxDepth, wall.Seconds(),
			float64(res.States)/wall.Seconds(), res.StoredBytes, res.BytesPerState, res.FrontierBytes,
			res.PeakHeapBytes, dash(res.ViolationIDs), dash(res.ViolatedIDs))
	}
}

func dash(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, "+")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fencebench:", err)
	os.Exit(2)
}
