package spec

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/history/simulate"
)

// cpuTime returns the user + system CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCheck checks a generated history of the reference protocol b.N
// times (benchHistory). Besides time per op it reports events per second of wall time, CPU
// seconds per check (user + system, which a busy machine inflates far less
// than wall time), the peak of the Go heap seen by a sampler every 10 ms, and
// the heap that the history alone holds before the check.
func benchCheck(b *testing.B, events, resources, workers int) {
	benchHistory(b, simulate.Reference(1, events, resources, workers))
}

// benchHistory checks h b.N times, reporting as benchCheck says.
func benchHistory(b *testing.B, h *history.History) {
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

// BenchmarkCheckManyResults is one resource with 3,000 grants, each
// followed by a write of a result of its own (18,000 events): what
// linearizable-sink's search costs when a resource's sink holds many
// results (they were copied whole at each write: quadratic in them).
func BenchmarkCheckManyResults(b *testing.B) {
	var in strings.Builder
	for i := range 3000 {
		t, tok := 2*i, i+1
		fmt.Fprintf(&in, `{"time":%d,"process":"w1","type":"invoke","f":"acquire","resource":"job","value":{"owner":"w1","incarnation":1,"requestId":"a%d","ttl":1}}
{"time":%d,"process":"coordinator","type":"invoke","f":"advance","resource":"job","value":{}}
{"time":%d,"process":"coordinator","type":"ok","f":"advance","resource":"job","value":{"token":%d}}
{"time":%d,"process":"w1","type":"ok","f":"acquire","resource":"job","value":{"token":%d}}
{"time":%d,"process":"w1","type":"invoke","f":"write","resource":"job","value":{"token":%d,"resultId":"r%d","payload":"p%d"}}
{"time":%d,"process":"w1","type":"ok","f":"write","resource":"job","value":{"outcome":"written"}}
`, t, i, t, t, tok, t, tok, t+1, tok, i, i, t+1)
	}
	h, err := history.ReadAll("many", strings.NewReader(in.String()))
	if err != nil {
		b.Fatal(err)
	}
	benchHistory(b, h)
}

// BenchmarkCheckOverlappingGrants is one resource with 2,000 grants in a
// row, each for a ttl far longer than the history (8,000 events): every two
// are an exclusive-lease violation, 1,999,000 pairs of tokens, of which the
// report shows five and counts the rest.
func BenchmarkCheckOverlappingGrants(b *testing.B) { benchHistory(b, overlappingGrants(b, 2000)) }
