package spec

import (
	"github.com/fencecheck/fencecheck/history/simulate"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the user + system CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCheck checks a generated history of the reference protocol b.N times.
// Besides time per op it reports events per second of wall time, CPU
// seconds per check (user + system, which a busy machine inflates far less
// than wall time), the peak of the Go heap seen by a sampler every 10 ms, and
// the heap that the history alone holds before the check.
func benchCheck(b *testing.B, events, resources, workers int) {
	h := simulate.Reference(1, events, resources, workers)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		Check(h, Options{})
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	close(stop)
	<-done
	b.ReportMetric(float64(len(h.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(before.HeapAlloc)/(1<<20), "history-heap-MiB")
}

// BenchmarkCheck is a history of ordinary size: 10,000 events over 20
// resources and 8 workers.
func BenchmarkCheck(b *testing.B) { benchCheck(b, 10_000, 20, 8) }

// BenchmarkCheck1M is the target: 1,000,000 events over 1,000
// resources and 50 worker processes, in under 30 s on 2 cores and 2 GiB.
func BenchmarkCheck1M(b *testing.B) { benchCheck(b, 1_000_000, 1000, 50) }
