package model

import (
	"errors"
	"strings"
	"testing"
)

// ageDeadline counts a deadline from when the request was sent, by its age.
func ageDeadline(_ Lease, req Msg, ttl int) int8 { return Clamp(ttl - int(req.Age)) }

// TestNewRefusesUndeclaredAgeReads: without ReportsTime, New refuses a
// design whose decisions its probes see read a message's age (the timers
// and ages reductions, which rest on the declaration, proved such a design
// safe although it is not), and names ReportsTime and the decision; with
// it, the design is accepted. A read of the age of a message that never
// ages under the config (a write, without Config.Delay) changes nothing
// and is accepted; the same read under a bounded delay is refused. The
// reference's decisions, set explicitly, are not checked.
func TestNewRefusesUndeclaredAgeReads(t *testing.T) {
	c := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 2, InFlight: 2}
	refused := func(name string, c Config, d Design, decision string) {
		t.Helper()
		m, err := New(c, d)
		if m != nil || err == nil || !strings.Contains(err.Error(), "ReportsTime") ||
			!strings.Contains(err.Error(), "design: "+decision+" reads the age") {
			t.Errorf("%s: New: %v, %v", name, m != nil, err)
		}
	}
	accepted := func(name string, c Config, d Design) *Machine {
		t.Helper()
		m, err := New(c, d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	refused("Deadline", c, Design{Deadline: ageDeadline}, "Deadline")
	accepted("Deadline, declared", c, Design{ReportsTime: true, Deadline: ageDeadline})
	refused("Reported", c, Design{Valid: func(l Lease, req Msg) bool { return l.Holder != 0 && Reported(req) < int(l.Left) }}, "Valid")
	refused("Renew", c, Design{Renew: func(l Lease, req Msg) uint8 {
		if req.Age > 1 {
			return RepExpired
		}
		return RefRenew(l, req)
	}}, "Renew")
	refused("Answers", c, Design{Answers: func(d Dedup, req Msg) uint8 {
		if req.Age > 0 {
			return RepHeld
		}
		return RefAnswers(d, req)
	}}, "Answers")
	check := Design{Check: func(v SinkView, w Msg) uint8 {
		if w.Age > 0 {
			return RepExpired
		}
		return RefCheck(v, w)
	}}
	accepted("Check, no delay", c, check)
	delayed := c
	delayed.Delay = 1
	refused("Check, delay", delayed, check, "Check")
	// Reply codes are named ("it returned 6 and 4" said nothing).
	if _, err := New(delayed, check); err == nil || !strings.Contains(err.Error(), "returned RepFenced and RepExpired") {
		t.Errorf("Check, delay: %v, want the codes named", err)
	}
	refs := Design{Answers: RefAnswers, Valid: RefValid, Deadline: RefDeadline, Renew: RefRenew, Release: RefRelease,
		Check: RefCheck, Prepared: RefPrepared, Accepted: RefAccepted, OnReply: RefOnReply}
	if m := accepted("the reference's, set", delayed, refs); m.ageChecked != 0 {
		t.Errorf("the reference's decisions are checked: %b", m.ageChecked)
	}
	refused("Restart", c, Design{Restart: func(co Coordinator, ttl int) Coordinator {
		co = RefRestart(co, ttl)
		co.U.T = Clamp(int(co.U.T) - int(co.Wait[0].Age))
		return co
	}}, "Restart")
	// A probe that panics tells nothing: the design is accepted.
	accepted("panicking probe", c, Design{Valid: func(l Lease, req Msg) bool {
		if l.Holder > 1 {
			panic("no such holder")
		}
		return RefValid(l, req)
	}})
}

// TestStepChecksAges: a design whose age read New's probes miss (its
// Deadline reads the age only of requests its Stamp marks) is caught by
// the step that takes the decision: Next panics with a DesignFault naming
// the decision and ReportsTime, whatever the request's age.
func TestStepChecksAges(t *testing.T) {
	c := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 2, InFlight: 2}
	d := Design{
		Stamp: func(_ Regs, kind uint8) uint8 {
			if kind == RenewReq {
				return 7
			}
			return 0
		},
		Deadline: func(old Lease, req Msg, ttl int) int8 {
			if req.U == 7 {
				return ageDeadline(old, req, ttl)
			}
			return Clamp(ttl)
		},
	}
	m, err := New(c, d)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Init()
	take := func(match func(a *Action) bool) Fact {
		t.Helper()
		for _, a := range m.Enabled(&s, nil) {
			if match(&a) {
				return m.Next(&s, &a)
			}
		}
		t.Fatalf("no such action in %+v", s)
		return Fact{}
	}
	kind := func(k Kind) func(a *Action) bool { return func(a *Action) bool { return a.Kind == k && a.Worker == 0 } }
	deliver := func(msg uint8) func(a *Action) bool {
		return func(a *Action) bool { return a.Kind == Deliver && a.Msg.Kind == msg }
	}
	take(kind(Acquire))
	take(deliver(AcquireReq))
	take(deliver(AdvanceReq))
	take(deliver(AdvanceRep))
	take(deliver(AcquireRep))
	if s.Workers[0].Token == 0 {
		t.Fatal("w1 holds no lease")
	}
	take(kind(Renew))
	take(kind(Tick))
	defer func() {
		var f *DesignFault
		if err, ok := recover().(error); !ok || !errors.As(err, &f) || f.Decision != "Deadline" ||
			!strings.Contains(f.Detail, "ReportsTime") {
			t.Fatalf("the renew's delivery: %v", err)
		}
	}()
	take(deliver(RenewReq))
	t.Fatal("the renew's delivery took the age-reading Deadline")
}

// TestRestartChecksAges: a Restart that reads the age of an acquire the
// coordinator waits to grant (Waiting.Age), on inputs New's probes miss
// (acquires its Stamp marks), is caught by the restart: Next panics with a
// DesignFault naming Restart and ReportsTime.
func TestRestartChecksAges(t *testing.T) {
	c := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2, Restarts: 1}
	d := Design{
		Stamp: func(_ Regs, kind uint8) uint8 { return 7 },
		Restart: func(co Coordinator, ttl int) Coordinator {
			co = RefRestart(co, ttl)
			if w := co.Wait[0]; w.U == 7 {
				co.U.T = Clamp(ttl - int(w.Age)) // a grace period from when the acquire was sent
			}
			return co
		},
	}
	m, err := New(c, d)
	if err != nil {
		t.Fatal(err)
	}
	s := acquireWaiting(t, m)
	defer func() {
		var f *DesignFault
		if err, ok := recover().(error); !ok || !errors.As(err, &f) || f.Decision != "Restart" ||
			!strings.Contains(f.Detail, "ReportsTime") || !strings.Contains(f.Detail, "Waiting.Age") {
			t.Fatalf("the restart: %v", err)
		}
	}()
	m.Next(&s, &Action{Kind: Restart})
	t.Fatal("the restart took the age-reading Restart")
}

// TestNextWithCheckedDecisionsDoesNotAllocate: the age checks of a
// design's own decisions allocate nothing.
func TestNextWithCheckedDecisionsDoesNotAllocate(t *testing.T) {
	d := Design{Valid: func(l Lease, req Msg) bool { return RefValid(l, req) },
		Deadline: func(old Lease, req Msg, ttl int) int8 { return RefDeadline(old, req, ttl) },
		Renew:    func(l Lease, req Msg) uint8 { return RefRenew(l, req) },
		Check:    func(v SinkView, w Msg) uint8 { return RefCheck(v, w) },
		Accepted: func(v SinkView, w Msg) (uint8, Regs) { return RefAccepted(v, w) },
		OnReply:  func(u Regs, op uint8, rep Msg, ttl int) Regs { return RefOnReply(u, op, rep, ttl) },
		Restart:  func(co Coordinator, ttl int) Coordinator { return RefRestart(co, ttl) }}
	c := DefaultConfig()
	c.Delay = 2
	m, err := New(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if m.ageChecked == 0 {
		t.Fatal("no decision checked")
	}
	s := acquireWaiting(t, m) // the restart checks Restart
	if allocs := testing.AllocsPerRun(20, func() {
		u := s
		m.Next(&u, &Action{Kind: Restart})
	}); allocs != 0 {
		t.Fatalf("a restart allocates %.1f times", allocs)
	}
	acquires := 0
	for seed := range uint64(20) {
		run := walk(m, seed, 40, nil)
		acts := m.Enabled(&run.State, nil)
		if allocs := testing.AllocsPerRun(20, func() {
			for _, a := range acts {
				s := run.State
				m.Next(&s, &a)
			}
		}); allocs != 0 {
			t.Fatalf("Next allocates %.1f times per %d actions", allocs, len(acts))
		}
		// Enabled asks Answers and Valid at every age too (deliverable).
		for _, msg := range run.State.Msgs[:run.State.NMsgs] {
			if msg.Kind == AcquireReq {
				acquires++
			}
		}
		buf := make([]Action, 0, 256)
		if allocs := testing.AllocsPerRun(20, func() { buf = m.Enabled(&run.State, buf[:0]) }); allocs != 0 {
			t.Fatalf("Enabled allocates %.1f times", allocs)
		}
	}
	if acquires == 0 {
		t.Fatal("no walk ended with an acquire in flight: Enabled's checks of Valid were not tried")
	}
}

// TestNewRefusesAnUnknownTokenPlan: a Tokens that is none of the four
// plans ran as CounterOnly, silently; New refuses it, naming the field.
func TestNewRefusesAnUnknownTokenPlan(t *testing.T) {
	for p := FenceFirst; p <= CounterOnly; p++ {
		if _, err := New(DefaultConfig(), Design{Tokens: p}); err != nil {
			t.Fatalf("plan %d: %v", p, err)
		}
	}
	for _, p := range []TokenPlan{CounterOnly + 1, 9, 255} {
		m, err := New(DefaultConfig(), Design{Tokens: p})
		if m != nil || err == nil || !strings.Contains(err.Error(), "Tokens") {
			t.Fatalf("plan %d: %v, %v", p, m != nil, err)
		}
	}
}

// TestAsymmetricRenamesNothing: a design that declares Asymmetric tells
// workers or resources apart, so neither are renamed (it turned off only
// the renaming of workers, and a design that told resources apart had no
// way to say so).
func TestAsymmetricRenamesNothing(t *testing.T) {
	c := DefaultConfig()
	m, err := New(c, Design{Asymmetric: true})
	if err != nil {
		t.Fatal(err)
	}
	if sym := m.Symmetries(); sym != 0 {
		t.Fatalf("Asymmetric: symmetries %b", sym)
	}
	if canon := m.NewCanon(SymWorkers | SymResources); canon.order != 1 {
		t.Fatalf("Asymmetric: a group of %d renamings", canon.order)
	}
	if m, _ = New(c, Design{}); m.Symmetries() != SymWorkers|SymResources {
		t.Fatalf("reference: symmetries %b", m.Symmetries())
	}
}

// acquireWaiting is m's initial state after an acquire is sent and
// delivered: the coordinator waits for the sink's advance to grant it.
func acquireWaiting(t *testing.T, m *Machine) State {
	t.Helper()
	s := m.Init()
	for _, k := range []Kind{Acquire, Deliver} {
		for _, a := range m.Enabled(&s, nil) {
			if a.Kind == k {
				m.Next(&s, &a)
				break
			}
		}
	}
	if s.Coord[0].Wait[0].Worker == 0 {
		t.Fatalf("no acquire waits: %+v", s.Coord[0])
	}
	return s
}
