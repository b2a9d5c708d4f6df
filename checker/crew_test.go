package checker

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrew: every job runs once on each goroutine it asks for, and only
// those, and run returns only when all are done; jobs find the helpers
// spinning (right after the last) and asleep (after a pause longer than
// crewSpin); close ends every helper (it waits for them).
func TestCrew(t *testing.T) {
	for _, procs := range []int{2, 4} { // 3 helpers that sleep at once, and that spin first
		t.Run(fmt.Sprint(procs, " procs"), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			testCrew(t)
		})
	}
}

func testCrew(t *testing.T) {
	c := newCrew(3)
	if spins := c.spin != 0; spins != (runtime.GOMAXPROCS(0) > 3) {
		t.Fatalf("GOMAXPROCS %d, 3 helpers: spin %v", runtime.GOMAXPROCS(0), c.spin)
	}
	var ran [4]atomic.Int64
	for job := range 300 {
		n := 1 + job%4
		var done atomic.Int64
		c.run(n, func(i int) {
			if job%50 == 0 {
				time.Sleep(time.Millisecond) // the leader, or a helper, ends last
			}
			ran[i].Add(1)
			done.Add(1)
		})
		if done.Load() != int64(n) {
			t.Fatalf("job %d on %d goroutines: run returned after %d", job, n, done.Load())
		}
		if job%100 == 99 {
			time.Sleep(3 * crewSpin) // the helpers fall asleep
		}
	}
	for i := range ran { // goroutine i runs the jobs with n > i: 300 - 75 i of them
		if got, want := ran[i].Load(), int64(300-75*i); got != want {
			t.Fatalf("goroutine %d ran %d jobs, want %d", i, got, want)
		}
	}
	c.close() // waits for every helper to return: one that did not stop would hang the test
}
