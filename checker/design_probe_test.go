package checker

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// Designs as a user writes them, which once got a wrong verdict from the
// breadth-first search.

// ageDeadline is a renew (and grant) deadline counted from when the
// request was sent, by its age: unsafe, since the holder counts its lease
// from when its request was answered.
func ageDeadline(_ model.Lease, req model.Msg, ttl int) int8 { return model.Clamp(ttl - int(req.Age)) }

// hiddenAgeDeadline reads the age only on requests its Stamp marks (renews),
// which New's probes of the ages do not try: only the check of every step
// can see it.
var hiddenAgeDesign = model.Design{
	Stamp: func(_ model.Regs, kind uint8) uint8 {
		if kind == model.RenewReq {
			return 7
		}
		return 0
	},
	Deadline: func(old model.Lease, req model.Msg, ttl int) int8 {
		if req.U == 7 {
			return ageDeadline(old, req, ttl)
		}
		return model.Clamp(ttl)
	},
}

// ageCase is the bound of the probe that found it: its exclusive-lease
// violation is 17 actions deep.
var ageCase = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 2, InFlight: 2}

// TestAgeReadingDesignIsNotProven: a design whose decisions read a
// request's age (Msg.Age) without declaring ReportsTime was proven safe by
// the breadth-first search, whose timers and ages reductions cut and merge
// ages on the word of that declaration; with ReportsTime the same design
// violates exclusive-lease. Now New refuses a design whose age reads its
// probes see, naming ReportsTime, and every step checks that the design's
// decisions answer alike at every age, so a design whose read the probes
// miss stops every search with a fault naming ReportsTime: no proof.
func TestAgeReadingDesignIsNotProven(t *testing.T) {
	stop := allInvariants &^ spec.NonGuarantee
	bfs := func(m *model.Machine, g int) BFSResult {
		return BFS(context.Background(), m, BFSOptions{Stop: stop, Symmetry: model.SymWorkers | model.SymResources,
			Reduce: model.Reductions, Goroutines: g})
	}
	// Declared, both are unsafe: the verdict a search must not contradict.
	for _, d := range []model.Design{{Deadline: ageDeadline}, hiddenAgeDesign} {
		d.ReportsTime = true
		if r := bfs(newMachine(t, ageCase, d), 1); r.Fault != nil || r.Violation&spec.SetOf(spec.ExclusiveLease) == 0 {
			t.Fatalf("declared: stopped %s, violation %v, fault %+v", r.Stopped, r.Violation, r.Fault)
		}
	}

	if m, err := model.New(ageCase, model.Design{Deadline: ageDeadline}); m != nil || err == nil ||
		!strings.Contains(err.Error(), "ReportsTime") || !strings.Contains(err.Error(), "Deadline") {
		t.Fatalf("New of an undeclared age reader: %v, %v", m != nil, err)
	}

	m := newMachine(t, ageCase, hiddenAgeDesign) // its probes do not see this one
	for _, g := range []int{1, 2} {
		r := bfs(m, g)
		if r.Stopped != StopFault || r.Complete || r.Fault == nil || !strings.Contains(r.Fault.Cause, "ReportsTime") ||
			!strings.Contains(r.Fault.Cause, "Deadline") {
			t.Fatalf("bfs, %d goroutines: stopped %s, violation %v, fault %+v", g, r.Stopped, r.Violation, r.Fault)
		}
	}
	res := RandomSearch(context.Background(), m, SearchOptions{Seed: 1, Runs: 2000, Steps: 60, Stop: stop})
	if res.Fault == nil || res.Found != nil || !strings.Contains(res.Fault.Cause, "ReportsTime") {
		t.Fatalf("random search: fault %+v, found %v", res.Fault, res.Found != nil)
	}
}

// TestAgeReadDecidingDeliveryIsNotProven: a Valid that reads the age of
// an acquire only when the lease's token is 2 or more, which New's probes
// do not try, decides whether an acquire can be delivered once the grants
// are spent (Machine.deliverable), where no step asked it at other ages:
// the timers reduction cut the ages to 1, the acquire was never delivered
// at age 2, and the reduced search proved the design safe while the full
// search and the random one reported the design's fault. Now the test of
// delivery asks Answers and Valid at every age too: every search reports
// the fault naming ReportsTime.
func TestAgeReadDecidingDeliveryIsNotProven(t *testing.T) {
	d := model.Design{Valid: func(l model.Lease, req model.Msg) bool {
		return model.RefValid(l, req) || l.Token >= 2 && req.Age >= 2
	}}
	m := newMachine(t, model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}, d)
	for _, reduce := range []model.Reduction{0, model.ReduceTimers, model.Reductions} {
		r := BFS(context.Background(), m, BFSOptions{Stop: allInvariants &^ spec.NonGuarantee, Symmetry: model.SymWorkers | model.SymResources, Reduce: reduce})
		if r.Fault == nil || !strings.Contains(r.Fault.Cause, "ReportsTime") {
			t.Errorf("reductions %v: stopped %s, violation %v, no fault naming ReportsTime (%+v)", reduce, r.Stopped, r.Violation.IDs(), r.Fault)
		}
	}
}

// TestResourceAsymmetricDesignIsSearched: a design whose decisions tell
// resources apart (job-2's grants a tick short) and that declares
// Asymmetric was searched with resources renamed all the same (Asymmetric
// turned off only the renaming of workers), and its counterexample could
// not be taken again through the orbits: "tell workers (or resources)
// apart, which it must declare", though it had. Asymmetric now turns off
// both, and the search finds the violation the random search finds.
func TestResourceAsymmetricDesignIsSearched(t *testing.T) {
	d := model.Design{Asymmetric: true, Deadline: func(_ model.Lease, req model.Msg, ttl int) int8 {
		if req.Res == 1 {
			return model.Clamp(ttl - 1)
		}
		return model.Clamp(ttl)
	}}
	c := model.Config{Workers: 2, Resources: 2, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}
	m := newMachine(t, c, d)
	stop := allInvariants &^ spec.NonGuarantee
	found := RandomSearch(context.Background(), m, SearchOptions{Seed: 1, Runs: 5000, Steps: 60, Stop: stop}).Found
	if found == nil {
		t.Fatal("random search found no violation")
	}
	for _, g := range []int{1, 2} {
		r := BFS(context.Background(), m, BFSOptions{Stop: stop, Symmetry: model.SymWorkers | model.SymResources,
			Reduce: model.Reductions, Goroutines: g})
		if r.Fault != nil || r.Counterexample == nil || !r.Violation.Has(found.Invariant) {
			t.Fatalf("bfs, %d goroutines: stopped %s, violation %v (random: %s), fault %+v", g, r.Stopped, r.Violation.IDs(), found.Invariant, r.Fault)
		}
	}
}

// TestSettingSinkIsCaught: a sink that sets its fence to the token an
// advance carries (UPDATE fence = $token, no max) is set back by a late
// duplicate of an older advance, and a stale holder's write gets through.
// The sink ignored late copies of every numbered advance, so the search
// proved this design safe (67,406 states at this bound); it now applies
// every copy of an advance that carries its token (CounterFirst), and
// finds the fence below the token granted. The same design with a max
// (the reference's Advance) stays safe: a copy is then harmless.
func TestSettingSinkIsCaught(t *testing.T) {
	set := func(fence, to uint8) uint8 {
		if to == 0 {
			return fence + 1
		}
		return to
	}
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 3, Dups: 1}
	stop := allInvariants &^ spec.NonGuarantee
	bfs := func(d model.Design, reduce model.Reduction) BFSResult {
		return BFS(context.Background(), newMachine(t, c, d), BFSOptions{Stop: stop, Symmetry: model.SymWorkers | model.SymResources, Reduce: reduce})
	}
	for _, reduce := range []model.Reduction{0, model.Reductions} {
		r := bfs(model.Design{Tokens: model.CounterFirst, Advance: set}, reduce)
		if r.Fault != nil || !r.Violation.Has(spec.FenceBeforeGrant) || r.Counterexample == nil {
			t.Fatalf("reductions %v: the setting sink: stopped %s, violation %v, fault %+v", reduce, r.Stopped, r.Violation.IDs(), r.Fault)
		}
	}
	if r := bfs(model.Design{Tokens: model.CounterFirst}, model.Reductions); r.Stopped != StopComplete || r.Violation != 0 {
		t.Fatalf("the max sink: stopped %s, violation %v", r.Stopped, r.Violation.IDs())
	}
}

// fromSend is a holder that counts its lease from the first send of its
// acquire (Redlock's rule: validity = ttl − the time since the send), not
// from the grant's reply (designs.HolderMargin), and stops writing margin
// ticks before it runs out; its target checks no token. B marks the
// acquire whose send armed the timer, so a retry does not arm it again: the
// coordinator may have granted the first send (a timer armed at the retry
// is counted from too late, and a margin that covers a delay and a pause
// is then a tick short). With crashes it forgets its timer (OnCrash): a
// restarted worker no longer counts on the lease.
func fromSend(margin int) spec.Variant {
	return spec.Variant{
		Name:    fmt.Sprintf("from-send-%d", margin),
		Summary: "the holder counts its lease from the first send of its acquire; the target checks no token",
		Design: model.Design{
			OnSend: func(u model.Regs, kind uint8, ttl int) model.Regs {
				if kind == model.AcquireReq && u.B == 0 {
					u.T, u.B = model.Clamp(ttl), 1
				}
				return u
			},
			OnReply: func(u model.Regs, op uint8, rep model.Msg, _ int) model.Regs {
				if op == model.OpAcquire {
					u.B = 0
					if rep.Code == model.RepOK {
						return u // the timer runs from the send
					}
				}
				if rep.Code != model.RepOK || op == model.OpRelease {
					u.T = 0
				}
				return u
			},
			OnCrash:  func(model.Regs) model.Regs { return model.Regs{} },
			MayWrite: func(u model.Regs) bool { return int(u.T) > margin },
			Check:    func(model.SinkView, model.Msg) uint8 { return model.RepOK },
		},
		Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
			May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant)},
	}
}

// TestHolderFromSendNeedsLessMargin: with message delay 1 and pauses of 1,
// a holder that counts its lease from the grant's reply (HolderMargin)
// is caught at margin 2, and one that counts it from the first send of
// its acquire (OnSend, Redlock's rule) is proven safe at margin 2 and
// caught at 1: the reply's delay and the pause before it is taken no
// longer count against the margin (docs/sweep.md). Before OnSend a
// design could not count from the send.
func TestHolderFromSendNeedsLessMargin(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 2, Grants: 2, InFlight: 2, Delay: 1, Pause: 1}
	bfs := func(d model.Design) BFSResult {
		return BFS(context.Background(), newMachine(t, c, d), BFSOptions{Stop: spec.SetOf(spec.Fencing),
			Symmetry: model.SymWorkers | model.SymResources, Reduce: model.Reductions})
	}
	if r := bfs(designs.HolderMargin(2).Design); !r.Violation.Has(spec.Fencing) {
		t.Errorf("from the reply, margin 2: stopped %s, violation %v; want fencing", r.Stopped, r.Violation.IDs())
	}
	if r := bfs(fromSend(1).Design); !r.Violation.Has(spec.Fencing) {
		t.Errorf("from the send, margin 1: stopped %s, violation %v; want fencing", r.Stopped, r.Violation.IDs())
	}
	r := bfs(fromSend(2).Design)
	if r.Stopped != StopComplete || r.Violation != 0 || r.Reached.Missing(model.SceneTakeover) != 0 {
		t.Errorf("from the send, margin 2: stopped %s, violation %v, takeover reached %d times; want a proof", r.Stopped, r.Violation.IDs(), r.Reached[0])
	}
}
