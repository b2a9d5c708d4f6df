package model

import (
	"errors"
	"fmt"
)

// Hard limits of the fixed-size state. A Config must stay within them.
const (
	MaxWorkers   = 4
	MaxResources = 3
	MaxReplicas  = 2
	MaxMsgs      = 8
	MaxResults   = 12 // results at the sink: one per task, and with per-attempt keys one per write
	MaxGrants    = 6  // grants per resource
	MaxOps       = 16 // operations per worker: request numbers 1..16 (ReqSet)
)

// Config bounds a run of the model: how many of each thing there are and how
// many faults the environment may inject. Every bound keeps the state space
// finite.
type Config struct {
	Workers   int `json:"workers"`   // worker processes, 2..MaxWorkers
	Resources int `json:"resources"` // tasks, each with its own lease and fence
	Replicas  int `json:"replicas"`  // coordinators believing they are primary: 2 is split brain
	TTL       int `json:"ttl"`       // lease length, in ticks
	Ops       int `json:"ops"`       // operations each worker may start in a run
	Grants    int `json:"grants"`    // grants per resource
	InFlight  int `json:"inFlight"`  // messages in flight at once
	Drops     int `json:"drops"`     // messages the network may lose
	Dups      int `json:"dups"`      // messages the network may duplicate
	Crashes   int `json:"crashes"`   // worker crash-and-restarts
	Restarts  int `json:"restarts"`  // coordinator restarts
	Forgeries int `json:"forgeries"` // writes with a token the worker made up
	Skew      int `json:"skew"`      // largest worker clock offset, in ticks
	// SinkRestarts bounds the sink's crash-and-restarts (what survives is
	// the design's SinkRestart decision).
	SinkRestarts int `json:"sinkRestarts,omitempty"`
	// Delay, when positive, bounds how long a message stays in flight: no
	// tick passes while a message its receiver can take has been in flight
	// Delay ticks (a partially synchronous network). 0 is the asynchronous
	// network, where any delay is possible. A message that waits because
	// its receiver cannot take it (a paused worker's reply, an acquire
	// beyond the grant bound) is not the network's delay and does not hold
	// time back.
	Delay int `json:"delay,omitempty"`
	// Pause, when positive, bounds a worker's pauses (GC, a descheduled
	// process): no tick passes while a worker has been paused Pause ticks,
	// pauses with no tick run between them counting as one. 0 is any pause.
	Pause int `json:"pause,omitempty"`
}

// DefaultConfig is the bounded configuration the campaign and the tests use.
func DefaultConfig() Config {
	return Config{Workers: 2, Resources: 2, Replicas: 1, TTL: 3, Ops: 4, Grants: 3,
		InFlight: 3, Drops: 1, Dups: 1, Crashes: 1, Restarts: 1, Forgeries: 1, Skew: 2, SinkRestarts: 1}
}

// MaxToken bounds the tokens a fence or a token counter can reach in a run
// under c, when each advance of a fence and each step of a counter raises
// it by one at most, as the reference's rules and every built-in design's
// do (Machine.MaxToken scales it for a design whose rules raise more). It
// counts the steps that can raise a token: one per grant; for each
// coordinator restart, one more per resource (the restart loses a grant in
// progress whose fence has moved, and the retry moves it again); for each
// sink restart, one more per replica and resource (a sink that forgets the
// advance it applied last applies a retry of it again); one per release
// (designs whose release advances the fence); one per duplicated message. A forged write's "bigger than any
// grant" token is Machine.MaxToken+1, so that it is never a token the run
// grants later: no fence could tell that guess from the holder's token.
func (c Config) MaxToken() int {
	return c.Resources*(c.Grants+c.Restarts) + c.Replicas*c.Resources*c.SinkRestarts + c.Workers*c.Ops + c.Dups
}

// maxTokenLimit keeps tokens within a byte: a sink that takes a forged
// token (Machine.MaxToken+1) as its fence may advance it Config.MaxToken
// times more, each by at most Machine.MaxToken/Config.MaxToken.
const maxTokenLimit = 127

// Validate reports the first bound out of range.
func (c Config) Validate() error {
	check := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("config %s=%d out of range [%d, %d]", name, v, lo, hi)
		}
		return nil
	}
	return errors.Join(
		check("workers", c.Workers, 2, MaxWorkers),
		check("resources", c.Resources, 1, MaxResources),
		check("replicas", c.Replicas, 1, MaxReplicas),
		check("ttl", c.TTL, 1, 60),
		check("ops", c.Ops, 1, MaxOps),
		check("grants", c.Grants, 1, MaxGrants),
		check("inFlight", c.InFlight, 1, MaxMsgs-1),
		check("drops", c.Drops, 0, 100),
		check("dups", c.Dups, 0, 100),
		check("crashes", c.Crashes, 0, 100),
		check("restarts", c.Restarts, 0, 100),
		check("forgeries", c.Forgeries, 0, 100),
		check("skew", c.Skew, 0, 30),
		check("sinkRestarts", c.SinkRestarts, 0, 100),
		check("delay", c.Delay, 0, 30),
		check("pause", c.Pause, 0, 30),
		c.checkTokens(),
	)
}

// checkTokens reports a config whose tokens may not fit a byte.
func (c Config) checkTokens() error {
	if n := c.MaxToken(); n > maxTokenLimit {
		return fmt.Errorf("config allows tokens up to %d (resources×(grants+restarts) + replicas×resources×sinkRestarts + workers×ops + dups), above %d: a token is a byte", n, maxTokenLimit)
	}
	return nil
}
