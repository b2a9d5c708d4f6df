package checker

import (
	"context"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestOnTransitionsIsWhatJudgeDecides: spec.OnTransitions, the list a BFS
// proof reports as judged on every transition, is exactly what spec.Judge
// decides: random walks of every built-in variant (the default config,
// every fault) get from Judge every invariant of the list and none outside
// it. A state form added to Judge, or a rule removed, without the list
// following fails here.
func TestOnTransitionsIsWhatJudgeDecides(t *testing.T) {
	var decided spec.Set
	for _, v := range designs.All() {
		m, err := v.Machine(model.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 400; i++ {
			_, judged := RandomRun(m, RunSeed(7, i), 150, 0)
			if extra := judged &^ spec.OnTransitions(); extra != 0 {
				t.Fatalf("%s: Judge decided %v, which OnTransitions leaves out", v.Name, extra.IDs())
			}
			decided |= judged
		}
	}
	if decided != spec.OnTransitions() {
		t.Fatalf("Judge decided %v on the walks, OnTransitions lists %v", decided.IDs(), spec.OnTransitions().IDs())
	}
	if spec.OnTransitions().Has(spec.LinearizableSink) {
		t.Fatal("linearizable-sink listed as judged on transitions")
	}
}

// TestJudgeFindsWhatTheHistoryFinds is the differential between the two
// judges of one run: every invariant judged on transitions that the history
// checker finds in a run's history (which reads only what the processes
// saw), the model's steps violate too, the same invariant, for every
// built-in design and five of the test's own (a sink that checks nothing,
// one whose fence writes do not raise, the re-entrant design, a counter a
// restart resets, a coordinator that renews anyone's lease): random runs at the default config without duplicates
// (which make a history untrusted) and at a small one with forged tokens.
// The model may find more (it sees the ghost, and judges a grant at its
// issue), never less: a BFS proof that an invariant holds must not be
// weaker than what explore check finds in the same runs. Split brain (the
// default config with Replicas 2) is in: there two coordinators number
// their grants apart, so a newer grant may carry a lower token, and the
// model reads the highest token seen (fencing) and the highest granted
// (resource-independence), as a history has them, not the newest grant's.
func TestJudgeFindsWhatTheHistoryFinds(t *testing.T) {
	def := model.DefaultConfig()
	def.Dups = 0
	small := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 3, InFlight: 2, Drops: 1,
		Restarts: 1, SinkRestarts: 1, Forgeries: 1}
	split := def
	split.Replicas = 2 // two coordinators, split brain
	// A sink that raises its fence on every write and checks nothing, with
	// a result per attempt: a forged token above every grant moves the
	// fence where no advance and no grant shows it, and only the fence the
	// sink compares the next write with does.
	unchecked := spec.Variant{Name: "a fence nobody checks", Design: model.Design{
		Check:    func(model.SinkView, model.Msg) uint8 { return model.RepOK },
		Accepted: raiseToToken,
		Key:      func(_ model.Msg, attempt uint8) uint8 { return attempt },
	}}
	// A sink that takes any token at or above its fence, which only
	// advances move, with a result per attempt: a forged token above the
	// fence is accepted, and then the holder's own below it; the history
	// reads the first as showing the fence.
	unraised := spec.Variant{Name: "a fence writes do not raise", Design: model.Design{
		Check: atLeastFence,
		Key:   func(_ model.Msg, attempt uint8) uint8 { return attempt },
	}}
	var shown spec.Set
	for _, v := range append(designs.All(), unchecked, unraised, reentrant, counterReset, renewsAnyone) {
		for _, c := range []model.Config{def, small, split} {
			m, err := v.Machine(c)
			if err != nil {
				t.Fatal(err)
			}
			judgedAsTheHistory(t, v.Name, m, 11, 500, func(h spec.Set) { shown |= h })
		}
	}
	if want := spec.SetOf(spec.Fencing, spec.ExclusiveLease, spec.TokenMonotonic, spec.IdempotentResult); shown&want != want {
		t.Errorf("the histories showed only %v: the differential judged too little", shown.IDs())
	}
}

// judgedAsTheHistory runs n seeded random runs of m (RunSeed(seed, i)),
// with the grants in flight delivered at the end, and fails the test at
// the first run whose history violates an invariant judged on transitions
// that the model's steps do not; shown gets each run's history verdicts
// (of those invariants).
func judgedAsTheHistory(t *testing.T, name string, m *model.Machine, seed uint64, n int, shown func(spec.Set)) {
	t.Helper()
	for i := range n {
		run, judged := RandomRun(m, RunSeed(seed, i), 150, 0)
		judged |= deliverGrants(run)
		h := HistoryViolations(run) & spec.OnTransitions()
		if miss := h &^ judged; miss != 0 {
			t.Fatalf("%s, %+v, run %d: the history violates %v, the model's steps do not (they violate %v)",
				name, m.Config, i, miss.IDs(), judged.IDs())
		}
		shown(h)
	}
}

// reentrant is a design whose lease excludes every applicant but its own
// holder's incarnation, which asking again is granted again: safe, since a
// worker asks only when it holds no token, having given up (or been
// refused) any earlier request, whose reply it then ignores.
var reentrant = spec.Variant{Name: "re-entrant", Design: model.Design{Valid: func(l model.Lease, req model.Msg) bool {
	return model.RefValid(l, req) && !(l.Holder == req.Worker+1 && l.Inc == req.Inc)
}}}

// TestAGrantNobodyTakesIsNoLease: a grant whose reply its worker stopped
// waiting for before it came is no lease anyone counts on, so a complete
// BFS proves the re-entrant design free of exclusive-lease: its worker
// that gives up a request and asks again gets a second grant while the
// first, unreleased and unexpired, was never taken (a false alarm while
// every grant counted from its issue). Nor are two grants of one request
// two leases (the re-entrant design without a dedup record grants a retry
// again; its worker takes one answer): an outside probe found that false
// alarm when a grant still awaited counted against a second answer to the
// same request. The same searches of a design that grants whoever asks
// find exclusive-lease, so they are not blind to it.
func TestAGrantNobodyTakesIsNoLease(t *testing.T) {
	anyone := spec.Variant{Name: "grants whoever asks", Design: model.Design{Valid: func(model.Lease, model.Msg) bool { return false }}}
	noDedup := reentrant
	noDedup.Name, noDedup.Design.Answers = "re-entrant, no dedup record", func(model.Dedup, model.Msg) uint8 { return 0 }
	for _, k := range []struct {
		c    model.Config
		v    spec.Variant
		want bool
	}{
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 3, InFlight: 2, Drops: 1}, reentrant, false},
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 3, InFlight: 2, Drops: 1}, anyone, true},
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 3, Grants: 3, InFlight: 2, Crashes: 1}, reentrant, false},
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 3, Grants: 3, InFlight: 2, Crashes: 1}, anyone, true},
		{model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 1, Grants: 3, InFlight: 3}, noDedup, false},
	} {
		m, err := k.v.Machine(k.c)
		if err != nil {
			t.Fatal(err)
		}
		res := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers, Reduce: model.Reductions})
		if !res.Complete {
			t.Fatalf("%s, %+v: the search stopped: %s", k.v.Name, k.c, res.Stopped)
		}
		if got := res.Violated.Has(spec.ExclusiveLease); got != k.want {
			t.Errorf("%s, %+v: exclusive-lease violated %v, want %v (%d states)", k.v.Name, k.c, got, k.want, res.States)
		}
	}
}

// counterReset takes tokens from a counter a restart resets, for a
// max-token sink whose fence writes alone raise: a grant after the restart
// carries a lower token than one a holder saw before it, and a write with
// it, which the sink lets in while no write has raised its fence, is below
// what the history saw.
var counterReset = spec.Variant{Name: "a counter a restart resets", Design: model.Design{
	Tokens: model.CounterOnly,
	Restart: func(co model.Coordinator, ttl int) model.Coordinator {
		co = model.RefRestart(co, ttl)
		co.Counter = [model.MaxResources]uint8{}
		return co
	},
	Check:    atLeastFence,
	Accepted: raiseToToken,
}}

// atLeastFence is a sink's Check that takes any token at or above its
// fence.
func atLeastFence(v model.SinkView, w model.Msg) uint8 {
	if w.Token >= v.Fence {
		return model.RepOK
	}
	return model.RepFenced
}

// raiseToToken is a sink's Accepted that raises its fence to the token of
// a write it takes (a max-token sink's).
func raiseToToken(v model.SinkView, w model.Msg) (uint8, model.Regs) {
	return max(v.Fence, w.Token), v.U
}

// TestALapsedGrantItsWorkerTakesIsALease: a grant issued to a request
// older than a ttl (its earliest deadline passed before it was issued)
// still overlaps a lease valid then, to a history, which has a lease valid
// when its grant takes effect: restart-no-grace grants w2's old request
// token 2 right after a restart lost w1's lease, token 1. The model's
// steps find exclusive-lease too (an outside probe found them silent when
// a grant that had lapsed at issue was judged against nothing).
func TestALapsedGrantItsWorkerTakesIsALease(t *testing.T) {
	v, err := spec.LookupVariant(designs.All(), "restart-no-grace")
	if err != nil {
		t.Fatal(err)
	}
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 3, Restarts: 1}
	tick := act(model.Tick, 0)
	picks := slices.Concat([]func(model.Action) bool{act(model.Acquire, 1), tick}, // w2 asks at 0; its request waits
		grant(0), // token 1 to w1 at 1
		[]func(model.Action) bool{func(a model.Action) bool { return a.Kind == model.Restart }, tick,
			deliver(model.AcquireReq, 1), deliver(model.AdvanceReq, 0), deliver(model.AdvanceRep, 0), deliver(model.AcquireRep, 1)})
	bothJudge(t, newMachine(t, c, v.Design), picks, spec.SetOf(spec.ExclusiveLease),
		"token 2 granted to a request two ticks old while token 1 was valid")
}

// TestFencingReadsTheHighestTokenSeen: where a restart resets the token
// counter, a newer grant carries a lower token than one a holder saw
// before; a write with it that the sink lets in (its fence, raised by
// writes alone, has seen none) is below what the history saw of the fence,
// fencing to the history checker, and so to the model's steps: fencing
// reads the highest token an acquire's reply brought, not the newest
// grant's.
func TestFencingReadsTheHighestTokenSeen(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 2, Restarts: 1}
	tick := act(model.Tick, 0)
	acquire := func(w uint8) []func(model.Action) bool {
		return []func(model.Action) bool{act(model.Acquire, w), deliver(model.AcquireReq, w), deliver(model.AcquireRep, w)}
	}
	picks := slices.Concat(acquire(0), // token 1
		[]func(model.Action) bool{tick, tick}, acquire(1), // token 2, seen by w2
		[]func(model.Action) bool{func(a model.Action) bool { return a.Kind == model.Restart }, tick, tick,
			act(model.Renew, 0), deliver(model.RenewReq, 0), deliver(model.RenewRep, 0)}, // w1 loses its lease
		acquire(0), // token 1 again
		[]func(model.Action) bool{act(model.Write, 0), deliver(model.WriteReq, 0)})
	bothJudge(t, newMachine(t, c, counterReset.Design), picks, spec.SetOf(spec.Fencing),
		"a write with token 1 after token 2 was seen")
}

// TestRenewAfterAReanswerIsAfterATakeover: an answer from a record that
// hands a worker its old lease again is, to a history, a grant of that
// token; a renew of the lease it took over after it is one after a
// takeover (renew-validity), to the model's steps too: the grant whose
// token was handed out last is the re-answered one, not the newest.
func TestRenewAfterAReanswerIsAfterATakeover(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 3, Grants: 2, InFlight: 2}
	picks := slices.Concat(grant(0), // token 1
		[]func(model.Action) bool{act(model.Tick, 0)}, grant(1), // token 2, w1's lease lapsed
		[]func(model.Action) bool{act(model.Renew, 0), deliver(model.RenewReq, 0), deliver(model.RenewRep, 0), // refused: w1 drops token 1
			act(model.Acquire, 0), deliver(model.AcquireReq, 0), deliver(model.AcquireRep, 0), // token 1 again, from w1's record
			act(model.Renew, 1), deliver(model.RenewReq, 1), deliver(model.RenewRep, 1)}) // w2 renews token 2
	bothJudge(t, newMachine(t, c, clientDedup), picks, spec.SetOf(spec.RenewValidity),
		"a renew of token 2 after token 1 was handed out again")
}

// Pickers for two coordinators: an action of worker w at replica rep; a
// live message of kind mk to or from w at replica rep (an advance, of any
// worker), and one carrying token tok.
func atReplica(k model.Kind, w, rep uint8) func(model.Action) bool {
	return func(a model.Action) bool { return a.Kind == k && a.Worker == w && a.Replica == rep }
}
func deliverAt(mk, w, rep uint8) func(model.Action) bool {
	d := deliver(mk, w)
	return func(a model.Action) bool { return d(a) && a.Msg.Replica == rep }
}
func deliverToken(mk, w, rep, tok uint8) func(model.Action) bool {
	d := deliverAt(mk, w, rep)
	return func(a model.Action) bool { return d(a) && a.Msg.Token == tok }
}

// TestAnUntakenReanswerExtendsNoLease: token 1 lapses and w1, refused a
// renew, drops it; coordinator 0 answers w1's next request token 1 again
// from its record, but w1 takes coordinator 1's answer, token 2, and then
// forges token 1. To a history the write is past token 1's only lease
// (absolute-validity); so it is to the model's steps, which once dated
// the grant's latest deadline from the answer nobody took (an outside
// probe found it). An answer from a record extends only the earliest
// deadline: where its worker does take it, a write before the history's
// latest deadline may be absolute-validity to the model alone.
func TestAnUntakenReanswerExtendsNoLease(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 2, TTL: 1, Ops: 5, Grants: 3, InFlight: 4, Forgeries: 1}
	d := model.Design{Answers: clientDedup.Answers, Check: func(model.SinkView, model.Msg) uint8 { return model.RepOK }}
	tick := act(model.Tick, 0)
	picks := []func(model.Action) bool{
		atReplica(model.Acquire, 0, 0), deliverAt(model.AcquireReq, 0, 0), deliverAt(model.AdvanceReq, 0, 0),
		deliverAt(model.AdvanceRep, 0, 0), deliverAt(model.AcquireRep, 0, 0), tick, tick,
		atReplica(model.Renew, 0, 0), deliverAt(model.RenewReq, 0, 0), deliverAt(model.RenewRep, 0, 0), // lapsed: dropped
		atReplica(model.Acquire, 0, 0), deliverAt(model.AcquireReq, 0, 0), // token 1 again, from the record; not taken
		atReplica(model.Retry, 0, 1), deliverAt(model.AcquireReq, 0, 1), deliverAt(model.AdvanceReq, 0, 1),
		deliverAt(model.AdvanceRep, 0, 1), deliverToken(model.AcquireRep, 0, 1, 2), // w1 takes token 2
		func(a model.Action) bool { return a.Kind == model.Forge && a.Worker == 0 && a.Token == 1 },
		deliverAt(model.WriteReq, 0, 0)}
	bothJudge(t, newMachine(t, c, d), picks, spec.SetOf(spec.AbsoluteValidity), "a forged write of token 1 after its lease")
}

// TestANewerGrantShownLaterIsNoAlibi: w1's token 1 is fenced by a forged
// fence no advance set while w2's grant of token 2 is in flight; a
// restart loses the coordinator's lease and records, and w2's retry is
// granted token 1, which it takes: token 2 never shows, and to a history
// token 1 was the newest grant when it was fenced (resource-
// independence). The model's steps once counted the grant in flight as
// newer and were silent (an outside probe found it); they read the
// highest token shown so far.
func TestANewerGrantShownLaterIsNoAlibi(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 4, Grants: 3, InFlight: 5, Forgeries: 1, Restarts: 1}
	d := model.Design{Tokens: model.GrantThenFence, Check: atLeastFence, Accepted: raiseToToken,
		Restart: func(co model.Coordinator, _ int) model.Coordinator {
			co.Lease, co.Dedup, co.Counter = [model.MaxResources]model.Lease{}, [model.MaxResources][model.MaxWorkers]model.Dedup{}, [model.MaxResources]uint8{}
			return co
		}}
	tick := act(model.Tick, 0)
	picks := []func(model.Action) bool{
		act(model.Acquire, 0), deliver(model.AcquireReq, 0), deliver(model.AdvanceReq, 0), deliver(model.AcquireRep, 0), // token 1, fence 1
		tick, tick,
		act(model.Acquire, 1), deliver(model.AcquireReq, 1), // token 2 to w2, its reply and advance in flight
		func(a model.Action) bool { return a.Kind == model.Forge && a.Worker == 0 && a.Token > 5 },
		deliver(model.WriteReq, 0), deliver(model.WriteRep, 0),
		act(model.Write, 0), deliver(model.WriteReq, 0), // fenced by the forged token's fence
		func(a model.Action) bool { return a.Kind == model.Restart },
		act(model.Retry, 1), deliver(model.AcquireReq, 1), deliverToken(model.AcquireRep, 1, 0, 1)} // token 1 to w2
	bothJudge(t, newMachine(t, c, d), picks, spec.SetOf(spec.ResourceIndependence), "token 1 fenced while newest")
}

// TestARenewOfOneLeaseFromTwoCoordinators: both coordinators grant w1's
// one request token 1; w1 takes coordinator 0's and renews with
// coordinator 1, whose lease is its own. A history sees one lease and a
// renew of it in time; the model's steps, which once took the grant
// handed out last by its number (coordinator 1's) for a takeover, judge
// the renew valid too (an outside probe found the false alarm).
func TestARenewOfOneLeaseFromTwoCoordinators(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 2, TTL: 3, Ops: 4, Grants: 3, InFlight: 5}
	picks := []func(model.Action) bool{
		atReplica(model.Acquire, 0, 0), deliverAt(model.AcquireReq, 0, 0), // coordinator 0 grants token 1
		atReplica(model.Retry, 0, 1), deliverAt(model.AcquireReq, 0, 1), // coordinator 1 grants token 1
		deliverAt(model.AdvanceReq, 0, 0), deliverAt(model.AdvanceReq, 0, 1), deliverAt(model.AcquireRep, 0, 0),
		atReplica(model.Renew, 0, 1), deliverAt(model.RenewReq, 0, 1), deliverAt(model.RenewRep, 0, 1)}
	run, judged := scripted(t, newMachine(t, c, model.Design{Tokens: model.GrantThenFence}), picks)
	judged |= deliverGrants(run)
	if h := HistoryViolations(run); h.Has(spec.RenewValidity) || judged.Has(spec.RenewValidity) {
		t.Errorf("the history violates %v, the model's steps %v; want renew-validity in neither", h.IDs(), judged.IDs())
	}
}

// renewsAnyone is a design whose Renew says ok to anyone: a worker whose
// lease was taken over gets it back.
var renewsAnyone = spec.Variant{Name: "renews anyone", Design: model.Design{
	Renew: func(model.Lease, model.Msg) uint8 { return model.RepOK }}}

// TestARenewFromANonHolderExtendsItsOwnLease: a design whose Renew says ok
// to anyone renews, at w1's asking, w1's own lapsed lease, token 1, as a
// history has it (a renew of token 1), while w2 holds token 2: both
// judges find exclusive-lease. The ghost once extended the coordinator's
// lease, w2's, and the model's steps were silent (an outside probe found
// it).
func TestARenewFromANonHolderExtendsItsOwnLease(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2}
	tick := act(model.Tick, 0)
	picks := slices.Concat(grant(0), // token 1 to w1
		[]func(model.Action) bool{tick, tick, tick}, grant(1), // w1's lease lapsed; token 2 to w2
		[]func(model.Action) bool{act(model.Renew, 0), deliver(model.RenewReq, 0), deliver(model.RenewRep, 0)})
	bothJudge(t, newMachine(t, c, renewsAnyone.Design), picks, spec.SetOf(spec.ExclusiveLease),
		"w1's renew of token 1 accepted while w2 holds token 2")
}

// TestResourceIndependenceReadsTheLastAdvance: a sink whose restart resets
// its fences, which writes raise: an advance sets the fence to 2, the
// restart resets it, a second advance sets it to 1 for w2's token 1, a
// forged token 14 raises it, and w2's write is fenced by a fence the last
// advance of the resource did not set. The history sees resource
// independence broken (it reads the last advance before the write); so do
// the model's steps, which read the fence the last advance set
// (Ghost.LastAdvanced), not the highest any advance set (2, and the model
// was silent: an outside probe found it).
func TestResourceIndependenceReadsTheLastAdvance(t *testing.T) {
	d := model.Design{
		SinkRestart: func(s model.Sink) model.Sink {
			s.Results, s.NResults, s.Fence = [model.MaxResults]model.Result{}, 0, [model.MaxResources]uint8{}
			return s
		},
		Check:    atLeastFence,
		Accepted: raiseToToken,
	}
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 4, Grants: 3, InFlight: 3, Restarts: 1,
		SinkRestarts: 1, Forgeries: 1}
	is := func(k model.Kind) func(model.Action) bool { return func(a model.Action) bool { return a.Kind == k } }
	tick := act(model.Tick, 0)
	picks := slices.Concat(grant(0), // token 1, the fence 1
		[]func(model.Action) bool{tick, tick, act(model.Acquire, 1), deliver(model.AcquireReq, 1), deliver(model.AdvanceReq, 0), // the fence 2
			is(model.Restart), is(model.SinkCrash), tick, tick, act(model.Retry, 1), deliver(model.AcquireReq, 1)}, // the fence 0
		grant(1)[2:], // the fence 1, token 1 to w2
		[]func(model.Action) bool{act(model.Forge, 1), deliver(model.WriteReq, 1), deliver(model.WriteRep, 1), // the fence 14
			act(model.Write, 1), deliver(model.WriteReq, 1)}) // fenced
	bothJudge(t, newMachine(t, c, d), picks, spec.SetOf(spec.ResourceIndependence),
		"token 1 fenced by a forged 14 after the restart")
}

// Sinks that show a fence, or take a token, that no advance and no grant
// shows, and then lower it or forget the result: an outside probe's
// designs, each a history-only verdict once (TestJudgeReadsWhatTheSinkShowed).
var (
	// marksFences: a restart marks every fence (bit 3), which the next
	// advance clears: a write rejected in between reports fence 9, and
	// the next grant's token 2 is accepted after it (fencing).
	marksFences = model.Design{
		Advance: func(fence, to uint8) uint8 {
			if to == 0 {
				return fence&^8 + 1
			}
			return max(fence&^8, to)
		},
		SinkRestart: func(s model.Sink) model.Sink {
			for r := range s.Fence {
				s.Fence[r] ^= 8
			}
			return s
		}}
	// rekeyed: after a restart, until the next, the sink takes only tokens
	// above its fence (a recovery mode, register A); a restart gives every
	// result a new key. A forged token taken before a restart is a token
	// the sink accepted (fencing), though its result is another now.
	rekeyed = model.Design{
		Key: func(_ model.Msg, attempt uint8) uint8 { return attempt },
		Check: func(v model.SinkView, w model.Msg) uint8 {
			if v.U.A == 1 {
				if w.Token > v.Fence {
					return model.RepOK
				}
				return model.RepFenced
			}
			return model.RefCheck(v, w)
		},
		SinkRestart: func(s model.Sink) model.Sink {
			for r := range s.U {
				s.U[r].A ^= 1
			}
			for i := range int(s.NResults) {
				s.Results[i].Key ^= 0x40
			}
			return s
		}}
	// lowered: a sink with a deadline of its own, set at each advance,
	// that fences any write but the fence's token, and one past its
	// deadline; a restart lowers each fence by one. A write of the newest
	// token, rejected while the fence it reports is that token, is
	// resource-independence to a history, whatever the last advance set.
	lowered = model.Design{
		OnAdvance: func(u model.Regs, ttl int) model.Regs { u.T = model.Clamp(ttl); return u },
		Check: func(v model.SinkView, w model.Msg) uint8 {
			if w.Token != v.Fence || v.U.T <= 0 {
				return model.RepFenced
			}
			return model.RepOK
		},
		SinkRestart: func(s model.Sink) model.Sink {
			for r := range s.Fence {
				s.Fence[r] = max(s.Fence[r], 1) - 1
			}
			return s
		}}
	// raisedBeforeAdvance: grant, then fence, with a sink that writes
	// raise: a forged token raises the fence before the advance of a
	// grant that is observed first. A history reads the fence from the
	// advances (fence-before-grant), not from the writes.
	raisedBeforeAdvance = model.Design{Tokens: model.GrantThenFence, Check: atLeastFence, Accepted: raiseToToken}
)

// TestJudgeReadsWhatTheSinkShowed: on seeded random runs of the designs
// above, with sink restarts and forgeries, the model's steps find every
// invariant the history finds. Each of them showed the history a verdict
// the model's steps missed: a fence reported on a rejection and lowered
// since, and a forged token taken whose result a restart re-keyed
// (fencing: the ghost now keeps what the sink's applies showed,
// Ghost.Shown); a rejection whose reported fence is the newest token
// (resource-independence); and a grant observed while a write, not an
// advance, had raised the fence to its token (fence-before-grant: the
// ghost reads the last advance). The complete searches of
// TestASearchFindsAFenceTheSinkShowed prove the first unsafe where they
// once proved it safe.
func TestJudgeReadsWhatTheSinkShowed(t *testing.T) {
	def := model.DefaultConfig()
	def.Dups = 0
	split := def
	split.Replicas = 2
	configs := []model.Config{def, split,
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2, SinkRestarts: 1},
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 1, InFlight: 2, SinkRestarts: 2, Forgeries: 1},
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 3, InFlight: 2, Drops: 1, Restarts: 1,
			SinkRestarts: 1, Forgeries: 1}}
	for _, d := range []struct {
		name   string
		design model.Design
		shows  string // what its histories must show, or the test judged nothing
	}{
		{"a restart that marks fences", marksFences, spec.Fencing},
		{"a restart that re-keys results", rekeyed, spec.Fencing},
		{"a restart that lowers fences", lowered, spec.ResourceIndependence},
		{"grant then fence, writes raise the fence", raisedBeforeAdvance, spec.FenceBeforeGrant},
	} {
		shown := 0
		for _, c := range configs {
			m := newMachine(t, c, d.design)
			judgedAsTheHistory(t, d.name, m, 13, 1000, func(h spec.Set) {
				if h.Has(d.shows) {
					shown++
				}
			})
		}
		if shown == 0 {
			t.Errorf("%s: no history showed %s: the differential judged nothing", d.name, d.shows)
		}
		t.Logf("%s: %d of %d histories show %s", d.name, shown, 1000*len(configs), d.shows)
	}
}

// TestASearchFindsAFenceTheSinkShowed: complete searches find fencing in
// two designs of TestJudgeReadsWhatTheSinkShowed that they once proved
// free of it, each within bounds where a random run's history shows it: a
// fence a restart marked, reported on a rejection and cleared by the next
// advance (now 50,268 states, 45,149 before Ghost.Shown); and a forged
// token taken before a restart that re-keyed its result (739,957 states,
// then and now).
func TestASearchFindsAFenceTheSinkShowed(t *testing.T) {
	for _, k := range []struct {
		name   string
		design model.Design
		c      model.Config
	}{
		{"a restart that marks fences", marksFences,
			model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2, SinkRestarts: 1}},
		{"a restart that re-keys results", rekeyed,
			model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 1, InFlight: 2, SinkRestarts: 2, Forgeries: 1}},
	} {
		r := BFS(context.Background(), newMachine(t, k.c, k.design), BFSOptions{Exhaustive: true, Reduce: model.Reductions})
		t.Logf("%s: %s after %d states, violated %v", k.name, r.Stopped, r.States, r.ViolatedIDs)
		if !r.Complete || !r.Violated.Has(spec.Fencing) {
			t.Errorf("%s: the search: %s after %d states, violated %v; want fencing", k.name, r.Stopped, r.States, r.ViolatedIDs)
		}
	}
}
