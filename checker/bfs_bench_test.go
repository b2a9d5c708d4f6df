package checker

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// benchKeys returns n distinct keys of a typical length (a state's Encode
// under the default BFS configuration is about 95 bytes).
func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, 95)
		binary.LittleEndian.PutUint64(k[40:], uint64(i)*0x9e3779b97f4a7c15)
		keys[i] = k
	}
	return keys
}

func BenchmarkHashKey(b *testing.B) {
	key := benchKeys(1)[0]
	for b.Loop() {
		hashKey(key)
	}
}

func benchVisited(b *testing.B, compact bool) {
	const n = 1 << 20
	keys := benchKeys(2 * n)
	hashes := make([]hash, len(keys))
	for i, k := range keys {
		hashes[i] = hashKey(k)
	}
	b.Run("insert", func(b *testing.B) {
		var a arena
		v := newVisited(compact, &a)
		i := 0
		for b.Loop() {
			if i == n { // a fresh table every n keys: inserts include growth
				a, v, i = arena{}, newVisited(compact, &a), 0
			}
			v.insert(keys[i], hashes[i])
			i++
		}
	})
	var a arena
	v := newVisited(compact, &a)
	for i := range n {
		v.insert(keys[i], hashes[i])
	}
	b.Run("lookup-hit", func(b *testing.B) {
		i := 0
		for b.Loop() {
			v.find(keys[i%n], hashes[i%n])
			i++
		}
	})
	b.Run("lookup-miss", func(b *testing.B) {
		i := 0
		for b.Loop() {
			v.find(keys[n+i%n], hashes[n+i%n])
			i++
		}
	})
}

func BenchmarkVisitedExact(b *testing.B)   { benchVisited(b, false) }
func BenchmarkVisitedCompact(b *testing.B) { benchVisited(b, true) }

// BenchmarkBFS is the exhaustive search of the reference protocol on
// baseConfig (757,985 states under worker symmetry) end to end.
func BenchmarkBFS(b *testing.B) {
	m := newMachine(b, baseConfig, model.Design{})
	for _, hc := range []bool{false, true} {
		for _, g := range []int{1, 2} {
			b.Run(fmt.Sprintf("hashCompact=%v/goroutines=%d", hc, g), func(b *testing.B) {
				var r BFSResult
				for b.Loop() {
					r = BFS(context.Background(), m, BFSOptions{Exhaustive: true, Symmetry: model.SymWorkers,
						HashCompact: hc, Goroutines: g})
				}
				b.ReportMetric(float64(r.States)/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
				b.ReportMetric(float64(r.Transitions)/(b.Elapsed().Seconds()/float64(b.N)), "transitions/s")
				b.ReportMetric(r.BytesPerState, "bytes/state")
			})
		}
	}
}

// BenchmarkBFSLayers is the reduced hash-compact search of P1 ({W2 R1 ttl2
// ops4 grants3 inFlight3}, every fault kind once) to depth 18 (11,243,499
// states; to depth 17, 6,363,680 would fit the tables below without a
// layer), on one goroutine: with tables that double (layers=false), and
// with every part's table held at 2^19 slots, filled to 7/8 (7.3M states
// in all), and followed by layers of 2^19 (layers=true), as a search at
// its memory budget does (bfs.layer): the cost of lookups that read two
// tables far larger than the caches. (A layer must differ in size from
// the doubled table, 2^20, or the part doubles instead: grow.) It fails
// if the layered search ends with one table a part. About 45 s a run.
func BenchmarkBFSLayers(b *testing.B) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Drops: 1, Dups: 1,
		Crashes: 1, Restarts: 1, Forgeries: 1}
	m := newMachine(b, c, model.Design{})
	opt := BFSOptions{Exhaustive: true, MaxDepth: 18, HashCompact: true, Goroutines: 1, Reduce: model.Reductions,
		Symmetry: model.SymWorkers | model.SymResources}
	for _, layers := range []bool{false, true} {
		b.Run(fmt.Sprintf("layers=%v", layers), func(b *testing.B) {
			var r BFSResult
			tables := 0
			for b.Loop() {
				s := newBFS(m, opt)
				if layers {
					for i := range s.seen.parts {
						s.seen.parts[i] = newTable(true, 19, nil)
						s.seen.parts[i].layer = 19
					}
					s.seen.setDense(true)
				}
				r = s.run(context.Background())
				tables = len(s.seen.parts[0].older) + 1
			}
			if r.Stopped != StopDepth {
				b.Fatalf("stopped: %s", r.Stopped)
			}
			if layers && tables < 2 {
				b.Fatalf("the layered search ended with %d table a part: no layer was read", tables)
			}
			b.ReportMetric(float64(r.States)/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
			b.ReportMetric(float64(tables), "tables/part")
		})
	}
}
