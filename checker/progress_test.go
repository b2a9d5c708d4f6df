package checker

import (
	"context"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/internal/stuck"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// progressConfig is the small bound of the progress tests, without
// faults (22,136 states; the bound with ops 2, grants 2 and a drop has
// more than 400,000 without symmetry, beyond these tests' budget).
var progressConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 2}

// progressTiny is the bound of the cross-checks: one message in flight
// and a drop.
var progressTiny = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Drops: 1}

// progressFaults is progressTiny with a crash and a forgery, for the
// check that the extended machine takes the small one's states.
var progressFaults = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1,
	Drops: 1, Crashes: 1, Forgeries: 1}

// progressStuck is the bound of the designs that cannot commit: a stuck
// state's whole fault-free closure in the extended machine is explored,
// which even here is large (2,256 states, one message in flight).
var progressStuck = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1}

// progressLimit keeps every search of these tests small.
const progressLimit = 400_000

// TestProgressReference: the reference design commits from every state
// reachable without faults.
func TestProgressReference(t *testing.T) {
	m := newMachine(t, progressConfig, model.Design{})
	r := Progress(context.Background(), m, ProgressOptions{MaxStates: progressLimit})
	t.Logf("reference: %d states, %d extended, %d stuck", r.States, r.Extended, r.Stuck)
	if r.Err != nil || !r.Complete {
		t.Fatalf("incomplete: %+v", r)
	}
	if r.Stuck != 0 || r.Witness != nil {
		t.Fatalf("%d stuck states, witness %v", r.Stuck, r.Witness)
	}
	if c := r.ExtendedConfig; c.Ops != 3 || c.Grants != 3 || c.Workers != 2 || c.InFlight != 2 {
		t.Fatalf("extended config %+v, want ops and grants raised by the default 2", c)
	}
}

// replayStuck re-executes a witness from the initial state, every action
// enabled, and checks that its last state has no committed task result and
// that no fault-free continuation found by a plain search commits.
func replayStuck(t *testing.T, m *model.Machine, w []model.Action, extra int) {
	t.Helper()
	run := model.NewRun(m)
	for i, a := range w {
		if !m.IsEnabled(&run.State, a) {
			t.Fatalf("witness action %d (%v) is not enabled", i, a)
		}
		run.Do(a)
	}
	if committed(m, &run.State) {
		t.Fatalf("witness ends in a committed state")
	}
	big, err := extend(m, extra)
	if err != nil {
		t.Fatal(err)
	}
	if ok, complete := bruteCommits(big, run.State, progressLimit); !complete || ok {
		t.Fatalf("witness's last state: commits %v (search complete %v)", ok, complete)
	}
}

// TestProgressRejectAll: a sink that rejects every write is stuck
// everywhere, the initial state included.
func TestProgressRejectAll(t *testing.T) {
	// Extra 1: with 2, the closure of these never-committing states
	// exceeds the tests' budget; a sink that rejects everything commits
	// under no budget.
	m := newMachine(t, progressStuck, stuck.RejectAll)
	r := Progress(context.Background(), m, ProgressOptions{Extra: 1, MaxStates: progressLimit})
	t.Logf("reject-all: %d states, %d extended, %d stuck, witness of %d actions", r.States, r.Extended, r.Stuck, len(r.Witness))
	if r.Err != nil || !r.Complete {
		t.Fatalf("incomplete: %+v", r)
	}
	if r.Stuck == 0 || r.Stuck != r.States || r.Witness == nil {
		t.Fatalf("%d of %d states stuck, witness %v", r.Stuck, r.States, r.Witness)
	}
	replayStuck(t, m, r.Witness, 1)
}

// TestProgressHeldWriteIsAPause: a write held between its worker's check
// and its send is a pause, a fault, so a design that commits only through
// one is stuck in the initial state; only the states where a write is
// already held can commit (resuming it is not a fault).
func TestProgressHeldWriteIsAPause(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 1, Grants: 1, InFlight: 1, Delay: 1}
	m := newMachine(t, c, stuck.OnlyWhenHeld)
	r := Progress(context.Background(), m, ProgressOptions{Extra: 1, MaxStates: progressLimit})
	t.Logf("%d of %d states stuck", r.Stuck, r.States)
	if r.Err != nil || !r.Complete || r.Stuck == 0 || r.Witness == nil || len(r.Witness) != 0 {
		t.Fatalf("%d of %d states stuck, witness %v (err %v, complete %v); want the initial state stuck",
			r.Stuck, r.States, r.Witness, r.Err, r.Complete)
	}
}

// TestProgressWitnessDeep: a design stuck only after a takeover gets a
// non-empty shortest witness that replays to a stuck state.
func TestProgressWitnessDeep(t *testing.T) {
	m := newMachine(t, progressStuck, stuck.FirstGrantOnly)
	r := Progress(context.Background(), m, ProgressOptions{MaxStates: progressLimit})
	t.Logf("first-grant-only: %d states, %d extended, %d stuck, witness %v", r.States, r.Extended, r.Stuck, r.Witness)
	if r.Err != nil || !r.Complete {
		t.Fatalf("incomplete: %+v", r)
	}
	if r.Stuck == 0 || r.Stuck == r.States || len(r.Witness) == 0 {
		t.Fatalf("%d of %d states stuck, witness %v", r.Stuck, r.States, r.Witness)
	}
	replayStuck(t, m, r.Witness, 2)
	// Shortest: no shorter prefix of the run ends in a stuck state (every
	// prefix's state is one the check judged able to commit).
	_, g := progress(context.Background(), m, ProgressOptions{MaxStates: progressLimit})
	idx := map[model.State]int{}
	for i, s := range g.states() {
		idx[s] = i
	}
	run := model.NewRun(m)
	for i, a := range r.Witness {
		if j := idx[run.State]; !g.ok[j] {
			t.Fatalf("prefix of %d actions already stuck", i)
		}
		run.Do(a)
	}
}

// faultFree is the whitelist of the brute-force search, written apart from
// isFault; a held write, a pause, is left out too (bruteReaches).
var faultFree = map[model.Kind]bool{model.Tick: true, model.Acquire: true, model.Retry: true, model.Renew: true,
	model.Release: true, model.Write: true, model.Read: true, model.Timeout: true, model.Deliver: true, model.Resume: true}

// honestResults reports whether every task of m has a result in s that
// carries its own grant's token (the ghost's), as committed does.
func honestResults(m *model.Machine, s *model.State) bool {
	n := 0
	for _, x := range s.Sink.Results[:s.Sink.NResults] {
		if g := &s.Ghost[x.Res]; x.Grant >= 1 && x.Grant <= g.Grants && g.Grant[x.Grant].Token == x.Token {
			n |= 1 << x.Res
		}
	}
	return n == 1<<m.Config.Resources-1
}

// anyResults reports whether every task of m has a result in s, forged
// or not.
func anyResults(m *model.Machine, s *model.State) bool {
	n := 0
	for _, x := range s.Sink.Results[:s.Sink.NResults] {
		n |= 1 << x.Res
	}
	return n == 1<<m.Config.Resources-1
}

// bruteCommits searches big's fault-free graph from s for a state where
// every task has an honest result (honestResults); complete is false if
// it stored limit states.
func bruteCommits(big *model.Machine, s model.State, limit int) (ok, complete bool) {
	return bruteReaches(big, s, limit, honestResults)
}

// bruteReaches searches big's fault-free graph from s for a state where
// goal holds; complete is false if it stored limit states.
func bruteReaches(big *model.Machine, s model.State, limit int, goal func(*model.Machine, *model.State) bool) (ok, complete bool) {
	seen := map[model.State]bool{s: true}
	stack := []model.State{s}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if goal(big, &u) {
			return true, true
		}
		for _, a := range big.Enabled(&u, nil) {
			if !faultFree[a.Kind] || a.Hold {
				continue
			}
			v := u
			big.Next(&v, &a)
			if !seen[v] {
				if len(seen) >= limit {
					return false, false
				}
				seen[v] = true
				stack = append(stack, v)
			}
		}
	}
	return false, true
}

// TestProgressBruteForce: on a tiny bound with every fault kind, the
// fixpoint's verdict on a sample of reachable states agrees with a plain
// search from each, in an extended machine built apart (and, with a delay
// bound, for a design that commits only through a held write).
func TestProgressBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     model.Design
		extra int
		delay int
	}{{"reference", model.Design{}, 2, 0}, {"reject-all", stuck.RejectAll, 1, 0}, {"first-grant-only", stuck.FirstGrantOnly, 2, 0},
		{"only-when-held", stuck.OnlyWhenHeld, 1, 1}} {
		c := progressStuck
		c.Delay = tc.delay
		m := newMachine(t, c, tc.d)
		r, g := progress(context.Background(), m, ProgressOptions{Extra: tc.extra, MaxStates: progressLimit})
		if r.Err != nil || !r.Complete {
			t.Fatalf("%s: incomplete: %+v", tc.name, r)
		}
		c.Ops, c.Grants = c.Ops+tc.extra, c.Grants+tc.extra
		big := newMachine(t, c, tc.d)
		reach := g.states()
		step := max(1, len(reach)/300)
		var agree, nStuck int
		for i := 0; i < len(reach); i += step {
			ok, complete := bruteCommits(big, reach[i], progressLimit)
			if !complete {
				t.Fatalf("%s: brute-force search from state %d incomplete", tc.name, i)
			}
			if ok != g.ok[i] {
				t.Fatalf("%s: state %d: fixpoint says %v, brute force %v", tc.name, i, g.ok[i], ok)
			}
			agree++
			if !ok {
				nStuck++
			}
		}
		t.Logf("%s: %d states (%d stuck), %d extended; %d sampled agree (%d stuck)", tc.name, r.States, r.Stuck, r.Extended, agree, nStuck)
	}
}

// TestCanCommit: CanCommit's verdict on a sample of the reachable states
// of the reference with a lost message, with Extra 1, 2 and 3, under
// worker symmetry, agrees with a plain search from each in an extended
// machine built apart; states stuck with Extra 1 that commit with 2 (the
// budget's, not the design's) are among them. With a state limit too
// small it stops and says so.
func TestCanCommit(t *testing.T) {
	ctx := context.Background()
	m := newMachine(t, progressTiny, model.Design{})
	r, g := progress(ctx, m, ProgressOptions{Extra: 1, MaxStates: progressLimit})
	if g == nil {
		t.Fatalf("incomplete: %+v", r)
	}
	reach := g.states()
	var nStuck [4]int // by extra
	for i := 0; i < len(reach); i += max(1, len(reach)/150) {
		for extra := 1; extra <= 3; extra++ {
			c := progressTiny
			c.Ops, c.Grants = c.Ops+extra, c.Grants+extra
			want, complete := bruteCommits(newMachine(t, c, model.Design{}), reach[i], progressLimit)
			got, stopped, err := CanCommit(ctx, m, &reach[i], ProgressOptions{Extra: extra, MaxStates: progressLimit, Symmetry: model.SymWorkers})
			if err != nil || stopped != "" || !complete || got != want {
				t.Fatalf("state %d, extra %d: CanCommit %v (stopped %q, %v), brute force %v (complete %v)", i, extra, got, stopped, err, want, complete)
			}
			if extra == 1 && got != g.ok[i] {
				t.Fatalf("state %d: CanCommit %v, Progress %v", i, got, g.ok[i])
			}
			if !got {
				nStuck[extra]++
			}
		}
	}
	// More budget only adds runs: fewer stuck with 2 means some stuck with 1 commit with 2.
	if nStuck[1] == 0 || nStuck[2] >= nStuck[1] {
		t.Fatalf("stuck sampled states with extra 1, 2, 3: %v: want some with 1 and fewer with 2", nStuck[1:])
	}
	if _, stopped, err := CanCommit(ctx, m, &reach[len(reach)-1], ProgressOptions{Extra: 3, MaxStates: 1}); stopped != StopMaxStates || err != nil {
		t.Fatalf("a limit of one state: stopped %q, %v", stopped, err)
	}
}

// TestForgedResultsDoNotCommit: a task is committed by a result its holder
// wrote with its own grant's token, not by a forger's. With one message in
// flight, a sink that takes any token at least its fence
// (accept-higher-token) is stuck once a forged write is in flight: it must
// be delivered to free the network, and then its result holds the task,
// against which every honest write conflicts; counting the forged result
// as a commit would say progress holds. The reference, whose sink takes
// only the fence's token, commits from every state at the same bound.
func TestForgedResultsDoNotCommit(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 1, InFlight: 1, Forgeries: 1}
	v, err := spec.LookupVariant(designs.All(), "accept-higher-token")
	if err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, c, v.Design)
	r := Progress(context.Background(), m, ProgressOptions{MaxStates: progressLimit, Symmetry: model.SymWorkers})
	if !r.Complete || r.Stuck == 0 || len(r.Witness) == 0 || r.Witness[len(r.Witness)-1].Kind != model.Forge {
		t.Fatalf("want stuck states, the witness ending with a forgery: %+v", r)
	}
	run := model.NewRun(m)
	for _, a := range r.Witness {
		run.Do(a)
	}
	big := newMachine(t, ExtendedConfig(c, 2), v.Design)
	honest, complete := bruteCommits(big, run.State, progressLimit)
	forged, _ := bruteReaches(big, run.State, progressLimit, anyResults)
	if honest || !complete || !forged {
		t.Fatalf("from the witness's state: an honest result %v (complete %v), any result %v; want false, true, true", honest, complete, forged)
	}
	ref := Progress(context.Background(), newMachine(t, c, model.Design{}), ProgressOptions{MaxStates: progressLimit, Symmetry: model.SymWorkers})
	if !ref.Complete || ref.Stuck != 0 {
		t.Fatalf("reference: %+v", ref)
	}
	t.Logf("accept-higher-token: %d of %d states stuck; the reference commits from all %d", r.Stuck, r.States, ref.States)
}

// TestProgressExtendedValid: every state reachable in the small machine is
// a state of the extended one, and there every fault-free step the small
// machine takes is enabled and goes to the same state.
func TestProgressExtendedValid(t *testing.T) {
	m := newMachine(t, progressFaults, model.Design{})
	r, g := progress(context.Background(), m, ProgressOptions{MaxStates: progressLimit})
	if g == nil {
		t.Fatalf("incomplete: %+v", r)
	}
	var steps int
	reach := g.states()
	for i, s := range reach {
		if err := extendsState(m, g.big, &s); err != nil {
			t.Fatal(err)
		}
		for _, a := range m.Enabled(&s, nil) {
			if isFault(a) {
				continue
			}
			if !g.big.IsEnabled(&s, a) {
				t.Fatalf("state %d: %v enabled in the small machine only", i, a)
			}
			u, v := s, s
			m.Next(&u, &a)
			g.big.Next(&v, &a)
			if u != v {
				t.Fatalf("state %d: %v goes elsewhere in the extended machine", i, a)
			}
			steps++
		}
	}
	bad := m.Config
	bad.TTL++
	other := newMachine(t, bad, model.Design{})
	if extendsState(m, other, &reach[0]) == nil {
		t.Fatal("a machine with another TTL taken for an extension")
	}
	t.Logf("%d states, %d fault-free steps agree", len(reach), steps)
}

// TestProgressReferenceSurvivesFaults: with a drop; with a drop, a crash
// and a forgery; and with every fault kind once, the reference commits
// from every reachable state. Its coordinator keeps an acquire waiting
// while the sink advances the fence, and sends the advance again until the
// sink answers, so the network does not lose the advance it waits on
// (TestAwaitedAdvanceIsNotLost in model). When it could, one lost advance
// held the resource for good once its worker gave up on the acquire: every
// later acquire was answered "held", and 1,072 of progressTiny's 10,720
// states were stuck.
func TestProgressReferenceSurvivesFaults(t *testing.T) {
	every := progressFaults
	every.Dups, every.Restarts, every.SinkRestarts = 1, 1, 1
	for _, c := range []model.Config{progressTiny, progressFaults, every} {
		m := newMachine(t, c, model.Design{})
		r := Progress(context.Background(), m, ProgressOptions{MaxStates: 4 * progressLimit})
		t.Logf("reference %+v: %d states, %d extended, %d stuck", c, r.States, r.Extended, r.Stuck)
		if r.Err != nil || !r.Complete || r.Stuck != 0 || r.Witness != nil {
			t.Fatalf("%+v: %+v", c, r)
		}
	}
}

// TestProgressFixpoint: the goal-directed search and the backward
// fixpoint give every reachable state the same verdict (with Extra 1,
// where budgets leave some states stuck in designs that otherwise commit),
// with a loss and with three kinds of fault: the search judges states that
// differ only in the faults spent as one (spendNothing), the fixpoint
// each apart.
func TestProgressFixpoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    model.Config
		d    model.Design
	}{{"reference", progressTiny, model.Design{}}, {"first-grant-only", progressTiny, stuck.FirstGrantOnly},
		{"reference, three kinds of fault", progressFaults, model.Design{}}} {
		m := newMachine(t, tc.c, tc.d)
		opt := ProgressOptions{Extra: 1, MaxStates: progressLimit}
		rs, gs := progress(context.Background(), m, opt)
		opt.Fixpoint = true
		rf, gf := progress(context.Background(), m, opt)
		if !rs.Complete || !rf.Complete {
			t.Fatalf("%s: incomplete: %+v %+v", tc.name, rs, rf)
		}
		for i := range gs.ok {
			if gs.ok[i] != gf.ok[i] {
				t.Fatalf("%s: state %d: search %v, fixpoint %v", tc.name, i, gs.ok[i], gf.ok[i])
			}
		}
		if rs.Stuck == 0 || !slices.Equal(rs.Witness, rf.Witness) {
			t.Fatalf("%s: %d stuck, witnesses %v vs %v", tc.name, rs.Stuck, rs.Witness, rf.Witness)
		}
		t.Logf("%s, extra 1: %d states, %d stuck; search judged %d extended states, fixpoint explored %d", tc.name, rs.States, rs.Stuck, rs.Extended, rf.Extended)
	}
}

// TestProgressMaxStates: a check cut short, by its state limit, its
// context or its heap budget, gives no verdict and says why.
func TestProgressMaxStates(t *testing.T) {
	m := newMachine(t, progressStuck, stuck.RejectAll)
	r := Progress(context.Background(), m, ProgressOptions{MaxStates: 50})
	if r.Complete || r.Stopped != StopMaxStates || r.Stuck != 0 || r.Witness != nil {
		t.Fatalf("cut short but %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := Progress(ctx, m, ProgressOptions{}); r.Complete || r.Stopped != StopCancelled {
		t.Fatalf("cancelled but %+v", r)
	}
	if r := Progress(context.Background(), m, ProgressOptions{}); !r.Complete || r.Stopped != "" {
		t.Fatalf("not cut short but %+v", r)
	}
}

// TestProgressMemoryBudget: a check that needs more heap than its budget
// (every fault kind once: 330,512 reachable states and 565,000 extended,
// about 400 MB) stops at it with no verdict, before it has explored them
// all.
func TestProgressMemoryBudget(t *testing.T) {
	every := progressFaults
	every.Dups, every.Restarts, every.SinkRestarts = 1, 1, 1
	m := newMachine(t, every, model.Design{})
	r := Progress(context.Background(), m, ProgressOptions{MaxMemory: 24 << 20})
	if r.Complete || r.Stopped != StopMemory || r.Stuck != 0 || r.Witness != nil || r.States == 0 || r.States >= 330512 {
		t.Fatalf("over budget but %+v", r)
	}
	t.Logf("stopped after %d states, %d extended", r.States, r.Extended)
}

// TestProgressSymmetry: a check that stores one state per orbit gives
// every state the verdict of its orbit's representative in the check
// without symmetry, counts the same states and stuck states, and finds a
// witness as short, which replays to a stuck state: for every built-in
// design, for the two test designs that get stuck, and with two resources
// to rename. It fails if the symmetry is not used where the design allows
// it (as many states stored as without).
func TestProgressSymmetry(t *testing.T) {
	type check struct {
		name  string
		d     model.Design
		c     model.Config
		extra int
	}
	var checks []check
	for _, v := range designs.All() {
		c := progressTiny
		if v.Name == "holder-margin" {
			// Its holder stops writing a tick before its deadline: at TTL 1
			// it never writes, and every state is stuck, with closures
			// beyond these tests' budget without symmetry.
			c.TTL = 2
		}
		checks = append(checks, check{v.Name, v.Design, c, 2})
	}
	twoResources := progressStuck
	twoResources.Resources = 2
	checks = append(checks, check{"reject-all", stuck.RejectAll, progressStuck, 1}, check{"first-grant-only", stuck.FirstGrantOnly, progressStuck, 2},
		check{"first-grant-only, extra 1", stuck.FirstGrantOnly, progressTiny, 1}, check{"two resources", model.Design{}, twoResources, 1})
	sym := model.SymWorkers | model.SymResources
	var plain, stored uint64
	for _, k := range checks {
		m := newMachine(t, k.c, k.d)
		rp, gp := progress(context.Background(), m, ProgressOptions{Extra: k.extra, MaxStates: progressLimit})
		rs, gs := progress(context.Background(), m, ProgressOptions{Extra: k.extra, MaxStates: progressLimit, Symmetry: sym})
		if !rp.Complete || !rs.Complete {
			t.Fatalf("%s: incomplete: %+v %+v", k.name, rp, rs)
		}
		if rs.States != rp.States || rs.Stuck != rp.Stuck || rp.Stored != rp.States || len(rs.Witness) != len(rp.Witness) || (rs.Witness == nil) != (rp.Witness == nil) {
			t.Fatalf("%s: with symmetry %d states (%d stored), %d stuck, witness %v; without %d (%d stored), %d, %v",
				k.name, rs.States, rs.Stored, rs.Stuck, rs.Witness, rp.States, rp.Stored, rp.Stuck, rp.Witness)
		}
		if m.Symmetries()&model.SymWorkers != 0 && rs.Stored >= rp.Stored {
			t.Fatalf("%s: %d states stored with symmetry, %d without", k.name, rs.Stored, rp.Stored)
		}
		for i, s := range gp.states() {
			j, found, _ := gs.reach.find(&s)
			if !found || gs.ok[j] != gp.ok[i] {
				t.Fatalf("%s: state %d: found %v; with symmetry %v, without %v", k.name, i, found, found && gs.ok[j], gp.ok[i])
			}
		}
		if rs.Witness != nil {
			replayStuck(t, m, rs.Witness, k.extra)
		}
		plain, stored = plain+rp.Stored, stored+rs.Stored
		t.Logf("%s: %d states, %d stored with symmetry; %d stuck; extended %d, %d with symmetry", k.name, rp.States, rs.Stored, rs.Stuck, rp.Extended, rs.Extended)
	}
	t.Logf("%d states, %d stored with symmetry (%.2fx)", plain, stored, float64(plain)/float64(stored))
}

// states decodes the reachable states of a progress check, in its order.
func (g *progressGraph) states() []model.State {
	out := make([]model.State, g.reach.len())
	for i := range out {
		out[i] = g.reach.state(uint32(i))
	}
	return out
}
