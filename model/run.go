package model

import (
	"bytes"
	"encoding/json"

	"github.com/fencecheck/fencecheck/history"
)

// Run is one run of a machine: its state, the coordinator's clock, and the
// actions and events so far. It is what the searches drive and what a
// history file records.
type Run struct {
	M       *Machine
	State   State
	Now     int64 // ticks so far: the time stamped on events
	Actions []Action
	Events  []history.Event
	// Scenes is every scene the run has reached.
	Scenes Scene
}

// NewRun starts a run at the machine's initial state.
func NewRun(m *Machine) *Run {
	return &Run{M: m, State: m.Init()}
}

// Do applies an enabled action, stamps its events with the clock and returns
// the fact.
func (r *Run) Do(a Action) Fact {
	n := len(r.Events)
	var f Fact
	r.Events, f = r.M.Step(&r.State, a, r.Events)
	for i := n; i < len(r.Events); i++ {
		r.Events[i].Time = r.Now
		r.Events[i].Index = int64(i)
	}
	if a.Kind == Tick {
		r.Now++
	}
	r.Actions = append(r.Actions, a)
	r.Scenes |= f.Scenes
	return f
}

// IsEnabled reports whether a is enabled in s.
func (m *Machine) IsEnabled(s *State, a Action) bool {
	var buf [64]Action
	for _, b := range m.Enabled(s, buf[:0]) {
		if b == a {
			return true
		}
	}
	return false
}

// History returns the run's history with a header that lets explore replay
// re-execute it: the design's name (a catalogue finds its decisions), seed,
// config and action trace.
func (r *Run) History(design string, seed uint64, expect []string, note string) *history.History {
	cfg, _ := json.Marshal(r.M.Config) // plain ints: cannot fail
	acts := make([]string, len(r.Actions))
	for i, a := range r.Actions {
		acts[i] = a.String()
	}
	return &history.History{
		HasHeader: true,
		Header: history.Header{Format: history.Format, Version: history.Version, Variant: design, Seed: seed,
			Config: cfg, Expect: expect, Actions: acts, TimeUnit: "tick", Note: note},
		Events: append([]history.Event(nil), r.Events...),
	}
}

// ParseConfig reads the config that History wrote in a header. A
// "protocol" object (the switches that headers carried before designs) is
// read and ignored: the header's variant names the design.
func ParseConfig(raw []byte) (Config, error) {
	var v struct {
		Config
		Protocol json.RawMessage `json:"protocol"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return Config{}, err
	}
	return v.Config, v.Config.Validate()
}
