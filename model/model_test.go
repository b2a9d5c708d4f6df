package model

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/fencecheck/fencecheck/history"
)

// walk runs a seeded random walk, calling visit before every step.
func walk(m *Machine, seed uint64, steps int, visit func(s *State, a Action)) *Run {
	r := rand.New(rand.NewPCG(seed, 1))
	run := NewRun(m)
	var buf []Action
	for i := 0; i < steps; i++ {
		buf = m.Enabled(&run.State, buf[:0])
		a := buf[r.IntN(len(buf))]
		if visit != nil {
			visit(&run.State, a)
		}
		run.Do(a)
	}
	return run
}

// TestStepIsPure: a step changes only the state it is given, Encode tells
// states apart exactly when == does, and Step and Next agree.
func TestStepIsPure(t *testing.T) {
	m, err := New(DefaultConfig(), Design{})
	if err != nil {
		t.Fatal(err)
	}
	var prevEnc []byte
	var prev State
	for seed := uint64(0); seed < 30; seed++ {
		walk(m, seed, 100, func(s *State, a Action) {
			before := *s
			a1, a2 := *s, *s
			m.Step(&a1, a, nil)
			m.Next(&a2, &a)
			if *s != before {
				t.Fatal("Step changed a copy's original")
			}
			if a1 != a2 {
				t.Fatalf("Step and Next disagree on %s", a)
			}
			enc := m.Encode(s, nil)
			if (prev == *s) != bytes.Equal(prevEnc, enc) {
				t.Fatalf("Encode and == disagree")
			}
			prev, prevEnc = *s, enc
		})
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	m, err := New(DefaultConfig(), Design{})
	if err != nil {
		t.Fatal(err)
	}
	run := walk(m, 7, 40, nil)
	acts := m.Enabled(&run.State, nil)
	allocs := testing.AllocsPerRun(100, func() {
		for _, a := range acts {
			s := run.State
			m.Next(&s, &a)
		}
	})
	if allocs != 0 {
		t.Fatalf("Next allocates %.1f times per %d actions", allocs, len(acts))
	}
}

func TestStateIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(State{}); n > 687 { // 687 today
		t.Fatalf("State is %d bytes; the explorer copies it on every transition", n)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultConfig()
	bad.Workers, bad.TTL = 1, 0
	err := bad.Validate()
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("workers=1")) || !bytes.Contains([]byte(err.Error()), []byte("ttl=0")) {
		t.Fatalf("Validate = %v; want both bounds named", err)
	}
	if _, err := New(bad, Design{}); err == nil {
		t.Fatal("New accepted a bad config")
	}
	raw := []byte(`{"workers":2,"resources":1,"replicas":1,"ttl":3,"ops":4,"grants":3,"inFlight":3,"protocol":{"checkThenWrite":true}}`)
	c, err := ParseConfig(raw)
	if err != nil || c.TTL != 3 {
		t.Fatalf("ParseConfig = %+v %v (an old header's protocol is ignored)", c, err)
	}
	if _, err := ParseConfig([]byte(`{"workers":2,"bogus":1}`)); err == nil {
		t.Fatal("ParseConfig accepted an unknown field")
	}
}

// script runs actions chosen by predicates, failing when none is enabled.
func script(t *testing.T, m *Machine, picks ...func(Action) bool) *Run {
	t.Helper()
	run := NewRun(m)
	for i, pick := range picks {
		found := false
		for _, a := range m.Enabled(&run.State, nil) {
			if pick(a) {
				run.Do(a)
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("step %d: no enabled action matches", i)
		}
	}
	return run
}

func kind(k Kind, w uint8) func(Action) bool {
	return func(a Action) bool { return a.Kind == k && a.Worker == w }
}

func deliver(mk, w uint8, replica uint8) func(Action) bool {
	return func(a Action) bool {
		return a.Kind == Deliver && a.Msg.Kind == mk && a.Msg.Worker == w && a.Msg.Replica == replica
	}
}

func acquireAt(w, replica uint8) func(Action) bool {
	return func(a Action) bool { return a.Kind == Acquire && a.Worker == w && a.Res == 0 && a.Replica == replica }
}

// TestSplitBrainSharesTheFence: two coordinators that both believe they are
// primary grant the same resource twice, but they share the sink, so the
// second grant's advance fences the first holder out.
func TestSplitBrainSharesTheFence(t *testing.T) {
	cfg := Config{Workers: 2, Resources: 1, Replicas: 2, TTL: 5, Ops: 4, Grants: 3, InFlight: 3}
	m, err := New(cfg, Design{})
	if err != nil {
		t.Fatal(err)
	}
	run := script(t, m,
		acquireAt(0, 0), deliver(AcquireReq, 0, 0), deliver(AdvanceReq, 0, 0), deliver(AdvanceRep, 0, 0), deliver(AcquireRep, 0, 0),
		acquireAt(1, 1), deliver(AcquireReq, 1, 1), deliver(AdvanceReq, 0, 1), deliver(AdvanceRep, 0, 1), deliver(AcquireRep, 1, 1),
		kind(Write, 0), deliver(WriteReq, 0, 0), deliver(WriteRep, 0, 0))
	s := &run.State
	if s.Coord[0].Lease[0].Holder != 1 || s.Coord[1].Lease[0].Holder != 2 {
		t.Fatalf("leases %+v %+v: want w1 on replica 1 and w2 on replica 2", s.Coord[0].Lease[0], s.Coord[1].Lease[0])
	}
	last := run.Events[len(run.Events)-1]
	if last.F != history.Write || last.Type != history.Fail || last.Value.Error != history.Fenced {
		t.Fatalf("w1's write ended %+v; want fenced", last)
	}
}

// TestCoordinatorRestartLosesTheLeaseTable: the reference's restart loses
// the lease table (it lives in memory, with the clock that measured it),
// keeps the acquire dedup records, the counters and the sink, and grants
// nothing for one ttl: a retry of the granted request is still answered
// with its grant, another worker is refused until the grace period ends.
func TestCoordinatorRestartLosesTheLeaseTable(t *testing.T) {
	cfg := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Restarts: 1}
	m, err := New(cfg, Design{})
	if err != nil {
		t.Fatal(err)
	}
	granted := []func(Action) bool{acquireAt(0, 0), deliver(AcquireReq, 0, 0), deliver(AdvanceReq, 0, 0), deliver(AdvanceRep, 0, 0)}
	run := script(t, m, granted...)
	before := run.State
	run.Do(Action{Kind: Restart})
	after := run.State
	if after.Coord[0].Lease != ([MaxResources]Lease{}) {
		t.Fatalf("the lease table survived the restart: %+v", after.Coord[0].Lease)
	}
	if after.Coord[0].Dedup != before.Coord[0].Dedup || after.Coord[0].Counter != before.Coord[0].Counter || after.Sink != before.Sink {
		t.Fatal("a restart lost durable state")
	}
	// w2 asks during the grace period: held; after one ttl: granted.
	r2 := script(t, m, append(granted, kind(Restart, 0), acquireAt(1, 0), deliver(AcquireReq, 1, 0),
		deliver(AcquireRep, 1, 0))...)
	if last := r2.Events[len(r2.Events)-1]; last.Type != history.Fail || last.Value.Error != history.Held {
		t.Fatalf("a grant during the grace period: %+v", last)
	}
	r3 := script(t, m, append(granted, kind(Restart, 0), kind(Tick, 0), kind(Tick, 0), acquireAt(1, 0),
		deliver(AcquireReq, 1, 0), deliver(AdvanceReq, 0, 0), deliver(AdvanceRep, 0, 0), deliver(AcquireRep, 1, 0))...)
	if last := r3.Events[len(r3.Events)-1]; last.Type != history.OK || last.Value.Token != 2 {
		t.Fatalf("no grant after the grace period: %+v", last)
	}
}

// TestAwaitedAdvanceIsNotLost: the network does not lose the advance a
// coordinator waits on to grant an acquire, nor the sink's answer to it
// (the coordinator would send it again: a loss is a delay); it may
// duplicate them. Once the coordinator no longer waits on it (a restart
// lost the grant in progress), the advance can be lost like any message.
func TestAwaitedAdvanceIsNotLost(t *testing.T) {
	cfg := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Drops: 1, Dups: 1, Restarts: 1}
	m, err := New(cfg, Design{})
	if err != nil {
		t.Fatal(err)
	}
	offers := func(s *State, k Kind, mk uint8) bool {
		for _, a := range m.Enabled(s, nil) {
			if a.Kind == k && a.Msg.Kind == mk {
				return true
			}
		}
		return false
	}
	asked := []func(Action) bool{acquireAt(0, 0), deliver(AcquireReq, 0, 0)}
	for _, c := range []struct {
		picks []func(Action) bool
		msg   uint8
		lost  bool
	}{
		{asked, AdvanceReq, false},
		{append(asked, deliver(AdvanceReq, 0, 0)), AdvanceRep, false},
		{append(asked, kind(Restart, 0)), AdvanceReq, true},
		{append(asked, deliver(AdvanceReq, 0, 0), kind(Restart, 0)), AdvanceRep, true},
	} {
		s := script(t, m, c.picks...).State
		if offers(&s, Drop, c.msg) != c.lost || !offers(&s, Duplicate, c.msg) {
			t.Fatalf("after %d steps (restart: %v): drop of message kind %d offered %v, want %v; duplicate offered %v, want true",
				len(c.picks), c.lost, c.msg, offers(&s, Drop, c.msg), c.lost, offers(&s, Duplicate, c.msg))
		}
	}
}

// TestHolderKeepsItsResource: whatever a holder does, its writes go to the
// resource its token was granted for.
func TestHolderKeepsItsResource(t *testing.T) {
	m, err := New(DefaultConfig(), Design{})
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(0); seed < 200; seed++ {
		walk(m, seed, 120, func(s *State, a Action) {
			if a.Kind == Deliver && a.Msg.Kind == WriteReq {
				g := s.Ghost[a.Msg.Res].Grant[a.Msg.Grant]
				if a.Msg.Grant == 0 || g.Worker != a.Msg.Worker+1 {
					t.Fatalf("seed %d: a write to %s carries token %d of grant %d, which is not that resource's",
						seed, ResourceName(a.Msg.Res), a.Msg.Token, a.Msg.Grant)
				}
			}
		})
	}
}

// TestLiveWhileItsWorkerWaits: a reply in flight is live only while its
// worker would take it (it waits for that kind of operation, in that
// incarnation, and for an acquire that request), so that every reply
// nobody will take is dead (ReduceDeadDelivered delivers it); and a live
// request belongs to an operation its worker waits for. Checked on random
// walks of the default config, every fault kind.
func TestLiveWhileItsWorkerWaits(t *testing.T) {
	m, err := New(DefaultConfig(), Design{})
	if err != nil {
		t.Fatal(err)
	}
	reqOp := map[uint8]uint8{AcquireReq: OpAcquire, RenewReq: OpRenew, ReleaseReq: OpRelease, WriteReq: OpWrite, ReadReq: OpRead}
	replies, live := 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		walk(m, seed, 150, func(s *State, _ Action) {
			for i := range s.Msgs[:s.NMsgs] {
				msg := &s.Msgs[i]
				if msg.coordinators() {
					continue
				}
				wk := &s.Workers[msg.Worker]
				waits := func(op uint8) bool {
					return wk.Pending == op && msg.Inc == wk.Inc && (op != OpAcquire || msg.Req == wk.Req)
				}
				if op, ok := reqOp[msg.Kind]; ok && msg.Live && !waits(op) {
					t.Fatalf("seed %d: a live %s of an operation its worker does not wait for", seed, msgKindNames[msg.Kind])
				}
				if op := replyOp[msg.Kind]; op != OpNone {
					replies++
					if msg.Live {
						live++
					}
					if msg.Live && !waits(op) {
						t.Fatalf("seed %d: a live %s its worker would not take", seed, msgKindNames[msg.Kind])
					}
				}
			}
		})
	}
	if live == 0 || live == replies {
		t.Fatalf("%d of %d replies seen live: the walks do not tell", live, replies)
	}
	t.Logf("%d of %d replies seen live", live, replies)
}

// TestNewRecoversItsProbes: a decision that panics on an input New probes
// but no run reaches (a table of 128 fences read at 128 and above) makes
// New return an error naming the probe, not panic.
func TestNewRecoversItsProbes(t *testing.T) {
	var table [128]uint8
	for i := range table {
		table[i] = uint8(i)
	}
	d := Design{Advance: func(fence, to uint8) uint8 { return max(table[fence], to) }}
	m, err := New(DefaultConfig(), d)
	if m != nil || err == nil || !strings.Contains(err.Error(), "panicked while New probed it") {
		t.Fatalf("New: %v, %v", m != nil, err)
	}
}

// TestHeldWrite: under a bounded delay a worker can pause between deciding
// to write and its write leaving (Action.Hold, Worker.Holding). The held
// request travels nowhere — it is not delivered, lost or duplicated, and
// does not age — until the worker resumes, when it leaves with age 0; a
// crash lets it leave just before. In an asynchronous network there is no
// held write: the network's own delay covers it.
func TestHeldWrite(t *testing.T) {
	cfg := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 5, Ops: 2, Grants: 2, InFlight: 2, Drops: 1, Dups: 1,
		Crashes: 1, Delay: 2, Pause: 2}
	m, err := New(cfg, Design{})
	if err != nil {
		t.Fatal(err)
	}
	heldWrite := func(a Action) bool { return a.Kind == Write && a.Worker == 0 && a.Hold }
	run := script(t, m, acquireAt(0, 0), deliver(AcquireReq, 0, 0), deliver(AdvanceReq, 0, 0), deliver(AdvanceRep, 0, 0),
		deliver(AcquireRep, 0, 0), heldWrite)
	s := &run.State
	if wk := s.Workers[0]; !wk.Paused || !wk.Holding {
		t.Fatalf("after a held write: paused %v, holding %v", wk.Paused, wk.Holding)
	}
	if a := run.Actions[len(run.Actions)-1].String(); a != "write w=0 held" {
		t.Errorf("text form %q", a)
	} else if b, err := ParseAction(a); err != nil || b != run.Actions[len(run.Actions)-1] {
		t.Errorf("ParseAction(%q) = %v, %v", a, b, err)
	}
	network := func() (touched bool) {
		for _, a := range m.Enabled(s, nil) {
			if (a.Kind == Deliver || a.Kind == Drop || a.Kind == Duplicate) && a.Msg.Kind == WriteReq {
				touched = true
			}
		}
		return touched
	}
	if network() {
		t.Fatal("the network can take a write its worker holds")
	}
	run.Do(Action{Kind: Tick})
	if msg := s.Msgs[0]; msg.Kind != WriteReq || msg.Age != 0 {
		t.Fatalf("a held write aged: %+v", msg)
	}
	run.Do(Action{Kind: Resume, Worker: 0})
	if s.Workers[0].Holding || !network() {
		t.Fatal("the write did not leave when its worker resumed")
	}
	run.Do(Action{Kind: Tick})
	if s.Msgs[0].Age != 1 {
		t.Fatalf("a sent write does not age: %+v", s.Msgs[0])
	}

	run = script(t, m, acquireAt(0, 0), deliver(AcquireReq, 0, 0), deliver(AdvanceReq, 0, 0), deliver(AdvanceRep, 0, 0),
		deliver(AcquireRep, 0, 0), heldWrite, kind(Crash, 0))
	if s := &run.State; s.Workers[0].Holding || s.Workers[0].Paused || !m.IsEnabled(s, Action{Kind: Deliver, Msg: s.Msgs[0]}) {
		t.Fatalf("after a crash the held write did not leave: %+v", s.Workers[0])
	}

	cfg.Delay = 0
	async, err := New(cfg, Design{})
	if err != nil {
		t.Fatal(err)
	}
	r := script(t, async, acquireAt(0, 0), deliver(AcquireReq, 0, 0), deliver(AdvanceReq, 0, 0), deliver(AdvanceRep, 0, 0),
		deliver(AcquireRep, 0, 0))
	for _, a := range async.Enabled(&r.State, nil) {
		if a.Hold {
			t.Fatalf("an asynchronous network offers %v", a)
		}
	}
}

// afterSinkRestart is design d's machine and its state after a sink
// restart of a sink that held two results, resource 0's by worker 0 and
// resource 1's by worker 1, each from its resource's first grant.
func afterSinkRestart(t *testing.T, d Design) (*Machine, State) {
	t.Helper()
	c := Config{Workers: 2, Resources: 2, Replicas: 1, TTL: 2, Ops: 3, Grants: 2, InFlight: 3, SinkRestarts: 2}
	m, err := New(c, d)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Init()
	s.Sink.Results[0] = Result{Res: 0, Writer: 1, Token: 1, Grant: 1}
	s.Sink.Results[1] = Result{Res: 1, Writer: 2, Token: 1, Grant: 1}
	s.Sink.NResults = 2
	m.Next(&s, &Action{Kind: SinkCrash})
	return m, s
}

// TestSinkRestartKeepsResultsInOrder: the results a design's SinkRestart
// returns out of order are kept in order, as every step keeps them (the
// canonical forms of the symmetry reduction assume it).
func TestSinkRestartKeepsResultsInOrder(t *testing.T) {
	_, s := afterSinkRestart(t, Design{SinkRestart: func(s Sink) Sink {
		slices.Reverse(s.Results[:s.NResults])
		return s
	}})
	if r := s.Sink.Results; r[0].Res != 0 || r[1].Res != 1 {
		t.Fatalf("results after the restart: %+v", r[:s.Sink.NResults])
	}
}

// TestSinkRestartKeepsTheGhostOfKeptResults: which grant a result came from
// is the ghost's, which SinkRestart is not shown: a result it keeps as it
// was keeps its grant, one it changed or made up came from no grant, and
// the entries past its results are zero.
func TestSinkRestartKeepsTheGhostOfKeptResults(t *testing.T) {
	_, s := afterSinkRestart(t, Design{Asymmetric: true, SinkRestart: func(s Sink) Sink {
		s.Results[1].Writer = 1                                              // changed
		s.Results[2] = Result{Res: 1, Key: 0, Writer: 2, Token: 2, Grant: 2} // made up, with a grant of its own
		s.Results[3] = Result{Res: 1, Writer: 1, Token: 1}                   // past NResults
		s.NResults = 3
		return s
	}})
	want := [MaxResults]Result{{Res: 0, Writer: 1, Token: 1, Grant: 1}, {Res: 1, Writer: 1, Token: 1}, {Res: 1, Writer: 2, Token: 2}}
	if s.Sink.Results != want || s.Sink.NResults != 3 {
		t.Fatalf("results after the restart: %+v (%d), want %+v", s.Sink.Results, s.Sink.NResults, want)
	}
}

// TestLostResultsAreState: the payload a sink restart lost is part of the
// state: encoded and decoded, renamed with its writer and its resource,
// and the same orbit for every renaming; and of the payloads lost, the
// one with the highest token stays (a write below it is below a token the
// sink accepted).
func TestLostResultsAreState(t *testing.T) {
	m, s := afterSinkRestart(t, Design{SinkRestart: func(s Sink) Sink {
		s.Results, s.NResults = [MaxResults]Result{}, 0
		return s
	}})
	if g := s.Ghost; g[0].LostWriter != 1 || g[0].LostToken != 1 || g[1].LostWriter != 2 || g[1].LostToken != 1 {
		t.Fatalf("ghost after the restart: %+v, %+v", g[0], g[1])
	}
	for _, k := range []struct{ writer, token, wantWriter, wantToken uint8 }{
		{1, 3, 1, 3}, // a higher token lost replaces the lower
		{2, 2, 1, 3}, // a lower one does not
	} {
		s.Sink.Results[0] = Result{Res: 1, Writer: k.writer, Token: k.token, Grant: 2}
		s.Sink.NResults = 1
		m.Next(&s, &Action{Kind: SinkCrash})
		if g := s.Ghost[1]; g.LostWriter != k.wantWriter || g.LostToken != k.wantToken {
			t.Fatalf("after losing writer %d's token %d: %+v, want writer %d's token %d", k.writer, k.token, g, k.wantWriter, k.wantToken)
		}
	}
	var u State
	if err := m.Decode(m.Encode(&s, nil), &u); err != nil || u != s {
		t.Fatalf("Decode(Encode(s)): %v, equal %v", err, u == s)
	}
	p := Perm{W: [MaxWorkers]uint8{1, 0, 2, 3}, R: [MaxResources]uint8{1, 0, 2}}
	ps := m.Permute(&s, &p)
	if g := ps.Ghost[0]; g.LostWriter != 2 || g.LostToken != 3 {
		t.Fatalf("renamed, resource 1's lost payload became resource 0's %+v", g)
	}
	canon := m.NewCanon(SymWorkers | SymResources)
	a, _ := canon.Key(&s, nil)
	b, _ := canon.Key(&ps, nil)
	if string(a) != string(b) {
		t.Fatal("a state and its renaming have different canonical keys")
	}
}
