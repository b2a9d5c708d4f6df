package model

import (
	"fmt"
	"slices"
	"strings"
)

// Reduction is a set of reductions of what a search expands and stores.
// ReducePauses, ReduceDeadReplies and ReduceReads leave out actions whose
// successors are simulated by the successor of an action they keep (or by
// the state itself): for every run of the machine there is a run of kept
// actions, no longer, with the same facts, so a search over the kept
// actions reaches a violation of every invariant a full search reaches,
// and its shortest counterexamples are as short. Every run of kept actions
// is a run of the machine: a reduced search raises no alarm a full one
// would not, and its counterexamples replay as they are. ReduceTimers
// stores each state as a bisimilar one (Normalize), which keeps every run
// and every verdict; the search finds a concrete run through the stored
// states. ReduceBudgets and ReduceAges leave out a new state that a state
// stored no later simulates. ReduceDeadDelivered stores each state as the
// state its dead messages' deliveries reach, which simulates it: the
// verdicts of a complete search are kept, not its depths (checker.BFS
// searches again without it for the shortest counterexamples).
//
// The proofs are in the doc comments of the constants; the tests compare
// reduced and full searches of every built-in design (checker's
// TestReductionsSound), check that the machine without reads simulates the
// machine with them (TestStrikingReadsIsASimulation), and that every state
// a full search without reads reaches is simulated by one the reduced
// search stored no deeper (checker's TestSimulatingStatesCoverFullSearch).
type Reduction uint8

// The reductions.
const (
	// ReducePauses leaves out Pause and Resume when the network is
	// asynchronous (Config.Delay 0) and pauses are unbounded (Config.Pause
	// 0). Proof: a paused worker's only difference from a running one is
	// that it takes no step and no reply; nothing else reads Paused (no
	// tick waits on a pause or on a reply, PausedFor stays 0, a crash
	// resumes the worker anyway, and no write is held: Action.Hold exists
	// only under a bounded delay). Striking every Pause and Resume from a run
	// leaves a run — each action was enabled with the worker paused, so it is
	// enabled with it running — in which every action has the same effect
	// and fact, and which is no longer.
	ReducePauses Reduction = 1 << iota
	// ReduceDeadReplies leaves out the loss of a dead reply (a reply whose
	// worker has given up on it, Msg.Live false: taking it changes nothing
	// but the network) when it could be delivered instead, and the
	// duplication of a dead reply. Proof: a state v simulates a state u
	// (every action of u is matched by one of v, or by none, with the same
	// fact) when v is u with fewer dead replies in flight and no more of
	// the drop and duplicate budgets spent: fewer messages in flight never
	// disable a send or a tick, a spent budget only disables, and dead
	// replies change nothing when taken. Losing a dead reply is matched by
	// delivering it (the same state, a drop unspent), duplicating one by
	// doing nothing; a match of a run is a run of kept actions, no longer.
	ReduceDeadReplies
	// ReduceReads leaves out reads when the design's workers ignore what
	// a read returns and that they sent one (the design leaves OnReply,
	// OnSend and Key to the reference):
	// the invariants a search judges are over grants, renewals and writes,
	// and a read changes none of them. Proof: strike from a run every Read
	// and every step on its messages (their delivery, loss, duplication,
	// the timeout that ends it). What is left is a run with the same
	// effects and facts, no longer: the sink's answer to a read changes
	// nothing but the network; the worker's reply only ends the read; a
	// read's budget, messages in flight and losses or duplications spent on
	// them only disable other steps; the worker starts its next operation
	// idle either way (every message of a read's worker is dead once the
	// read ends), and the resource an idle worker without a lease last read
	// is read by no step (the next acquire sets it).
	ReduceReads
	// ReduceTimers stores a state with the clocks that nothing reads any
	// more cut (Normalize), when the design's decisions do not read the
	// ages of requests (no Design.ReportsTime): a request's age (Msg.Age,
	// Waiting.Age) is cut to max(ttl, Config.Delay), the ghost deadline a
	// holder may count on (GrantTruth.Early) to 0 once it has passed or its
	// grant was released, and the coordinator's deadline
	// (GrantTruth.Late) to 0 once it has passed. Proof: the relation
	// between a state and its cut is a bisimulation that keeps every fact
	// and verdict. An age is read only by the grant or renew that sets
	// Early to ttl−age (at most 0 from age ttl on, whatever more) and by
	// the partially synchronous network's "age ≥ Delay"; a tick adds one
	// to an age below the cap either way. Early is read only as "Early >
	// 0" (by the grant's phase, GrantTruth.Phase, which exclusive-lease
	// reads: a grant that lapses is Void, a reply taken or a renew makes
	// one Held only before it lapses), Late only as "Late ≤ 0"
	// (renew-validity, absolute-validity); a tick keeps a deadline at or
	// below 0 there, a renew sets Late to ttl and Early to the larger of
	// it and ttl−age, and an answer from a record Early so, which is at
	// or below 0 exactly when the cut one is, and a released grant's
	// Early is read again only after such an answer. So a state and its cut enable the same actions,
	// whose successors are again a state and its cut, with the same facts
	// and the same verdicts: a search over cut states has a full search's
	// verdicts and shortest counterexample lengths.
	ReduceTimers
	// ReduceBudgets leaves out a new state when the same state with one
	// fault of one kind less spent (LessSpent) is stored already. Proof: a
	// state v simulates a state u when v is u with less of the fault
	// budgets spent (Drops, Dups, Crashes, Restarts, Forged,
	// SinkRestarts): a budget left only enables actions, so every action
	// of u is enabled in v, with the same effect and fact, to a successor
	// that again is u's successor with less spent; no decision and no
	// invariant reads the budgets. A breadth-first search stores states in
	// the order of their depth, so v was reached in no more steps than u:
	// every violation reachable from u is reachable from v, as soon. (A
	// search that expands every state it stores, as BFS does, leaves out
	// only what v's expansion covers.)
	ReduceBudgets
	// ReduceAges leaves out a new state when the same state with requests
	// a tick younger (Younger) is stored already, when the design's
	// decisions do not read the ages of requests (no Design.ReportsTime):
	// the state a tick passing before a send leads to stands for the one a
	// tick passing after it leads to. Proof: a state v simulates a state u
	// when v is u with messages in flight and waiting acquires no older
	// (Msg.Age, Waiting.Age), ghost deadlines a holder may count on
	// (GrantTruth.Early) no earlier, and grants counted on no less
	// (GrantTruth.Phase: Held over Pending over Void, Released alike). An
	// age is read only by the grant or renew that sets Early to ttl−age (or
	// keeps a later one), by the partially synchronous network's "age ≥
	// Config.Delay" that holds time back, and when a waiting acquire takes
	// its request's age; Early only by exclusive-lease's "Early > 0" of an
	// unreleased grant and by the phase (a grant that has lapsed is Void, a
	// reply taken or a renew makes one Held only before it lapses); the
	// phase only by exclusive-lease. Each is monotone: in v every action
	// of u is enabled (naming the younger copy of a message; a younger
	// message holds no tick back that the older one does not), with the
	// same effect and fact, to a successor that is again u's successor
	// with requests no older, Early no earlier and grants counted on no
	// less, and with every verdict u's step has (a later Early, or a grant
	// counted on longer, can only add exclusive-lease). No fact, no
	// decision and no other invariant reads any of them. As for ReduceBudgets, BFS stored v no later than u, so every
	// violation reachable from u is reachable from v, as soon.
	ReduceAges
	// ReduceDeadDelivered stores a state with the dead messages it can
	// deliver delivered (Normalize): their deliveries are taken as no
	// step. A dead message is a reply nobody takes (Msg.Live false) to a
	// worker not paused, a sink's answer to an advance the coordinator no
	// longer waits for, or an advance request the sink has overtaken or
	// answered already with an answer nobody waits for (inert: the
	// sequence numbers that make them so never go down, since every
	// restart keeps them). Proof: delivering a dead message
	// removes it from the network and does nothing else (no fact, no
	// event, no decision; an answered request's answer is sent again, dead
	// too), in the state and in every state reached from it, and a state v
	// with fewer dead messages in flight simulates u (ReduceDeadReplies'
	// proof, with no budget spent), so every violation reachable from u is
	// reachable from its normal form v, by a run no longer; and v is
	// reached from u by those deliveries, so every violation reachable
	// from v is one of u's. The verdicts of a complete search are a full
	// search's. Its depths are not: a state's depth counts no delivery of a
	// dead message, so a run of the search that needs such deliveries (to
	// free a slot of the network, or a tick a message holds back) is that
	// much longer as a run of the machine, and a search to depth D reaches
	// more than the runs of D actions. checker.BFS therefore searches
	// again without it when it finds a violation, to the depth of the
	// longest counterexample it found (the shortest of each invariant is
	// no longer), and reports that search's verdicts and shortest
	// counterexamples: a full search's.
	ReduceDeadDelivered
)

// Reductions is every reduction.
const Reductions = ReducePauses | ReduceDeadReplies | ReduceReads | ReduceTimers | ReduceBudgets | ReduceAges | ReduceDeadDelivered

var reductionNames = [...]string{"pauses", "dead-replies", "reads", "timers", "budgets", "ages", "dead-delivered"}

// String names the reductions in r, comma-separated ("" for none).
func (r Reduction) String() string { return memberNames(uint(r), reductionNames[:]) }

// ParseReduction reads a comma-separated list of reduction names (as
// String gives them).
func ParseReduction(list string) (Reduction, error) {
	var r Reduction
	for _, name := range strings.Split(list, ",") {
		i := slices.Index(reductionNames[:], name)
		if i < 0 {
			return 0, fmt.Errorf("unknown reduction %q (want %s)", name, strings.Join(reductionNames[:], ", "))
		}
		r |= 1 << i
	}
	return r, nil
}

// Applies returns the reductions of r that apply to the machine: pauses
// are reduced only under an asynchronous network and unbounded pauses,
// reads only when the design ignores what they return, timers and ages
// only when its decisions do not read the ages of requests.
func (m *Machine) Applies(r Reduction) Reduction {
	if m.Config.Delay != 0 || m.Config.Pause != 0 {
		r &^= ReducePauses
	}
	if !m.readsInert {
		r &^= ReduceReads
	}
	if m.Design.ReportsTime {
		r &^= ReduceTimers | ReduceAges
	}
	return r
}

// LessSpent calls f with each key that is key, the Encode of a state s,
// with one fault of one kind less spent: s with one loss, duplication,
// crash, coordinator restart, forgery or sink restart fewer used. It
// changes key's bytes in place and puts them back before it returns; it
// stops at the first call of f that returns true, and reports whether
// there was one (ReduceBudgets).
func (m *Machine) LessSpent(key []byte, f func(k []byte) bool) bool {
	spent := key[len(key)-budgetBytes:]
	for i := range spent {
		if spent[i] == 0 {
			continue
		}
		spent[i]--
		hit := f(key)
		spent[i]++
		if hit {
			return true
		}
	}
	return false
}

// Younger calls f with states that are s with requests a tick younger
// (ReduceAges): each with one request whose age is above 0 — a message in
// flight (the first of equal ones) or an acquire waiting at a coordinator
// — a tick younger, then, when there are two or more, the one with every
// such request a tick younger (as if a tick had passed once less since
// they were all sent). It builds each in *v, its scratch, and stops at the
// first call of f that returns true, reporting whether there was one.
func (m *Machine) Younger(s, v *State, f func(v *State) bool) bool {
	aged := 0
	for i := 0; i < int(s.NMsgs); i++ {
		if s.Msgs[i].Age == 0 {
			continue
		}
		aged++
		if i > 0 && s.Msgs[i] == s.Msgs[i-1] {
			continue
		}
		*v = *s
		v.Msgs[i].Age--
		v.sortMsgs()
		if f(v) {
			return true
		}
	}
	for c := range m.Config.Replicas {
		for r := range m.Config.Resources {
			if wt := &s.Coord[c].Wait[r]; wt.Worker != 0 && wt.Age > 0 {
				aged++
				*v = *s
				v.Coord[c].Wait[r].Age--
				if f(v) {
					return true
				}
			}
		}
	}
	if aged < 2 {
		return false
	}
	*v = *s
	for i := 0; i < int(v.NMsgs); i++ {
		if msg := &v.Msgs[i]; msg.Age > 0 {
			msg.Age--
		}
	}
	v.sortMsgs()
	for c := range m.Config.Replicas {
		for r := range m.Config.Resources {
			if wt := &v.Coord[c].Wait[r]; wt.Worker != 0 && wt.Age > 0 {
				wt.Age--
			}
		}
	}
	return f(v)
}

// Normalize rewrites s as the state that the reductions of r store for it:
// with ReduceDeadDelivered, the dead messages it can deliver delivered; with
// ReduceTimers (if it applies), its clocks that nothing reads any more
// cut; otherwise s is left as it is.
func (m *Machine) Normalize(s *State, r Reduction) {
	r = m.Applies(r)
	if r&ReduceDeadDelivered != 0 {
		m.deliverDead(s)
	}
	if r&ReduceTimers == 0 {
		return
	}
	limit := uint8(max(m.Config.TTL, m.Config.Delay))
	cut := false
	for i := 0; i < int(s.NMsgs); i++ {
		if msg := &s.Msgs[i]; msg.Age > limit {
			msg.Age, cut = limit, true
		}
	}
	if cut {
		s.sortMsgs()
	}
	for r := range m.Config.Resources {
		for c := range m.Config.Replicas {
			if wt := &s.Coord[c].Wait[r]; wt.Age > limit {
				wt.Age = limit
			}
		}
		g := &s.Ghost[r]
		for i := 1; i <= int(g.Grants); i++ {
			t := &g.Grant[i]
			if t.Early < 0 || t.Phase == Released {
				t.Early = 0
			}
			t.Late = max(t.Late, 0)
		}
	}
}

// Reduced appends to buf the actions enabled in s (Enabled, in its order)
// that reduction r keeps, and returns it.
func (m *Machine) Reduced(s *State, r Reduction, buf []Action) []Action {
	start := len(buf)
	buf = m.Enabled(s, buf)
	if r = m.Applies(r); r == 0 {
		return buf
	}
	pauses, reads := r&ReducePauses != 0, r&ReduceReads != 0
	kept := buf[:start]
	for _, a := range buf[start:] {
		switch {
		case pauses && (a.Kind == Pause || a.Kind == Resume):
			continue
		case reads && a.Kind == Read:
			continue
		case r&ReduceDeadReplies != 0 && a.Kind == Duplicate && a.Msg.dead():
			continue
		case r&ReduceDeadReplies != 0 && a.Kind == Drop && a.Msg.dead() && m.deliverable(s, &a.Msg):
			continue
		}
		kept = append(kept, a)
	}
	return kept
}

// deliverDead removes from s the messages whose delivery changes nothing
// but the network there and in every state reachable from it (inert),
// keeping the others in their order.
func (m *Machine) deliverDead(s *State) {
	n := 0
	for i := range s.Msgs[:s.NMsgs] {
		if msg := &s.Msgs[i]; !m.inert(s, msg) {
			s.Msgs[n] = *msg
			n++
		}
	}
	clear(s.Msgs[n:s.NMsgs])
	s.NMsgs = uint8(n)
}

// inert reports whether msg can be delivered in s and its delivery
// changes nothing but the network, there and in every state reachable
// from s, or only adds a message that is inert in turn: a dead reply to a
// worker not paused (no step makes a reply live again); a sink's answer to
// a sequenced advance the coordinator replica does not wait for, numbered
// at or below the replica's last advance (while a replica's numbers never
// go down, every advance it waits for later is numbered above it); a
// sequenced advance request under FenceFirst numbered below the last one
// the sink applied for its replica and resource (while the sink's numbers
// never go down, it ignores it forever), or numbered as that one when its
// answer would be inert (the sink answers it again and moves nothing);
// never one under CounterFirst, which the sink applies whenever it arrives. The numbers never
// go down: they are the framework's, and a restart keeps them whatever
// the design's Restart and SinkRestart return (stepper.restart,
// stepper.sinkRestart).
func (m *Machine) inert(s *State, msg *Msg) bool {
	switch msg.Kind {
	case AdvanceRep:
		return unawaited(s, msg)
	case AdvanceReq:
		if msg.Req == 0 || m.Design.Tokens == CounterFirst { // applied whenever it arrives (stepper.sinkAdvance)
			return false
		}
		last := s.Sink.AdvSeq[msg.Replica][msg.Res]
		return msg.Req < last || msg.Req == last && unawaited(s, msg)
	}
	return msg.dead() && m.deliverable(s, msg)
}

// unawaited reports whether the coordinator replica of msg, an advance or
// its answer, waits for no answer to it, now or later (see inert).
func unawaited(s *State, msg *Msg) bool {
	co := &s.Coord[msg.Replica]
	wt := &co.Wait[msg.Res]
	return msg.Req <= co.AdvSeq[msg.Res] && (wt.Worker == 0 || wt.Seq != msg.Req)
}

// dead reports whether m is a reply its worker no longer waits for:
// delivering it changes nothing but the network.
func (m *Msg) dead() bool {
	switch m.Kind {
	case AcquireRep, RenewRep, ReleaseRep, WriteRep, ReadRep:
		return !m.Live
	}
	return false
}
