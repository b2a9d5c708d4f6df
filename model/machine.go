// Package model is a pure, deterministic state machine of a lease + fencing
// protocol: coordinator replicas, workers, a fenced sink, the network and the
// clocks. It lists the actions enabled in a state and computes, for one
// action, the next state, the events it produced (history format v1) and the
// fact the invariants judge. No randomness, no time, no I/O: the caller
// chooses the actions (randomly, exhaustively, or from a recorded trace).
package model

import (
	"fmt"

	"github.com/fencecheck/fencecheck/history"
)

// Machine is the model of one protocol under one configuration.
type Machine struct {
	Config   Config
	Protocol Protocol
}

// New returns the machine, or an error if the config is out of bounds.
func New(c Config, p Protocol) (*Machine, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Machine{Config: c, Protocol: p}, nil
}

// Init returns the initial state: every worker at incarnation 1, nothing
// held, sink empty, network empty.
func (m *Machine) Init() State {
	var s State
	for w := 0; w < m.Config.Workers; w++ {
		s.Workers[w].Inc = 1
	}
	return s
}

// FactKind says what a step did that the invariants judge.
type FactKind uint8

// Facts.
const (
	NoFact FactKind = iota
	// Granted: a coordinator issued a new grant (not a deduplicated answer).
	Granted
	// GrantSeen: a worker received the ok of its acquire.
	GrantSeen
	// Renewed: a coordinator accepted a renew.
	Renewed
	// WriteAccepted: the sink stored (or replayed) a result.
	WriteAccepted
	// WriteFenced: the sink rejected a write because of its token.
	WriteFenced
)

// Fact is what a step did, for the invariants: which grant (ghost identity)
// was involved and how. The state before the step holds the rest.
type Fact struct {
	Kind    FactKind
	Res     uint8
	Worker  uint8
	Replica uint8
	Inc     uint8 // the request's incarnation
	Req     uint8 // acquire request sequence
	Token   uint8
	Grant   uint8 // the grant issued, seen, renewed, or written under
}

// Process names a worker in histories: w1, w2, ...
func Process(w uint8) string { return fmt.Sprintf("w%d", w+1) }

// ResourceName names a resource (and its task) in histories: job-1, ...
func ResourceName(r uint8) string { return fmt.Sprintf("job-%d", r+1) }

// CoordinatorName names a coordinator replica: coordinator, coordinator-2.
func CoordinatorName(c uint8) string {
	if c == 0 {
		return history.Coordinator
	}
	return fmt.Sprintf("%s-%d", history.Coordinator, c+1)
}

func (m *Machine) readsClock() bool { return m.Protocol.WorkerClock || m.Protocol.RenewFromSendTime }

// ageCap is the age beyond which a request's age changes no decision.
func (m *Machine) ageCap() uint8 { return uint8(m.Config.TTL + 2*m.Config.Skew + 2) }

// forgedToken is bigger than any token a coordinator can grant.
func (m *Machine) forgedToken() uint8 { return uint8(m.Config.Grants*m.Config.Resources + 1) }

func clampLeft(v int) int8 {
	if v < -1 {
		return -1
	}
	return int8(v)
}

// fenceIndex is where the fence of resource r lives.
func (m *Machine) fenceIndex(r uint8) uint8 {
	if m.Protocol.GlobalFence {
		return 0
	}
	return r
}

// Fence returns the sink's fence for resource r in s.
func (m *Machine) Fence(s *State, r uint8) uint8 { return s.Sink.Fence[m.fenceIndex(r)] }
