package checker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestDesignFaults: a design whose decision returns what its doc does not
// allow (a reply code none of its own), or panics, or tells workers apart
// without saying so (model.Design.Asymmetric), makes every search stop with
// a Fault naming it — the
// random search with the run to the step, which replays to it (and a
// replay of the step ends with an error naming it) — never a
// Go panic out of a search goroutine, nor a proof. (A Check answering 42
// once crashed the random search and let the breadth-first one prove the
// design; a panicking decision killed the process from a crew goroutine.
// An undeclared asymmetry was a fault only when a breadth-first search
// found a counterexample it could not take again through its orbits: the
// random search, the progress check and a search that found none did not
// see it.)
func TestDesignFaults(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}
	for _, d := range []struct {
		name   string
		design model.Design
		cause  string
	}{
		{"a reply code of no decision", model.Design{Check: func(v model.SinkView, w model.Msg) uint8 {
			if w.Token < v.Fence {
				return 42
			}
			return model.RefCheck(v, w)
		}}, "design: Check returned reply code 42, want one of [RepOK RepExpired RepFenced]"},
		{"a decision that panics", model.Design{Renew: func(l model.Lease, req model.Msg) uint8 {
			panic("renew: not written yet")
		}}, "a step panicked: renew: not written yet"},
		{"workers told apart, undeclared", model.Design{Deadline: func(old model.Lease, req model.Msg, ttl int) int8 {
			if req.Worker == 1 {
				ttl *= 2
			}
			return model.RefDeadline(old, req, ttl)
		}}, "design: Deadline tells workers or resources apart"},
	} {
		m := newMachine(t, c, d.design)
		res := RandomSearch(context.Background(), m, SearchOptions{Seed: 1, Runs: 2000, Steps: 60, Stop: spec.SetOf(spec.Fencing)})
		if f := res.Fault; f == nil || !strings.Contains(f.Cause, d.cause) || res.Found != nil || !res.Complete {
			t.Fatalf("%s: random search: fault %+v, found %v", d.name, f, res.Found != nil)
		}
		acts := make([]model.Action, len(res.Fault.Actions))
		for i, s := range res.Fault.Actions {
			a, err := model.ParseAction(s)
			if err != nil {
				t.Fatal(err)
			}
			acts[i] = a
		}
		if _, _, err := Replay(m, acts[:len(acts)-1]); err != nil {
			t.Fatalf("%s: the run to the fault does not replay: %v", d.name, err)
		}
		if _, _, err := Replay(m, acts); err == nil || !strings.Contains(err.Error(), d.cause) {
			t.Errorf("%s: the fault's last step, replayed: %v", d.name, err)
		}
		var f *Fault
		p := Progress(context.Background(), m, ProgressOptions{Extra: 1, MaxStates: 200000})
		if !errors.As(p.Err, &f) || !strings.Contains(f.Cause, d.cause) {
			t.Errorf("%s: progress: %v", d.name, p.Err)
		}
		v := spec.Variant{Name: "faulty", Design: d.design}
		rs, err := Campaign(context.Background(), []spec.Variant{v}, CampaignOptions{Config: c, Seed: 1, Runs: 2000, Steps: 60})
		if r := rs[0]; err != nil || r.Fault == nil || r.Expected() || !strings.Contains(r.Problem(), d.cause) {
			t.Errorf("%s: campaign: %v, fault %+v, problem %q", d.name, err, r.Fault, r.Problem())
		}
		for _, g := range []int{1, 2} {
			r := BFS(context.Background(), m, BFSOptions{Stop: allInvariants &^ spec.NonGuarantee, Symmetry: model.SymWorkers,
				Reduce: model.Reductions, Goroutines: g})
			if r.Stopped != StopFault || r.Complete || r.Fault == nil || !strings.Contains(r.Fault.Cause, d.cause) {
				t.Errorf("%s, %d goroutines: stopped %s, fault %+v", d.name, g, r.Stopped, r.Fault)
			}
		}
	}
}

// TestSinkAsksTheSchedulerInAStepOfItsOwn: only the Check of a two-step
// write sees the coordinator's lease record (model.SinkView.Lease); a
// one-step Check, and Commit, see the zero Lease. Before, a one-step Check
// that accepted a write while the scheduler's table named its writer was
// proven safe — absolute-validity included — though a real target that
// asks the scheduler writes after the answer, and a takeover can come
// between.
func TestSinkAsksTheSchedulerInAStepOfItsOwn(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}
	sees := func(v model.SinkView) bool { return v.Lease != (model.Lease{}) }
	asks := func(v model.SinkView, w model.Msg) uint8 {
		if model.RefOwns(v.Lease, w) && v.Lease.Left > 0 {
			return model.RepOK
		}
		return model.RepFenced
	}
	for _, d := range []struct {
		name   string
		design model.Design
		fault  bool // the Check or Commit saw a lease (it panics if it does)
	}{
		{"one step", model.Design{Check: func(v model.SinkView, w model.Msg) uint8 {
			if sees(v) {
				panic("a one-step Check saw the lease")
			}
			return asks(v, w)
		}}, false},
		{"two steps, Commit", model.Design{Check: asks, Commit: func(v model.SinkView, w model.Msg) uint8 {
			if sees(v) {
				panic("a Commit saw the lease")
			}
			return model.RepOK
		}}, false},
		{"two steps, Check", model.Design{Check: func(v model.SinkView, w model.Msg) uint8 {
			if sees(v) {
				panic("the two-step Check saw the lease")
			}
			return asks(v, w)
		}, Commit: func(model.SinkView, model.Msg) uint8 { return model.RepOK }}, true},
	} {
		m := newMachine(t, c, d.design)
		r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers})
		if (r.Fault != nil) != d.fault || !d.fault && r.Stopped != StopComplete {
			t.Errorf("%s: fault %+v, stopped %v", d.name, r.Fault, r.Stopped)
		}
	}
	// The one-step form writes nothing ever (its Check never sees its
	// writer as the holder): safe, and the progress check says it is
	// stuck everywhere, as a design that rejects every write must be.
	m := newMachine(t, progressStuck, model.Design{Check: asks})
	if p := Progress(context.Background(), m, ProgressOptions{Extra: 1, MaxStates: progressLimit}); p.Err != nil || !p.Complete || p.Stuck != p.States {
		t.Errorf("progress of the one-step form: err %v, complete %v (%s, %d states), stuck %d", p.Err, p.Complete, p.Stopped, p.States, p.Stuck)
	}
}
