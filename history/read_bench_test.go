package history_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/history/simulate"
)

// encoded returns a generated history of n events (1,000 resources, 50
// processes) in the file format.
func encoded(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	if err := history.Encode(&buf, simulate.Reference(1, n, 1000, 50)); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchRead reads the encoded history from a file b.N times (as explore
// check does: ReadFile), reporting events per second, bytes per second and
// the heap the history holds once read.
func benchRead(b *testing.B, n int) {
	in := encoded(b, n)
	path := filepath.Join(b.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	in = nil
	b.ReportAllocs()
	var events int
	var held uint64
	b.ResetTimer()
	for b.Loop() {
		h, err := history.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		events = len(h.Events)
		if held == 0 {
			b.StopTimer()
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms1)
			runtime.KeepAlive(h)
			h = nil
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			held = ms1.HeapAlloc - ms0.HeapAlloc
			b.StartTimer()
		}
		_ = h
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(held)/(1<<20), "history-MiB")
}

// BenchmarkRead reads 100,000 events.
func BenchmarkRead(b *testing.B) { benchRead(b, 100_000) }

// BenchmarkRead1M reads the 1,000,000 events of the end-to-end benchmark
// (124 MB of JSON Lines).
func BenchmarkRead1M(b *testing.B) { benchRead(b, 1_000_000) }
