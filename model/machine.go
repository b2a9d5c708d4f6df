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

// Machine is the model of one design under one configuration.
type Machine struct {
	Config Config
	// Design is the protocol's decisions, every one set (New fills in the
	// reference's where the design left a decision nil).
	Design Design
	// shared: some resources share a fence or a counter (Design.FenceOf or
	// CounterOf is not the identity), so resources are not interchangeable.
	shared bool
	// readsInert: the design left OnReply, OnSend and Key to the
	// reference, so a read changes nothing a later step reads (ReduceReads
	// applies).
	readsInert bool
	// maxToken is MaxToken's value.
	maxToken int
	// losesResults: a sink restart may drop or change results (the design
	// sets a SinkRestart of its own, and the config restarts the sink), so
	// the ghost's LostWriter and LostToken are in use.
	losesResults bool
	// ageChecked: the decisions whose answers every step checks do not
	// change with the age of the message (or waiting acquire) they read
	// (ageFree, restartAgeFree): the design's own, when it does not set
	// ReportsTime.
	ageChecked decisionSet
	// pureChecked: the decisions every step takes twice on the same
	// inputs, to check that they answer alike (nameFree, restartNameFree,
	// sinkRestartNameFree): the design's own.
	pureChecked decisionSet
	// nameChecked: the decisions whose answers every step checks do not
	// change when the workers and resources they read are renamed by any
	// of renamings (nameFree): the design's own that can read a number,
	// when it does not declare Asymmetric.
	nameChecked decisionSet
	// renamings are the renamings other than the identity that the
	// design's symmetry allows under the config; identity is the identity.
	renamings []Perm
	identity  Perm
}

// New returns the machine of design d under config c, or an error if the
// config is out of bounds or cannot run d: a Tokens that is no TokenPlan,
// or, without ReportsTime, a decision whose answer New sees change with a
// request's age (see ReportsTime). New probes some decisions (NextToken
// and Advance on every byte, FenceOf and CounterOf on each resource, Key
// twice): one that panics there is an error, not a panic. (Its probes of
// the ages are only tried: one that panics is skipped.)
func New(c Config, d Design) (m *Machine, err error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if d.Tokens > CounterOnly {
		return nil, fmt.Errorf("design: Tokens is TokenPlan(%d), which is no token plan (want FenceFirst, CounterFirst, GrantThenFence or CounterOnly)", d.Tokens)
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("design: a decision panicked while New probed it: %v (New calls NextToken and Advance on every byte, whatever a run reaches, FenceOf and CounterOf on each resource, Key twice)", r)
		}
	}()
	step := d.tokenStep()
	m = &Machine{Config: c, Design: d.blind().withDefaults(), readsInert: d.OnReply == nil && d.OnSend == nil && d.Key == nil,
		identity: Identity()}
	if !d.ReportsTime {
		m.ageChecked = d.ownDecisions() & ageReaders
		if err := m.probeAges(); err != nil {
			return nil, err
		}
	}
	if m.maxToken = step * c.MaxToken(); m.maxToken > maxTokenLimit {
		return nil, fmt.Errorf("design: its NextToken or Advance raises a token by up to %d in one step, so tokens may reach %d × %d = %d, above %d (a token is a byte); lower the bounds", step, step, c.MaxToken(), m.maxToken, maxTokenLimit)
	}
	for r := uint8(0); r < uint8(c.Resources); r++ {
		if f, k := m.Design.FenceOf(r), m.Design.CounterOf(r); f != r || k != r {
			m.shared = true
			if int(f) >= c.Resources || int(k) >= c.Resources {
				return nil, fmt.Errorf("design: resource %d's fence (%d) or counter (%d) is not a resource", r, f, k)
			}
		}
	}
	m.pureChecked = d.ownDecisions()
	m.losesResults = m.pureChecked&decSinkRestart != 0 && c.SinkRestarts > 0
	if sym := m.Symmetries(); sym != 0 {
		m.renamings = renamingsOf(&c, sym)
		m.nameChecked = d.ownDecisions() & identityReaders
	}
	// The sink holds a result per key: one per task, and with per-attempt
	// keys one per write attempt.
	results := c.Resources
	if m.Design.Key(Msg{}, 1) != 0 || m.Design.Key(Msg{Worker: 1}, 2) != 0 {
		results += c.Workers * c.Ops
	}
	if results > MaxResults {
		return nil, fmt.Errorf("config: this design keys results by write attempt: resources + workers × ops = %d results exceed the sink's table of %d; lower ops", results, MaxResults)
	}
	return m, nil
}

// MaxToken bounds every token a run of m can reach: Config.MaxToken, the
// number of steps that can raise a token, times the most the design's
// NextToken or Advance raise one in a step (1 for every built-in design).
// A forged write's "bigger than any grant" token is MaxToken+1. A design
// whose Accepted, Restart or SinkRestart raises a token past the highest
// the run has made may pass the bound: those take whole structures, and
// New cannot try them all.
func (m *Machine) MaxToken() int { return m.maxToken }

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
	// Reanswered: a coordinator answered an acquire its worker waits for
	// from a record, with a token no grant gave that request (a design's
	// Answers said RepOK to a new request, or a Restart rewrote the record
	// to a token the worker's incarnation was never granted): the worker
	// is told it holds the token, a grant in all but name: the fact names
	// the incarnation's grant of the token, or, where none carries it, one
	// the ghost issues for the answer. (An answer to a request its worker
	// gave up is taken by nobody; an answer with the grant that answered
	// that request last, GrantTruth.Req, is a retry's; one with another
	// grant's token is not, even if a grant answered the request too.)
	Reanswered
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
	// Scenes are the scenarios the step reached, for the searches' reports
	// of what they covered (Stateright's "sometimes" properties).
	Scenes Scene
}

// Scene is a set of scenarios a step can reach. A verdict that a design is
// safe means something only where the searches reached the scenarios it
// depends on: a proof in which no stale write after a takeover happens
// proves nothing about fencing.
type Scene uint16

// Scenes.
const (
	// SceneTakeover: a grant of a resource while an earlier grant of it was
	// not released.
	SceneTakeover Scene = 1 << iota
	// SceneStaleWrite: a write from an older grant reached the sink after a
	// newer grant was observed by its holder.
	SceneStaleWrite
	// SceneRenewAtDeadline: the holder's renew reached the coordinator
	// exactly at the lease's deadline.
	SceneRenewAtDeadline
	// SceneRestart: a coordinator replica restarted.
	SceneRestart
	// SceneCrash: a worker crashed and restarted.
	SceneCrash
	// SceneLostGrant: the network lost a grant's reply.
	SceneLostGrant
	// SceneSinkRestart: the sink crashed and restarted.
	SceneSinkRestart
	// SceneForgery: a worker wrote with a token it made up.
	SceneForgery
)

// NumScenes is the number of scenes.
const NumScenes = 8

var sceneNames = [NumScenes]string{"takeover", "stale-write", "renew-at-deadline", "restart", "crash",
	"lost-grant", "sink-restart", "forgery"}

// String names a scene set's members, comma-separated.
func (sc Scene) String() string { return memberNames(uint(sc), sceneNames[:]) }

// memberNames names the members of a bit set, bit i being names[i],
// comma-separated.
func memberNames(set uint, names []string) string {
	var b []byte
	for i, n := range names {
		if set&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = append(b, n...)
		}
	}
	return string(b)
}

// ParseScene reads a scene's name.
func ParseScene(name string) (Scene, error) {
	for i, n := range sceneNames {
		if n == name {
			return 1 << i, nil
		}
	}
	return 0, fmt.Errorf("unknown scene %q", name)
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

// Fence returns the sink's fence for resource r in s.
func (m *Machine) Fence(s *State, r uint8) uint8 { return s.Sink.Fence[m.Design.FenceOf(r)] }
