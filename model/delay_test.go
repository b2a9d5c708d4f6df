package model

import "testing"

// TestDelayBoundsTheNetwork: with Config.Delay, no tick is enabled while a
// message its receiver can take has been in flight Delay ticks, and on
// random walks time still passes; without it, requests are delivered
// later than any small bound.
func TestDelayBoundsTheNetwork(t *testing.T) {
	for _, delay := range []int{1, 2, 3} {
		c := DefaultConfig()
		c.Delay = delay
		m, err := New(c, Design{})
		if err != nil {
			t.Fatal(err)
		}
		ticks := 0
		for seed := uint64(1); seed <= 200; seed++ {
			walk(m, seed, 150, func(s *State, a Action) {
				if a.Kind != Tick {
					return
				}
				ticks++
				for i := 0; i < int(s.NMsgs); i++ {
					if msg := &s.Msgs[i]; int(msg.Age) >= delay && m.deliverable(s, msg) {
						t.Fatalf("delay %d: a tick with message %+v in flight %d ticks", delay, *msg, msg.Age)
					}
				}
			})
		}
		if ticks == 0 {
			t.Fatalf("delay %d: no tick in any walk", delay)
		}
	}
	c := DefaultConfig()
	m, _ := New(c, Design{})
	aged := false
	for seed := uint64(1); seed <= 200 && !aged; seed++ {
		walk(m, seed, 150, func(s *State, a Action) {
			aged = aged || a.Kind == Deliver && a.Msg.Kind == AcquireReq && int(a.Msg.Age) > 3
		})
	}
	if !aged {
		t.Error("without Delay, no acquire was ever delivered more than 3 ticks late: the asynchronous network lost its long delays")
	}
	c.Delay = 31
	if c.Validate() == nil {
		t.Error("delay 31 validated")
	}
}

// TestPauseBoundsPauses: with Config.Pause, no tick is enabled while a
// worker has been paused Pause ticks, and a worker still pauses.
func TestPauseBoundsPauses(t *testing.T) {
	for _, pause := range []int{1, 2} {
		c := DefaultConfig()
		c.Pause = pause
		m, err := New(c, Design{})
		if err != nil {
			t.Fatal(err)
		}
		pausedTicks := 0
		for seed := uint64(1); seed <= 200; seed++ {
			walk(m, seed, 150, func(s *State, a Action) {
				if a.Kind != Tick {
					return
				}
				for w := 0; w < c.Workers; w++ {
					wk := &s.Workers[w]
					if wk.Paused {
						pausedTicks++
					}
					if wk.Paused && int(wk.PausedFor) >= pause {
						t.Fatalf("pause %d: a tick with worker %d paused %d ticks", pause, w, wk.PausedFor)
					}
				}
			})
		}
		if pausedTicks == 0 {
			t.Fatalf("pause %d: no tick passed while a worker was paused", pause)
		}
	}
}

// TestPausesInARowAreOnePause: a worker that resumes and pauses again with
// no tick between gets no fresh pause budget, so it cannot stall longer
// than Config.Pause in all.
func TestPausesInARowAreOnePause(t *testing.T) {
	c := DefaultConfig()
	c.Pause = 1
	m, err := New(c, Design{})
	if err != nil {
		t.Fatal(err)
	}
	run := NewRun(m)
	for _, a := range []Action{{Kind: Pause}, {Kind: Tick}, {Kind: Resume}, {Kind: Pause}} {
		run.Do(a)
	}
	for _, a := range m.Enabled(&run.State, nil) {
		if a.Kind == Tick {
			t.Fatal("a tick is enabled after pause, tick, resume, pause: the second pause got a fresh budget")
		}
	}
	run.Do(Action{Kind: Resume})
	run.Do(Action{Kind: Tick})
	if run.State.Workers[0].PausedFor != 0 {
		t.Errorf("a tick with the worker running left PausedFor %d", run.State.Workers[0].PausedFor)
	}
}
