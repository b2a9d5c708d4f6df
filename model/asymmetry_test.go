package model_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// asymConfig reaches every decision the renaming check covers: two workers
// and two resources to rename, and restarts of both kinds.
var asymConfig = model.Config{Workers: 2, Resources: 2, Replicas: 1, TTL: 1, Ops: 2, Grants: 1, InFlight: 2,
	Restarts: 1, SinkRestarts: 1}

// twoStep makes a design's write two steps, with the reference's checks.
func twoStep(d model.Design) model.Design {
	if d.Commit == nil {
		d.Commit = model.RefCheck
	}
	return d
}

// toldApart is, per decision the renaming check covers, a design whose
// decision of that name tells workers or resources apart.
var toldApart = map[string]model.Design{
	"Answers": {Answers: func(d model.Dedup, req model.Msg) uint8 {
		if a := model.RefAnswers(d, req); a != 0 || req.Worker == 0 {
			return a
		}
		return model.RepHeld
	}},
	"Valid": {Valid: func(l model.Lease, req model.Msg) bool { return model.RefValid(l, req) || req.Worker == 1 }},
	"Deadline": {Deadline: func(_ model.Lease, req model.Msg, ttl int) int8 {
		return model.Clamp(ttl + int(req.Worker))
	}},
	"Renew": {Renew: func(l model.Lease, req model.Msg) uint8 {
		if c := model.RefRenew(l, req); c != model.RepOK || req.Res == 0 {
			return c
		}
		return model.RepExpired
	}},
	"Release": {Release: func(l model.Lease, req model.Msg) uint8 {
		if l.Holder == 1 {
			return model.RepNotHolder
		}
		return model.RefRelease(l, req)
	}},
	"Check": {Check: func(v model.SinkView, w model.Msg) uint8 {
		if c := model.RefCheck(v, w); c != model.RepOK || w.Worker == 0 {
			return c
		}
		return model.RepExpired
	}},
	"Commit": twoStep(model.Design{Commit: func(v model.SinkView, w model.Msg) uint8 {
		if c := model.RefCheck(v, w); c != model.RepOK || w.Res == 0 {
			return c
		}
		return model.RepExpired
	}}),
	"Prepared": twoStep(model.Design{Prepared: func(u model.Regs, w model.Msg) model.Regs {
		u.A = w.Worker
		return u
	}}),
	"Accepted": {Accepted: func(v model.SinkView, w model.Msg) (uint8, model.Regs) {
		f, u := model.RefAccepted(v, w)
		u.B = w.PW
		return f, u
	}},
	"OnReply": {OnReply: func(u model.Regs, _ uint8, rep model.Msg, _ int) model.Regs {
		u.A = rep.Res
		return u
	}},
	"Restart": {Restart: func(co model.Coordinator, ttl int) model.Coordinator {
		for r := 1; r < model.MaxResources; r++ {
			co.Lease[r] = model.Lease{} // only the first resource's lease is durable
		}
		co.U.T = model.Clamp(ttl)
		return co
	}},
	"OnLease": {OnLease: func(_ model.LeaseEvent, ru model.Regs, l model.Lease, _ int) model.Regs {
		ru.A = l.Holder
		return ru
	}},
	"Key": {Key: func(w model.Msg, _ uint8) uint8 { return w.Worker + 1 }},
	"SinkRestart": {SinkRestart: func(s model.Sink) model.Sink {
		var kept model.Sink
		kept.Fence, kept.U = s.Fence, s.U
		for _, x := range s.Results[:s.NResults] {
			if x.Res == 0 { // only the first resource's results are durable
				kept.Results[kept.NResults] = x
				kept.NResults++
			}
		}
		return kept
	}},
}

// faultNames is, for a decision of toldApart, what its fault names: the
// answers that differ, or the field of a restarted coordinator or sink.
var faultNames = map[string]string{
	"Answers":  "it returned RepHeld, where it returned 0 (no answer) on the inputs as they were",
	"Valid":    "it returned true, where it returned false",
	"Deadline": "it returned", "Renew": "it returned", "Release": "it returned", "Check": "it returned",
	"Commit": "it returned", "Prepared": "it returned", "Accepted": "it returned", "OnReply": "it returned",
	"OnLease": "it returned", "Key": "it returned", "Restart": "whose Lease[", "SinkRestart": "whose Results[",
}

// alike is a design whose own decisions read worker and resource numbers
// but treat every worker and every resource alike.
var alike = twoStep(model.Design{
	Valid: func(l model.Lease, req model.Msg) bool {
		return l.Holder != 0 && (l.Left > 0 || l.Holder == req.Worker+1)
	},
	Renew: func(l model.Lease, req model.Msg) uint8 {
		if !model.RefOwns(l, req) {
			return model.RepNotHolder
		}
		return model.RefRenew(l, req)
	},
	Check: func(v model.SinkView, w model.Msg) uint8 {
		if v.Lease.Holder != 0 && v.Lease.Holder != w.Worker+1 && v.Lease.Token == w.Token {
			return model.RepFenced
		}
		return model.RefCheck(v, w)
	},
	OnLease: func(e model.LeaseEvent, ru model.Regs, l model.Lease, _ int) model.Regs {
		if l.Holder != 0 {
			ru.A = uint8(e)
		}
		return ru
	},
	OnReply: func(u model.Regs, op uint8, rep model.Msg, _ int) model.Regs {
		if rep.PW != 0 && rep.PW != rep.Worker+1 {
			u.B = op // a read saw another worker's result
		}
		return u
	},
	Key: func(w model.Msg, attempt uint8) uint8 { return w.Key ^ attempt }, // reads the key the request has so far
	// What it writes into the ghost's fields, and a lease it makes up, the
	// framework does not keep (restartKept), so they tell nothing apart.
	Restart: func(co model.Coordinator, _ int) model.Coordinator {
		for r := range co.Lease {
			if co.Lease[r].Holder == 0 {
				co.Lease[r] = model.Lease{Holder: 1, Token: 9}
			}
			co.Lease[r].Grant = co.Lease[r].Holder
			co.Dedup[r][0].Grant = 7
		}
		return co
	},
	SinkRestart: func(s model.Sink) model.Sink {
		for i := range s.U {
			s.U[i] = model.Regs{}
		}
		return s
	},
})

// tryNext is the state after action a of s, or the design fault it panics
// with.
func tryNext(m *model.Machine, s model.State, a model.Action) (n model.State, f *model.DesignFault) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); !ok || !errors.As(err, &f) {
				panic(r)
			}
		}
	}()
	m.Next(&s, &a)
	return s, nil
}

// tryEnabled is Enabled, or the design fault it panics with (it asks
// Answers and Valid whether an acquire can be delivered).
func tryEnabled(m *model.Machine, s *model.State) (acts []model.Action, f *model.DesignFault) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); !ok || !errors.As(err, &f) {
				panic(r)
			}
		}
	}()
	return m.Enabled(s, nil), nil
}

// successors are s's successors, or the first design fault a step of s
// panics with.
func successors(m *model.Machine, s *model.State) ([]model.State, *model.DesignFault) {
	acts, f := tryEnabled(m, s)
	if f != nil {
		return nil, f
	}
	var out []model.State
	for _, a := range acts {
		n, f := tryNext(m, *s, a)
		if f != nil {
			return nil, f
		}
		out = append(out, n)
	}
	return out, nil
}

// stepKind is a's kind and, for a delivery, its message's.
func stepKind(a model.Action) [2]uint8 {
	if a.Kind == model.Deliver {
		return [2]uint8{uint8(a.Kind), a.Msg.Kind}
	}
	return [2]uint8{uint8(a.Kind)}
}

// leads reports whether a step of kind leads towards the decisions a
// renaming check covers.
func leads(k model.Kind) bool {
	switch k {
	case model.Acquire, model.Renew, model.Release, model.Write, model.Read, model.Deliver, model.Tick, model.Restart,
		model.SinkCrash:
		return true
	}
	return false
}

// encodings is the set of the encodings of states, each renamed by p.
func encodings(m *model.Machine, states []model.State, p *model.Perm) map[string]bool {
	out := map[string]bool{}
	for i := range states {
		n := m.Permute(&states[i], p)
		out[string(m.Encode(&n, nil))] = true
	}
	return out
}

// checkRenamings searches m breadth-first, up to max states, and judges
// the renaming check against its definition, by brute force: at every
// state whose steps raise no design fault, every renaming of the state has
// the renamed successors (what the searches' symmetry reduction needs),
// and raises no fault either. It returns the first fault the search met.
// Each state is judged on all its steps, but the search goes on only by
// the steps that lead to the decisions (leases taken, renewed, released,
// written under, and restarts), so that it reaches all of them early. It
// adds to steps the kinds of step it judged (Action.Kind, and for a
// delivery the message's kind: see stepKind).
func checkRenamings(t *testing.T, name string, m *model.Machine, max int, steps map[[2]uint8]bool) *model.DesignFault {
	t.Helper()
	perms := allPerms(m, m.Symmetries())
	id := model.Identity()
	init := m.Init()
	queue := []model.State{init}
	seen := map[string]bool{string(m.Encode(&init, nil)): true}
	for len(queue) > 0 && len(seen) < max {
		s := queue[0]
		queue = queue[1:]
		succ, f := successors(m, &s)
		if f != nil {
			return f
		}
		acts := m.Enabled(&s, nil)
		for _, a := range acts {
			steps[stepKind(a)] = true
		}
		for _, p := range perms {
			ps := m.Permute(&s, &p)
			psucc, f := successors(m, &ps)
			if f != nil {
				t.Fatalf("%s: a renaming by %v of a state whose steps raise no fault raises %v", name, p, f)
			}
			want, got := encodings(m, succ, &p), encodings(m, psucc, &id)
			if len(want) != len(got) {
				t.Fatalf("%s: %d successors, %d after renaming by %v", name, len(want), len(got), p)
			}
			for enc := range want {
				if !got[enc] {
					t.Fatalf("%s: renaming by %v does not commute with a step, and no fault was raised", name, p)
				}
			}
		}
		for i, n := range succ {
			if !leads(acts[i].Kind) {
				continue
			}
			if enc := string(m.Encode(&n, nil)); !seen[enc] {
				seen[enc] = true
				queue = append(queue, n)
			}
		}
	}
	t.Logf("%s: %d states, %d queued", name, len(seen), len(queue))
	return nil
}

// TestRenamingCheck: a design whose own decision tells workers or
// resources apart (toldApart) and that does not declare Asymmetric makes a
// step panic with a DesignFault naming the decision and Asymmetric; one
// that declares it, and a design whose decisions read numbers but treat
// every worker and resource alike, run with no fault. The check is judged
// by brute force against what the searches' symmetry reduction needs:
// wherever no step faults, the renamed states have the renamed
// successors.
func TestRenamingCheck(t *testing.T) {
	m, err := model.New(asymConfig, alike)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[[2]uint8]bool{}
	if f := checkRenamings(t, "alike", m, 20000, steps); f != nil {
		t.Fatalf("alike: %v", f)
	}
	deliver := func(msg uint8) [2]uint8 { return [2]uint8{uint8(model.Deliver), msg} }
	for _, k := range [][2]uint8{deliver(model.AcquireReq), deliver(model.RenewReq), deliver(model.ReleaseReq),
		deliver(model.WriteReq), deliver(model.Commit), deliver(model.ReadRep), {uint8(model.Restart)}, {uint8(model.SinkCrash)}} {
		if !steps[k] {
			t.Errorf("alike: no step %v judged", k)
		}
	}
	for decision, d := range toldApart {
		m, err := model.New(asymConfig, d)
		if err != nil {
			t.Fatal(err)
		}
		f := checkRenamings(t, decision, m, 20000, steps)
		if f == nil || f.Decision != decision || !strings.Contains(f.Detail, "model.Design.Asymmetric") {
			t.Fatalf("%s: fault %v", decision, f)
		}
		if want := faultNames[decision]; !strings.Contains(f.Detail, want) {
			t.Errorf("%s: %q names no %q", decision, f.Detail, want)
		}
		d.Asymmetric = true
		if m, err = model.New(asymConfig, d); err != nil {
			t.Fatal(err)
		}
		if f := checkRenamings(t, decision+" declared", m, 2000, steps); f != nil {
			t.Fatalf("%s, declared Asymmetric: %v", decision, f)
		}
	}
}
