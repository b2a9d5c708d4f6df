package checker

import (
	"context"
	"encoding/json"
	"github.com/fencecheck/fencecheck/designs"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// proofConfig is the bounded configuration on which go test proves the
// reference protocol safe by exhaustive search: three operations per
// worker (an acquire, a renew, a write: TestProofConfigHasRenewTakeover
// shows the scenario is in it), a lease that outlives a tick (ttl 2), two
// takeovers, and a coordinator restart that loses the lease table (3.2M
// states under the reductions, about 7 s on 2 cores: each grant is four
// steps since the sink is reached by messages).
var proofConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 3, InFlight: 2,
	Restarts: 1}

// faultConfigs are the configurations of the proofs with more faults,
// each hash-compact: proofConfig with one takeover and a lost message (3.4M
// states, about 6 s on 2 cores); and every kind of fault at once — a lost
// and a duplicated message, a worker crash, a coordinator restart, a forged
// token — with two operations per worker and two takeovers (5.4M states,
// about 11 s); and threeWorkers with a coordinator restart that loses the
// lease table (3.1M states, about 5 s).
var faultConfigs = []model.Config{
	{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 2, InFlight: 2, Drops: 1, Restarts: 1},
	{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 3, InFlight: 2, Drops: 1, Dups: 1, Crashes: 1,
		Restarts: 1, Forgeries: 1},
	{Workers: 3, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 3, InFlight: 2, Restarts: 1},
}

// baseConfig is small enough to search every variant many times over.
var baseConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}

// faultsConfig is baseConfig with a loss, a duplication and a crash: with
// every reduction, to depth 16 (faultsCase), levels of several batches
// with states subsumed.
var faultsConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2, Drops: 1, Dups: 1, Crashes: 1}

// faultsCase is the reference protocol on faultsConfig with every
// reduction, to depth 16.
func faultsCase(t *testing.T) searchCase {
	return searchCase{"reference, every reduction, with faults", newMachine(t, faultsConfig, model.Design{}),
		BFSOptions{Exhaustive: true, MaxDepth: 16, Symmetry: model.SymWorkers, Reduce: model.Reductions}}
}

// allInvariants is every invariant id's bit.
var allInvariants = spec.Set(1)<<len(spec.Invariants) - 1

// expected is the set a variant may violate without stopping a search.
func expected(v spec.Variant) spec.Set { return v.Expect.Allowed() }

func newMachine(t testing.TB, c model.Config, p model.Design) *model.Machine {
	t.Helper()
	m, err := model.New(c, p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// bruteForce counts the states reachable from inits and the transitions
// out of them with no encoding, no symmetry, no hashing of ours: a
// depth-first search keyed by the State value itself.
func bruteForce(m *model.Machine, inits ...model.State) (states, transitions int) {
	seen := map[model.State]struct{}{}
	var stack []model.State
	for _, s := range inits {
		if _, ok := seen[s]; !ok {
			seen[s] = struct{}{}
			stack = append(stack, s)
		}
	}
	var acts []model.Action
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		acts = m.Enabled(&s, acts[:0])
		for _, a := range acts {
			t := s
			m.Next(&t, &a)
			transitions++
			if _, ok := seen[t]; !ok {
				seen[t] = struct{}{}
				stack = append(stack, t)
			}
		}
	}
	return len(seen), transitions
}

func TestBFSCountsMatchBruteForce(t *testing.T) {
	configs := []model.Config{
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Drops: 1, Dups: 1},
		{Workers: 3, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1},
		{Workers: 2, Resources: 2, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Crashes: 1},
		{Workers: 2, Resources: 1, Replicas: 2, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Restarts: 1},
	}
	ctx := context.Background()
	for _, c := range configs {
		m := newMachine(t, c, model.Design{})
		states, trans := bruteForce(m, m.Init())
		for _, hc := range []bool{false, true} {
			r := BFS(ctx, m, BFSOptions{Exhaustive: true, HashCompact: hc})
			if !r.Complete || r.States != uint64(states) || r.Transitions != uint64(trans) || r.Unreduced != r.States {
				t.Fatalf("%+v hashCompact=%v: BFS %d states %d transitions (%s), brute force %d, %d",
					c, hc, r.States, r.Transitions, r.Stopped, states, trans)
			}
			if hc && (r.OmissionBound <= 0 || r.OmissionBound > 1e-9) {
				t.Fatalf("omission bound %g for %d states", r.OmissionBound, r.States)
			}
		}
		r := BFS(ctx, m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers})
		if r.Unreduced != uint64(states) || r.States >= uint64(states) {
			t.Fatalf("%+v: worker symmetry: %d states standing for %d, brute force %d", c, r.States, r.Unreduced, states)
		}
		t.Logf("%+v: %d states, %d transitions; %d under worker symmetry (%.2fx)", c, states, trans, r.States, r.Reduction)
		if c.Resources < 2 {
			continue
		}
		// Renaming resources too: the orbits' sizes still count the states
		// reachable from the initial state, which every renaming leaves as
		// it is (an idle worker's Res is 0 and means no resource).
		workers := r.States
		r = BFS(ctx, m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers | model.SymResources})
		if r.Unreduced != uint64(states) || r.States >= workers {
			t.Fatalf("%+v: worker and resource symmetry: %d states standing for %d, brute force %d; %d under worker symmetry",
				c, r.States, r.Unreduced, states, workers)
		}
	}
}

// sameResult reports the first difference between two searches' results
// that must not depend on how they ran.
func sameResult(t *testing.T, what string, a, b BFSResult) {
	t.Helper()
	if a.Stopped != b.Stopped || a.States != b.States || a.Transitions != b.Transitions ||
		a.Unreduced != b.Unreduced || a.Subsumed != b.Subsumed || a.Violated != b.Violated || a.Violation != b.Violation ||
		!slices.Equal(a.Levels, b.Levels) {
		t.Fatalf("%s: results differ:\n%+v\n%+v", what, a, b)
	}
	if (a.Counterexample == nil) != (b.Counterexample == nil) ||
		a.Counterexample != nil && !slices.Equal(a.Counterexample.Actions, b.Counterexample.Actions) {
		t.Fatalf("%s: counterexamples differ", what)
	}
	if len(a.Shortest) != len(b.Shortest) {
		t.Fatalf("%s: shortest counterexamples differ", what)
	}
	for i := range a.Shortest {
		if !reflect.DeepEqual(a.Shortest[i].Trace, b.Shortest[i].Trace) {
			t.Fatalf("%s: shortest %s differs", what, a.Shortest[i].Invariant)
		}
	}
}

func TestBFSSameResultForAnyGoroutines(t *testing.T) {
	gbf, err := spec.LookupVariant(designs.All(), "grant-before-fence")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    model.Config
		p    model.Design
		opt  BFSOptions
	}{
		{"reference, exhaustive", baseConfig, model.Design{}, BFSOptions{Exhaustive: true, MaxDepth: 13}},
		{"grant-before-fence, stop at fencing", baseConfig, gbf.Design, BFSOptions{Stop: spec.SetOf(spec.Fencing)}},
		{"grant-before-fence, hash compact", baseConfig, gbf.Design, BFSOptions{Stop: spec.SetOf(spec.Fencing), HashCompact: true}},
		// The budget reduction looks states up in the visited set while
		// the goroutines expand a batch.
		{"reference, every reduction, with faults", faultsConfig, model.Design{}, BFSOptions{Exhaustive: true, MaxDepth: 16,
			Reduce: model.Reductions}},
	}
	for _, tc := range cases {
		m := newMachine(t, tc.c, tc.p)
		var first BFSResult
		for i, g := range []int{1, 2, 3, 8} {
			opt := tc.opt
			opt.Goroutines, opt.Symmetry = g, model.SymWorkers
			r := BFS(context.Background(), m, opt)
			if i == 0 {
				first = r
				if slices.Max(r.Levels) <= chunkStates*batchChunks {
					t.Fatalf("%s: no level spans several batches: %v", tc.name, r.Levels)
				}
				continue
			}
			sameResult(t, tc.name, first, r)
			if r.OmissionBound != first.OmissionBound || r.Probes != first.Probes {
				t.Fatalf("%s, %d goroutines: omission bound %g, %d probes; on one %g, %d", tc.name, g,
					r.OmissionBound, r.Probes, first.OmissionBound, first.Probes)
			}
		}
		if tc.opt.Stop != 0 && (first.Counterexample == nil || first.Violation != tc.opt.Stop) {
			t.Fatalf("%s: no counterexample", tc.name)
		}
	}
}

// variantCase is a config on which a variant shows what it breaks, and a
// depth that reaches it.
func variantCase(v spec.Variant) (model.Config, int) {
	c, depth := baseConfig, 14 // each grant takes four actions: request, advance, its answer, reply
	switch v.Name {
	case "volatile-counter":
		c.Restarts = 1
	case "volatile-sink-fence":
		c.SinkRestarts = 1
	case "failover-ttl-reset":
		c.Restarts, c.TTL = 1, 2
	case "restart-no-grace":
		c.Restarts, c.TTL, depth = 1, 2, 13
	case "dedup-before-fence":
		c.Ops, depth = 3, 16
	case "worker-clock":
		c.Skew, depth = 1, 12
	case "renew-token-only":
		c.Crashes, depth = 1, 10
	case "accept-higher-token":
		c.Forgeries = 1
	case "global-fence":
		c.Resources, depth = 2, 10
	case "request-id-key":
		c.Ops, depth = 3, 16
	case "renew-at-deadline", "no-acquire-dedup":
		depth = 12
	case "renew-from-old-deadline":
		c.Ops, c.TTL, depth = 3, 2, 12
	case "holder-margin", "from-send-1":
		c.TTL, depth = 3, 15 // the holder writes only with more than its margin left
	case "lock-delay-no-fence":
		depth = 16
	}
	return c, depth
}

// randomFirst runs seeded random walks of steps actions and returns, for
// each invariant they violate, the fewest actions that led to a violation.
func randomFirst(m *model.Machine, walks, steps int) map[string]int {
	first := map[string]int{}
	var buf []model.Action
	for seed := range walks {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		s := m.Init()
		for i := range steps {
			buf = m.Enabled(&s, buf[:0])
			a, _ := pick(buf, func(n int) int { return r.IntN(n) })
			prev := s
			f := m.Next(&s, &a)
			for _, id := range spec.Judge(m, &prev, f, &s).IDs() {
				if n, ok := first[id]; !ok || i+1 < n {
					first[id] = i + 1
				}
			}
		}
	}
	return first
}

// TestBFSMatchesRandomSearch checks every built-in variant three ways at a
// depth bound that reaches its bug: the exhaustive verdict is the one the
// catalogue expects; random walks of the same length find nothing the
// exhaustive search missed and, with enough walks, everything it found; no
// random counterexample is shorter than the exhaustive one; and symmetry
// reduction changes neither the verdict nor the lengths.
func TestBFSMatchesRandomSearch(t *testing.T) {
	walks := 30000
	if testing.Short() {
		walks = 5000
	}
	for _, v := range designs.All() {
		c, depth := variantCase(v)
		m := newMachine(t, c, v.Design)
		bfs := BFS(context.Background(), m, BFSOptions{Exhaustive: true, MaxDepth: depth,
			Symmetry: model.SymWorkers | model.SymResources})
		if !v.Expect.Matches(bfs.Violated) {
			t.Errorf("%s: exhaustive search to depth %d: %s", v.Name, depth, v.Expect.Unexpected(bfs.Violated))
		}
		plain := BFS(context.Background(), m, BFSOptions{Exhaustive: true, MaxDepth: depth, HashCompact: true})
		if plain.Violated != bfs.Violated || len(plain.Shortest) != len(bfs.Shortest) {
			t.Fatalf("%s: symmetry changes the verdict: %v, without %v", v.Name, bfs.ViolatedIDs, plain.ViolatedIDs)
		}
		shortest := map[string]int{}
		for i, s := range bfs.Shortest {
			shortest[s.Invariant] = s.Length
			if plain.Shortest[i].Length != s.Length {
				t.Fatalf("%s: symmetry changes the shortest %s: %d, without %d", v.Name, s.Invariant,
					s.Length, plain.Shortest[i].Length)
			}
			if s.Length > depth || len(s.Run.Actions) != s.Length {
				t.Fatalf("%s: bad counterexample of %s", v.Name, s.Invariant)
			}
			replayed, judged, err := Replay(m, s.Run.Actions)
			if err != nil || !judged.Has(s.Invariant) || !slices.Equal(replayed.Actions, s.Run.Actions) {
				t.Fatalf("%s: the counterexample of %s does not replay: %v", v.Name, s.Invariant, err)
			}
		}
		// Walks run a little past the depth bound, which makes rare bugs
		// likelier to be hit; what they find within the bound, the
		// exhaustive search must have found, no later.
		random := randomFirst(m, walks, depth+6)
		for id, n := range random {
			if b, ok := shortest[id]; n <= depth && (!ok || b > n) {
				t.Fatalf("%s: a random walk violates %s in %d actions, the exhaustive search in %d (found: %v)",
					v.Name, id, n, b, ok)
			}
		}
		var walked spec.Set
		for id := range random {
			walked |= spec.SetOf(id)
		}
		for id := range shortest {
			// 5000 walks (-short) miss accept-higher-token's fencing.
			if _, ok := random[id]; !ok && spec.SetOf(id)&v.Expect.Violates != 0 && !testing.Short() {
				t.Errorf("%s: %d random walks of %d actions miss %s", v.Name, walks, depth+6, id)
			}
		}
		if v.Expect.AnyOf != 0 && walked&v.Expect.AnyOf == 0 && !testing.Short() {
			t.Errorf("%s: %d random walks of %d actions miss every one of %v", v.Name, walks, depth+6, v.Expect.AnyOf.IDs())
		}
		t.Logf("%-20s depth %2d: %7d states (%.1fx by symmetry), shortest %v, random %v",
			v.Name, depth, bfs.States, float64(plain.States)/float64(bfs.States), shortest, random)
	}
}

// shortProofConfig replaces proofConfig under -short.
var shortProofConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}

// proveReference searches the reference protocol exhaustively on c and
// fails unless the only invariant violated is the one it is expected to.
func proveReference(t *testing.T, c model.Config, hashCompact bool) {
	ref, err := spec.LookupVariant(designs.All(), "reference")
	if err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, c, ref.Design)
	r := BFS(context.Background(), m, BFSOptions{Stop: allInvariants &^ expected(ref), Symmetry: model.SymWorkers,
		HashCompact: hashCompact, Reduce: model.Reductions})
	if r.Counterexample != nil {
		t.Fatalf("the reference protocol violates %v in %d actions: %v", r.ViolationIDs,
			len(r.Counterexample.Actions), r.Counterexample.Actions)
	}
	if !r.Complete || !ref.Expect.Matches(r.Violated) {
		t.Fatalf("search %s, violated %v", r.Stopped, r.ViolatedIDs)
	}
	// A proof in which no stale write reaches the sink after a takeover
	// proves nothing about fencing; one whose bound allows a restart must
	// reach one.
	scenes := ref.Scenes()
	if c.Restarts > 0 {
		scenes |= model.SceneRestart
	}
	if miss := r.Reached.Missing(scenes); miss != 0 {
		t.Fatalf("vacuous proof: no transition reached %v (reached: %v)", miss, r.Reached)
	}
	t.Logf("%+v: proved in %v: %d states (%d unreduced, %.2fx by symmetry), %d transitions, depth %d, "+
		"%.0f states/s, %.1f bytes/state stored, peak heap %d MiB, omission bound %.2g",
		c, r.Elapsed, r.States, r.Unreduced, r.Reduction, r.Transitions, r.MaxDepth, r.Rate, r.BytesPerState,
		r.PeakHeapBytes>>20, r.OmissionBound)
}

// TestBFSProvesReference proves the reference protocol safe, but for its
// documented non-guarantee, on every state of proofConfig.
func TestBFSProvesReference(t *testing.T) {
	c := proofConfig
	if testing.Short() {
		c = shortProofConfig
	}
	proveReference(t, c, false)
}

// TestProofConfigHasRenewTakeover: the proof's bound holds a worker that
// renews its lease and then writes after the lease passed to another worker
// (which the sink fences), and a coordinator restart that loses the lease
// table after which the lease is taken over.
func TestProofConfigHasRenewTakeover(t *testing.T) {
	m := newMachine(t, proofConfig, model.Design{})
	grant := func(w string) []string {
		return []string{"acquire w=" + w, "deliver acquire-req w=" + w, "deliver advance-req", "deliver advance-rep",
			"deliver acquire-rep w=" + w}
	}
	expire := slices.Repeat([]string{"tick"}, proofConfig.TTL+2)
	steps := append(append(grant("0"), "renew w=0", "deliver renew-req w=0", "deliver renew-rep w=0"), expire...)
	steps = append(append(steps, grant("1")...), "write w=0", "deliver write-req w=0", "deliver write-rep w=0")
	run, err := Script(m, steps)
	if err != nil {
		t.Fatal(err)
	}
	if w := run.State.Workers[0]; w.Ops != 3 || run.State.Workers[1].Token <= w.Token || run.State.Sink.NResults != 0 {
		t.Fatalf("renew, takeover, stale write: not the scenario (worker 0 %+v, results %d)", w, run.State.Sink.NResults)
	}
	run, err = Script(m, append(append(append(grant("0"), "restart c=0"), expire...), grant("1")...))
	if err != nil {
		t.Fatal(err)
	}
	if run.State.Ghost[0].Grants != 2 || run.State.Workers[1].Token == 0 {
		t.Fatalf("no takeover after the restart: %+v", run.State.Ghost[0])
	}
}

// TestBFSProvesReferenceWithFaults does the same on faultConfigs, with
// hash compaction (not under -short).
func TestBFSProvesReferenceWithFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the proofs with faults do not run under -short")
	}
	for _, c := range faultConfigs {
		proveReference(t, c, true)
	}
}

// threeWorkers is the proof with three workers: a takeover by each of the
// others (333K states under the reductions, 5.98x by symmetry, under a
// second; with a coordinator restart it is one of faultConfigs).
var threeWorkers = model.Config{Workers: 3, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 3, InFlight: 2}

// TestBFSProvesReferenceThreeWorkers proves the reference protocol on
// threeWorkers (not under -short).
func TestBFSProvesReferenceThreeWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("the three-worker proof does not run under -short")
	}
	proveReference(t, threeWorkers, false)
}

// TestBFSRelativeTime shows what keeping deadlines relative to now buys:
// time passing alone reaches a fixed point, so the state count is finite
// although a tick is enabled in every state, and exploring longer runs (more
// ticks) finds no more states once the deepest level is reached.
func TestBFSRelativeTime(t *testing.T) {
	for _, v := range designs.All() {
		c := model.Config{Workers: 2, Resources: 2, Replicas: 2, TTL: 3, Ops: 4, Grants: 3, InFlight: 3, Drops: 1,
			Dups: 1, Crashes: 1, Restarts: 1, Forgeries: 1, Skew: 2}
		m := newMachine(t, c, v.Design)
		bound := 2*(c.TTL+2*c.Skew+2) + 2
		rng := rand.New(rand.NewPCG(7, 7))
		var buf []model.Action
		s := m.Init()
		for i := range 3000 {
			buf = m.Enabled(&s, buf[:0])
			m.Next(&s, &buf[rng.IntN(len(buf))])
			if i%10 != 0 {
				continue
			}
			q := s
			for range bound {
				m.Next(&q, &model.Action{Kind: model.Tick})
			}
			p := q
			if m.Next(&q, &model.Action{Kind: model.Tick}); p != q {
				t.Fatalf("%s: %d ticks do not reach a fixed point", v.Name, bound)
			}
		}
	}
	m := newMachine(t, model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 1},
		model.Design{})
	full := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true})
	if !full.Complete {
		t.Fatalf("search %s", full.Stopped)
	}
	for extra := range 3 {
		r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers,
			HashCompact: true, MaxDepth: full.MaxDepth + extra})
		if r.States != full.States || !slices.Equal(r.Levels, full.Levels) {
			t.Fatalf("depth %d: %d states, complete search %d", full.MaxDepth+extra, r.States, full.States)
		}
	}
	r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true,
		MaxDepth: full.MaxDepth - 1})
	if r.Stopped != StopDepth || r.States >= full.States {
		t.Fatalf("depth %d: %s with %d states, want fewer than %d", full.MaxDepth-1, r.Stopped, r.States, full.States)
	}
}

func TestBFSHashCompact(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers}
	exact := BFS(context.Background(), m, opt)
	opt.HashCompact = true
	hc := BFS(context.Background(), m, opt)
	sameResult(t, "hash compaction", exact, hc)
	if exact.OmissionBound != 0 || hc.OmissionBound <= 0 || hc.OmissionBound > 1e-6 {
		t.Fatalf("omission bounds %g exact, %g hash-compact", exact.OmissionBound, hc.OmissionBound)
	}
	if hc.BytesPerState > 64 || hc.BytesPerState >= exact.BytesPerState {
		t.Fatalf("%.1f bytes a state hash-compact, %.1f exact", hc.BytesPerState, exact.BytesPerState)
	}
	t.Logf("%d states: %.1f bytes/state exact, %.1f hash-compact (omission bound %.2g)", hc.States,
		exact.BytesPerState, hc.BytesPerState, hc.OmissionBound)
}

func TestBFSCancel(t *testing.T) {
	m := newMachine(t, baseConfig, model.Design{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls int
	r := BFS(ctx, m, BFSOptions{Exhaustive: true, Progress: func(p BFSProgress) {
		calls++
		if p.Depth == 5 {
			cancel()
		}
	}})
	var sum uint64
	for _, n := range r.Levels {
		sum += n
	}
	if r.Stopped != StopCancelled || r.Complete || len(r.Levels) != 6 || r.States != sum || calls < 5 {
		t.Fatalf("cancelled at depth 5: %s, levels %v, %d states, %d progress calls", r.Stopped, r.Levels, r.States, calls)
	}
}

func TestBFSCounterexample(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "check-then-write")
	if err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, baseConfig, v.Design)
	r := BFS(context.Background(), m, BFSOptions{Stop: spec.SetOf(spec.Fencing), Symmetry: model.SymWorkers})
	if r.Stopped != StopViolation || r.Counterexample == nil || r.Violation != spec.SetOf(spec.Fencing) {
		t.Fatalf("no fencing counterexample: %s", r.Stopped)
	}
	run := r.Counterexample
	var fencing *Shortest
	for i := range r.Shortest {
		if r.Shortest[i].Invariant == spec.Fencing {
			fencing = &r.Shortest[i]
		}
	}
	if fencing == nil || !slices.Equal(fencing.Run.Actions, run.Actions) || r.MaxDepth+1 != len(run.Actions) {
		t.Fatalf("the counterexample is not the shortest fencing violation at depth %d", r.MaxDepth+1)
	}
	h := run.History(v.Name, 0, spec.SetOf(spec.Fencing).IDs(), "bfs")
	if len(h.Events) == 0 || len(h.Header.Actions) != len(run.Actions) {
		t.Fatalf("history: %d events, %d actions", len(h.Events), len(h.Header.Actions))
	}
	for i, a := range run.Actions {
		if b, err := model.ParseAction(fencing.Trace[i]); err != nil || b != a {
			t.Fatalf("trace %q does not parse back to %v: %v", fencing.Trace[i], a, err)
		}
	}
}

// TestBFSShardsMerge splits searches into jobs, sends each job's result
// through JSON as a job would, and checks that the merge has the unsplit
// search's verdict and shortest counterexample lengths.
func TestBFSShardsMerge(t *testing.T) {
	for _, name := range []string{"reference", "grant-before-fence"} {
		v, err := spec.LookupVariant(designs.All(), name)
		if err != nil {
			t.Fatal(err)
		}
		m := newMachine(t, baseConfig, v.Design)
		opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, HashCompact: true, MaxDepth: 12}
		whole := BFS(context.Background(), m, opt)
		const n = 3
		var parts []BFSResult
		for i := range n {
			opt.Shard = Shard{I: i, N: n, Depth: 6}
			r := BFS(context.Background(), m, opt)
			if r.States >= whole.States {
				t.Fatalf("%s: shard %d searches %d states of %d: no split", name, i, r.States, whole.States)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back BFSResult
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, back)
		}
		merged := MergeResults(parts)
		if merged.Stopped != whole.Stopped || merged.Violated != whole.Violated || merged.States < whole.States ||
			len(merged.Shortest) != len(whole.Shortest) || merged.Levels[6] != whole.Levels[6] {
			t.Fatalf("%s: merged %s %v %d states, levels %v; whole %v %d states, levels %v", name, merged.Stopped,
				merged.ViolatedIDs, merged.States, merged.Levels, whole.ViolatedIDs, whole.States, whole.Levels)
		}
		for i, s := range merged.Shortest {
			if s.Invariant != whole.Shortest[i].Invariant || s.Length != whole.Shortest[i].Length {
				t.Fatalf("%s: merged shortest %s %d, whole %s %d", name, s.Invariant, s.Length,
					whole.Shortest[i].Invariant, whole.Shortest[i].Length)
			}
			if _, judged, err := ReplayTrace(m, s.Trace); err != nil || !judged.Has(s.Invariant) {
				t.Fatalf("%s: merged trace of %s does not replay: %v", name, s.Invariant, err)
			}
		}
		t.Logf("%s: %d states in one job; %d in %d jobs (%v)", name, whole.States, merged.States, n, merged.ViolatedIDs)
	}
}

// TestOmissionBoundCountsWhatEachLookupMayMatch: the omission bound is the
// sum, over the lookups made with hash compaction, of the number of stored
// states each may match wrongly (the match mass when it was made: a part's
// for a lookup that stores a state, the mean over the parts for one of a
// simulating state). So each level's share lies between its lookups times
// the mass before the level's successors and times the mass after:
// brackets taken from searches bounded at each depth. It is far below the
// bound of a table that kept 64 bits of each hash.
func TestOmissionBoundCountsWhatEachLookupMayMatch(t *testing.T) {
	m := newMachine(t, faultsConfig, model.Design{})
	const depth = 14
	opt := BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, Reduce: model.Reductions, HashCompact: true, MaxDepth: depth}
	type level struct {
		r    BFSResult
		n    [setParts]uint64
		mass [setParts]float64
		mean float64
	}
	search := func(d int) level {
		o := opt
		o.MaxDepth = d
		b := newBFS(m, o)
		lv := level{r: b.run(context.Background()), mean: b.seen.matchMass()}
		for p, v := range b.seen.parts {
			lv.n[p], lv.mass[p] = v.n, v.mass
		}
		return lv
	}
	full := search(depth)
	var lo, hi float64
	var before level // MaxDepth 0 is no bound: start from nothing
	for d := 1; d <= depth; d++ {
		after := search(d)
		for p := range setParts {
			stored := float64(after.n[p] - before.n[p])
			lo, hi = lo+stored*before.mass[p], hi+stored*after.mass[p]
		}
		probes := float64(after.r.Probes - before.r.Probes)
		lo, hi = lo+probes*before.mean, hi+probes*after.mean
		before = after
	}
	got := full.r.OmissionBound
	if before.r.Probes != full.r.Probes || full.r.Probes == 0 || hi <= lo || lo <= 0 {
		t.Fatalf("%d lookups, %d by levels; brackets [%g, %g]", full.r.Probes, before.r.Probes, lo, hi)
	}
	if got < lo*(1-1e-9) || got > hi*(1+1e-9) {
		t.Fatalf("omission bound %g, want within [%g, %g]", got, lo, hi)
	}
	n, p := float64(full.r.States), float64(full.r.Probes)
	if old := n*(n-1)/0x1p65 + p*n/0x1p64; got*4 > old {
		t.Fatalf("omission bound %g, not a quarter of a 64-bit table's %g", got, old)
	}
	t.Logf("%d states, %d lookups: omission bound %.4g in [%.4g, %.4g]; a 64-bit table's %.4g",
		full.r.States, full.r.Probes, got, lo, hi, n*(n-1)/0x1p65+p*n/0x1p64)
}
