package checker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// benchSearch is a search as a level starts, made up: states distinct
// keys of a typical length (benchKeys) with their parent links, and a
// frontier of a quarter of them (the initial state's key, over and
// over), exact or hash-compact.
func benchSearch(b *testing.B, states int, compact bool) *bfs {
	m := newMachine(b, model.DefaultConfig(), model.Design{})
	s := newBFS(m, BFSOptions{HashCompact: compact, Symmetry: model.SymWorkers | model.SymResources})
	init := m.Init()
	initKey := m.Encode(&init, nil)
	frontier := states / 4
	for i, key := range benchKeys(states) {
		s.seen.insert(key, hashKey(key))
		s.paths.add(uint32(max(i-1, 0)), uint16(i%7))
		if i >= states-frontier {
			s.cur = append(s.cur, s.front.add(initKey)|frontRef)
		}
	}
	s.levels = []uint64{1, uint64(states - frontier - 1), uint64(frontier)}
	s.depth, s.curStart, s.curStride = 2, uint32(states-frontier), 1
	s.disk.identity = s.identity()
	s.mark()
	return s
}

// BenchmarkCheckpoint writes (temporary file, fsync, rename) and reads
// back (checked, the visited set rebuilt) the checkpoint of a search of
// 2 million states: MB/s of the file, states/s.
func BenchmarkCheckpoint(b *testing.B) {
	const states = 2_000_000
	for _, compact := range []bool{false, true} {
		s := benchSearch(b, states, compact)
		dir := b.TempDir()
		s.opt.Checkpoint = dir
		file := filepath.Join(dir, CheckpointFile)
		size := func() int64 {
			st, err := os.Stat(file)
			if err != nil {
				b.Fatal(err)
			}
			return st.Size()
		}
		b.Run(fmt.Sprintf("write/hashCompact=%v", compact), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.save(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(size())
			b.ReportMetric(states/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
		})
		b.Run(fmt.Sprintf("read/hashCompact=%v", compact), func(b *testing.B) {
			for b.Loop() {
				r := newBFS(s.m, BFSOptions{HashCompact: compact, Symmetry: s.opt.Symmetry, Resume: dir})
				r.start = s.start
				if err := r.begin(); err != nil || r.seen.len() != states {
					b.Fatalf("%v, %d states", err, r.seen.len())
				}
			}
			b.SetBytes(size())
			b.ReportMetric(states/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
		})
	}
}
