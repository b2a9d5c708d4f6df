package checker

import (
	"context"
	"testing"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestDesignsCannotHideAViolation: a decision's answer never decides what
// the invariants see. Each design here has a bug a real implementation
// would show, made by a decision the ghost once took at its word; a
// complete search finds it, and the history checker, which reads only
// what the processes saw, finds it in the counterexample's history too.
func TestDesignsCannotHideAViolation(t *testing.T) {
	base := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 3, Grants: 3, InFlight: 2}
	for _, k := range []struct {
		name   string
		c      func(c model.Config) model.Config
		design model.Design
		want   spec.Set
	}{
		{
			// Redis's classic: a release that does not check its owner
			// frees another worker's lease, whose holder goes on counting
			// on it; the releaser acquires again while it does.
			name:   "a release from anyone frees the lease",
			c:      func(c model.Config) model.Config { return c },
			design: model.Design{Release: func(model.Lease, model.Msg) uint8 { return model.RepOK }},
			want:   spec.SetOf(spec.ExclusiveLease),
		},
		{
			// Dedup keyed by the client, not the request: a new acquire of a
			// worker whose lease expired and was taken over gets its old
			// token again.
			name: "a new request answered as a retry",
			c:    func(c model.Config) model.Config { c.Grants = 2; return c },
			design: model.Design{Answers: func(d model.Dedup, req model.Msg) uint8 {
				if d.Req != 0 && d.Inc == req.Inc {
					return model.RepOK
				}
				return model.RefAnswers(d, req)
			}},
			want: spec.SetOf(spec.ExclusiveLease, spec.TokenMonotonic),
		},
		{
			// A restart that rewrites a worker's record to the token the
			// lease's holder has: the worker's retry is answered with it.
			name: "a restart rewrites a record to another's token",
			c: func(c model.Config) model.Config {
				c.Ops, c.Grants, c.Drops, c.Restarts = 2, 2, 1, 1
				return c
			},
			design: model.Design{Restart: func(co model.Coordinator, ttl int) model.Coordinator {
				for r := range co.Lease {
					for w := range co.Dedup[r] {
						if l := co.Lease[r]; co.Dedup[r][w].Req != 0 && l.Holder != 0 && int(l.Holder) != w+1 {
							co.Dedup[r][w].Token = l.Token
						}
					}
				}
				return model.RefRestart(co, ttl)
			}},
			want: spec.SetOf(spec.TokenMonotonic),
		},
		{
			// A sink whose results do not survive its restart: another
			// worker's payload for the task is accepted after it.
			name: "a sink restart forgets the results",
			c: func(c model.Config) model.Config {
				c.Ops, c.Grants, c.SinkRestarts = 2, 2, 1
				return c
			},
			design: model.Design{SinkRestart: func(s model.Sink) model.Sink {
				s.Results, s.NResults = [model.MaxResults]model.Result{}, 0
				return s
			}},
			want: spec.SetOf(spec.IdempotentResult),
		},
	} {
		m := newMachine(t, k.c(base), k.design)
		r := BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers | model.SymResources,
			Reduce: model.Reductions})
		if !r.Complete || r.Violated&k.want != k.want {
			t.Errorf("%s: %s, violated %v; want %v", k.name, r.Stopped, r.ViolatedIDs, k.want.IDs())
			continue
		}
		// The history of each shortest counterexample shows the bug to
		// the history checker too, which reads only what the processes
		// saw: the violation is the design's, not the ghost's. (Not
		// always as the same invariant: a token the coordinator issued
		// after a higher one is out of order in the model, while the
		// history, in which both acquires overlap, cannot order them.)
		for _, x := range r.Shortest {
			if !k.want.Has(x.Invariant) {
				continue
			}
			run, _, err := Replay(m, x.Run.Actions)
			if err != nil {
				t.Fatalf("%s: %s's counterexample does not replay: %v", k.name, x.Invariant, err)
			}
			deliverGrants(run) // a grant judged at the coordinator shows in the history when its worker takes it
			if h := HistoryViolations(run); h&k.want == 0 {
				t.Errorf("%s: the history of %s's counterexample violates %v, none of %v", k.name, x.Invariant, h.IDs(), k.want.IDs())
			}
		}
	}
}

// deliverGrants delivers to their workers the live acquire replies in
// flight in run.
func deliverGrants(run *model.Run) {
	for {
		var next *model.Action
		for _, a := range run.M.Enabled(&run.State, nil) {
			if a.Kind == model.Deliver && a.Msg.Kind == model.AcquireRep && a.Msg.Live {
				next = &a
				break
			}
		}
		if next == nil {
			return
		}
		run.Do(*next)
	}
}
