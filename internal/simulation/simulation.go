// Package simulation holds, for the tests of the search's reductions, the
// relation by which one model state simulates another: the same state with
// no more of any fault budget spent, requests no older, ghost deadlines no
// earlier and grants counted on no less, fewer dead messages in flight and
// paused workers running. The
// model's tests check that each reduction's simulating states are related
// so; the checker's test that the reduced search covers a full one looks
// them up by it.
package simulation

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/fencecheck/fencecheck/model"
)

// Skeleton is s with what Simulates may lower, raise or leave out zeroed:
// the fault budgets spent, the ages of requests, the ghost deadlines a
// holder may count on and how far a grant is counted on (its phase, but
// Released), the workers' pauses; its dead messages left out, the
// other messages sorted again. A state can simulate only states of its
// skeleton.
func Skeleton(m *model.Machine, s *model.State) model.State {
	k := *s
	k.Drops, k.Dups, k.Crashes, k.Restarts, k.Forged, k.SinkRestarts = 0, 0, 0, 0, 0, 0
	for w := range k.Workers {
		k.Workers[w].Paused = false
	}
	live := k.Msgs[:0]
	for _, msg := range k.Msgs[:k.NMsgs] {
		if !Dead(m, s, msg) {
			live = append(live, withAge(msg, 0))
		}
	}
	k.Msgs, k.NMsgs = [model.MaxMsgs]model.Msg{}, uint8(len(live))
	copy(k.Msgs[:], live)
	slices.SortFunc(k.Msgs[:k.NMsgs], CompareMsgs)
	for c := range k.Coord {
		for r := range k.Coord[c].Wait {
			k.Coord[c].Wait[r].Age = 0
		}
	}
	for r := range k.Ghost {
		for g := range k.Ghost[r].Grant {
			t := &k.Ghost[r].Grant[g]
			t.Early = 0
			if t.Phase != model.Released {
				t.Phase = model.Pending
			}
		}
	}
	return k
}

// Simulates reports whether v is u with no more of any fault budget spent,
// requests no older (its messages matched to u's with the same other
// fields; waiting acquires), ghost deadlines no earlier, grants counted on
// no less (counted), some of u's dead
// messages not in flight and some of u's paused workers running (not one
// holding a write, model.Worker.Holding, which both must hold alike), and
// nothing else different.
func Simulates(m *model.Machine, v, u *model.State) bool {
	if v.Drops > u.Drops || v.Dups > u.Dups || v.Crashes > u.Crashes || v.Restarts > u.Restarts ||
		v.Forged > u.Forged || v.SinkRestarts > u.SinkRestarts {
		return false
	}
	for w := range v.Workers {
		if v.Workers[w].Paused && !u.Workers[w].Paused {
			return false
		}
	}
	for c := range v.Coord {
		for r := range v.Coord[c].Wait {
			if v.Coord[c].Wait[r].Age > u.Coord[c].Wait[r].Age {
				return false
			}
		}
	}
	for r := range v.Ghost {
		for g := range v.Ghost[r].Grant {
			if vt, ut := &v.Ghost[r].Grant[g], &u.Ghost[r].Grant[g]; vt.Early < ut.Early || counted(vt.Phase) < counted(ut.Phase) {
				return false
			}
		}
	}
	// Of each kind of message (its fields but its age), v has as many as
	// u, or no more if they are dead. Sorted by age, v's pair with
	// u's youngest, the youngest with the youngest: a matching exists
	// exactly when this one makes every age of v no larger.
	vm, um := slices.Clone(v.Msgs[:v.NMsgs]), slices.Clone(u.Msgs[:u.NMsgs])
	byContent := func(p, q model.Msg) int {
		if c := CompareMsgs(withAge(p, 0), withAge(q, 0)); c != 0 {
			return c
		}
		return int(p.Age) - int(q.Age)
	}
	slices.SortFunc(vm, byContent)
	slices.SortFunc(um, byContent)
	for i, j := 0, 0; i < len(vm) || j < len(um); {
		var kind model.Msg // the next kind in either
		switch {
		case i == len(vm):
			kind = withAge(um[j], 0)
		case j == len(um) || CompareMsgs(withAge(vm[i], 0), withAge(um[j], 0)) < 0:
			kind = withAge(vm[i], 0)
		default:
			kind = withAge(um[j], 0)
		}
		ni, nj := i, j
		for ni < len(vm) && withAge(vm[ni], 0) == kind {
			ni++
		}
		for nj < len(um) && withAge(um[nj], 0) == kind {
			nj++
		}
		if n, k := ni-i, nj-j; n > k || n < k && !Dead(m, u, kind) {
			return false
		}
		for x := range ni - i {
			if vm[i+x].Age > um[j+x].Age {
				return false
			}
		}
		i, j = ni, nj
	}
	return Skeleton(m, v) == Skeleton(m, u)
}

// Dead reports whether m, in flight in s, is taken by nobody, now or later,
// or only to send a message that is dead in turn: a reply its worker no
// longer waits for; the sink's answer to an advance numbered no later than
// its coordinator replica's last, which the replica does not wait for
// (every advance it waits for later is numbered higher: no restart lowers
// the numbers); an advance request numbered below the last one the sink
// applied for its replica and resource, or numbered as that one when the
// replica does not wait for its answer (the sink answers it again, moving
// nothing), under FenceFirst: under CounterFirst m's sink applies every
// copy of an advance that arrives. (Whether it can be delivered now is not
// asked.)
func Dead(mc *model.Machine, s *model.State, m model.Msg) bool {
	coord := &s.Coord[m.Replica]
	wait := &coord.Wait[m.Res]
	waited := wait.Worker != 0 && wait.Seq == m.Req
	answerDead := !waited && m.Req <= coord.AdvSeq[m.Res]
	switch m.Kind {
	case model.AcquireRep, model.RenewRep, model.ReleaseRep, model.WriteRep, model.ReadRep:
		return !m.Live
	case model.AdvanceRep:
		return answerDead
	case model.AdvanceReq:
		applied := s.Sink.AdvSeq[m.Replica][m.Res]
		return m.Req > 0 && mc.Design.Tokens != model.CounterFirst && (m.Req < applied || m.Req == applied && answerDead)
	}
	return false
}

func withAge(m model.Msg, age uint8) model.Msg {
	m.Age = age
	return m
}

// CompareMsgs orders messages by their bytes.
func CompareMsgs(p, q model.Msg) int {
	return bytes.Compare(unsafe.Slice((*byte)(unsafe.Pointer(&p)), unsafe.Sizeof(p)),
		unsafe.Slice((*byte)(unsafe.Pointer(&q)), unsafe.Sizeof(q)))
}

// counted orders the phases of a grant by how far it is counted on: Void
// (not at all), Pending (until its worker stops waiting), Held (until it
// lapses); a longer-lived phase in the simulating state only adds
// exclusive-lease verdicts, and each step keeps the order (a phase that
// lapses later, and a reply taken or a renew, makes it Held no earlier).
// Released is equal in both, by Skeleton.
func counted(p model.Phase) int {
	switch p {
	case model.Pending:
		return 1
	case model.Held:
		return 2
	}
	return 0
}
