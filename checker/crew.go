package checker

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// crewSpin is how long a crew's helper looks for its next job before it
// sleeps: longer than what a search does between two batches' parallel
// steps (a few hundred microseconds), far shorter than a level's end.
const crewSpin = time.Millisecond

// crew runs jobs on several goroutines at once, one job after another: a
// search's parallel steps, several for each batch of a few milliseconds.
// Its helpers live as long as the search and look for the next job for
// crewSpin before they sleep (when each has a P of its own), because
// waking a sleeping goroutine (and, under a hypervisor, the idle CPU it
// sleeps on) took 70–110 µs on this project's machine, a few times a
// batch. The leader runs its share of
// each job and waits for the helpers without sleeping: they end within a
// chunk's time of it.
type crew struct {
	gen     atomic.Uint64 // jobs started (and 1 more to stop)
	left    atomic.Int64  // helpers not done with the current job
	job     func(i int)   // the current job, for goroutines i < n
	n       int
	helpers int
	spin    time.Duration // crewSpin, or 0 when the helpers outnumber the other Ps
	stop    bool

	mu    sync.Mutex // held to move gen, so that a helper going to sleep misses no job
	wake  sync.Cond
	ended sync.WaitGroup
}

// newCrew starts helpers goroutines, numbered 1 to helpers. They spin
// only if each can have a P (GOMAXPROCS) of its own beside the leader's:
// more would take the leader's turns while it works alone.
func newCrew(helpers int) *crew {
	c := &crew{helpers: helpers}
	if helpers < runtime.GOMAXPROCS(0) {
		c.spin = crewSpin
	}
	c.wake.L = &c.mu
	c.ended.Add(helpers)
	for i := 1; i <= helpers; i++ {
		go c.help(i)
	}
	return c
}

// run runs f(i) for i in [0, n) on n goroutines, f(0) on the caller's,
// and returns when all are done. n is at most 1 + the helpers.
func (c *crew) run(n int, f func(i int)) {
	c.job, c.n = f, n
	c.left.Store(int64(c.helpers))
	c.start()
	f(0)
	for c.left.Load() != 0 {
		runtime.Gosched()
	}
}

// close stops the helpers and waits for them to end.
func (c *crew) close() {
	c.stop = true
	c.start()
	c.ended.Wait()
}

// start moves gen on (after job, n or stop were set) and wakes the
// helpers that sleep.
func (c *crew) start() {
	c.mu.Lock()
	c.gen.Add(1)
	c.mu.Unlock()
	c.wake.Broadcast()
}

// help is helper i's loop: wait for a job, run its share, say so.
func (c *crew) help(i int) {
	defer c.ended.Done()
	for last := uint64(0); ; {
		last = c.await(last)
		if c.stop {
			return
		}
		if i < c.n {
			c.job(i)
		}
		c.left.Add(-1)
	}
}

// await returns gen once it has moved on from last: spinning for
// c.spin, then asleep.
func (c *crew) await(last uint64) uint64 {
	start := time.Now()
	for k := 0; c.gen.Load() == last; k++ {
		if c.spin == 0 || k%64 == 63 && time.Since(start) > c.spin {
			c.mu.Lock()
			for c.gen.Load() == last {
				c.wake.Wait()
			}
			c.mu.Unlock()
			break
		}
		runtime.Gosched()
	}
	return c.gen.Load()
}
