package model_test

import (
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// ghostConfig reaches every decision that reads the framework's
// structures: leases taken, renewed, released and written under, replies
// taken, and restarts of both kinds.
var ghostConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 3, Grants: 2, InFlight: 2,
	Restarts: 1, SinkRestarts: 1}

// ghostProbe counts, per decision, the calls and the calls whose inputs
// showed the ghost (a grant's identity) or the live flag.
type ghostProbe struct{ calls, saw map[string]int }

func (p *ghostProbe) see(name string, ghost bool) {
	p.calls[name]++
	if ghost {
		p.saw[name]++
	}
}

func msgGhost(m model.Msg) bool { return m.Grant != 0 || m.Live }

// design is the reference with a two-step write, each decision that reads
// the framework's structures telling p what it was shown.
func (p *ghostProbe) design() model.Design {
	return model.Design{
		Valid: func(l model.Lease, req model.Msg) bool {
			p.see("Valid", l.Grant != 0 || msgGhost(req))
			return model.RefValid(l, req)
		},
		Answers: func(d model.Dedup, req model.Msg) uint8 {
			p.see("Answers", d.Grant != 0 || msgGhost(req))
			return model.RefAnswers(d, req)
		},
		Deadline: func(old model.Lease, req model.Msg, ttl int) int8 {
			p.see("Deadline", old.Grant != 0 || msgGhost(req))
			return model.RefDeadline(old, req, ttl)
		},
		Renew: func(l model.Lease, req model.Msg) uint8 {
			p.see("Renew", l.Grant != 0 || msgGhost(req))
			return model.RefRenew(l, req)
		},
		Release: func(l model.Lease, req model.Msg) uint8 {
			p.see("Release", l.Grant != 0 || msgGhost(req))
			return model.RefRelease(l, req)
		},
		OnLease: func(e model.LeaseEvent, ru model.Regs, l model.Lease, ttl int) model.Regs {
			p.see("OnLease", l.Grant != 0)
			return model.RefOnLease(e, ru, l, ttl)
		},
		Restart: func(co model.Coordinator, ttl int) model.Coordinator {
			ghost := false
			for r := range co.Lease {
				ghost = ghost || co.Lease[r].Grant != 0
				for _, d := range co.Dedup[r] {
					ghost = ghost || d.Grant != 0
				}
			}
			p.see("Restart", ghost)
			return model.RefRestart(co, ttl)
		},
		Check: func(v model.SinkView, w model.Msg) uint8 {
			p.see("Check", v.Lease.Grant != 0 || msgGhost(w))
			return model.RefCheck(v, w)
		},
		Commit: func(v model.SinkView, w model.Msg) uint8 {
			p.see("Commit", v.Lease.Grant != 0 || msgGhost(w))
			return model.RefCheck(v, w)
		},
		Prepared: func(u model.Regs, w model.Msg) model.Regs {
			p.see("Prepared", msgGhost(w))
			return model.RefPrepared(u, w)
		},
		Accepted: func(v model.SinkView, w model.Msg) (uint8, model.Regs) {
			p.see("Accepted", v.Lease.Grant != 0 || msgGhost(w))
			return model.RefAccepted(v, w)
		},
		Key: func(w model.Msg, attempt uint8) uint8 {
			p.see("Key", msgGhost(w))
			return model.RefKey(w, attempt)
		},
		SinkRestart: func(s model.Sink) model.Sink {
			ghost := false
			for _, x := range s.Results {
				ghost = ghost || x.Grant != 0
			}
			p.see("SinkRestart", ghost)
			return model.RefSinkRestart(s)
		},
		OnReply: func(u model.Regs, op uint8, rep model.Msg, ttl int) model.Regs {
			p.see("OnReply", msgGhost(rep))
			return model.RefOnReply(u, op, rep, ttl)
		},
	}
}

// TestDecisionsSeeNoGhost: no decision of a design is shown the ghost's
// grant identities or a message's live flag, which no real process
// knows: a design that read them could fence on the truth itself. Every
// decision that reads the framework's structures is called in a
// breadth-first walk whose states hold grants in messages, leases,
// records and results, and live messages, and none is shown one.
func TestDecisionsSeeNoGhost(t *testing.T) {
	p := &ghostProbe{calls: map[string]int{}, saw: map[string]int{}}
	m, err := model.New(ghostConfig, p.design())
	if err != nil {
		t.Fatal(err)
	}
	var held struct{ msg, live, lease, dedup, result bool }
	init := m.Init()
	queue := []model.State{init}
	seen := map[string]bool{string(m.Encode(&init, nil)): true}
	for len(queue) > 0 && len(seen) < 40000 {
		s := queue[0]
		queue = queue[1:]
		for i := range int(s.NMsgs) {
			held.msg = held.msg || s.Msgs[i].Grant != 0
			held.live = held.live || s.Msgs[i].Live
		}
		held.lease = held.lease || s.Coord[0].Lease[0].Grant != 0
		held.dedup = held.dedup || s.Coord[0].Dedup[0][0].Grant != 0 || s.Coord[0].Dedup[0][1].Grant != 0
		held.result = held.result || s.Sink.Results[0].Grant != 0
		for _, a := range m.Enabled(&s, nil) {
			n := s
			m.Next(&n, &a)
			if !leads(a.Kind) {
				continue // taken, for its decisions, but not searched on: the walk reaches all of them early
			}
			if enc := string(m.Encode(&n, nil)); !seen[enc] {
				seen[enc] = true
				queue = append(queue, n)
			}
		}
	}
	if held != (struct{ msg, live, lease, dedup, result bool }{true, true, true, true, true}) {
		t.Fatalf("the walk's states held no ghost somewhere the decisions read (message, live flag, lease, record, result): %+v", held)
	}
	for _, name := range []string{"Valid", "Answers", "Deadline", "Renew", "Release", "OnLease", "Restart", "Check",
		"Commit", "Prepared", "Accepted", "Key", "SinkRestart", "OnReply"} {
		if p.calls[name] == 0 {
			t.Errorf("%s: never called in %d states", name, len(seen))
		} else if p.saw[name] != 0 {
			t.Errorf("%s: shown the ghost or the live flag in %d of its %d calls", name, p.saw[name], p.calls[name])
		}
	}
}
