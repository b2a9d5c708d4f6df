package model_test

import (
	"math/rand/v2"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// benchConfig is the default BFS configuration of the checker's tests.
var benchConfig = model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2,
	Drops: 1, Dups: 1, Crashes: 1, Restarts: 1}

// sampleStates returns n states met on seeded random walks of m, with an
// action enabled in each.
func sampleStates(m *model.Machine, n int) ([]model.State, []model.Action) {
	r := rand.New(rand.NewPCG(1, 2))
	states := make([]model.State, 0, n)
	acts := make([]model.Action, 0, n)
	var buf []model.Action
	s := m.Init()
	for len(states) < n {
		if r.IntN(40) == 0 {
			s = m.Init()
		}
		buf = m.Enabled(&s, buf[:0])
		a := buf[r.IntN(len(buf))]
		states = append(states, s)
		acts = append(acts, a)
		m.Next(&s, &a)
	}
	return states, acts
}

func benchMachine(b *testing.B) *model.Machine {
	m, err := model.New(benchConfig, model.Design{})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkNext(b *testing.B) {
	m := benchMachine(b)
	states, acts := sampleStates(m, 4096)
	s := new(model.State) // as the explorer does: one scratch state, reused
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		*s = states[i%len(states)]
		m.Next(s, &acts[i%len(acts)])
		i++
	}
}

func BenchmarkEnabled(b *testing.B) {
	m := benchMachine(b)
	states, _ := sampleStates(m, 4096)
	buf := make([]model.Action, 0, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf = m.Enabled(&states[i%len(states)], buf[:0])
		i++
	}
}

func BenchmarkEncode(b *testing.B) {
	m := benchMachine(b)
	states, _ := sampleStates(m, 4096)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf = m.Encode(&states[i%len(states)], buf[:0])
		i++
	}
}

func BenchmarkDecode(b *testing.B) {
	m := benchMachine(b)
	states, _ := sampleStates(m, 4096)
	keys := make([][]byte, len(states))
	for i := range states {
		keys[i] = m.Encode(&states[i], nil)
	}
	var s model.State
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := m.Decode(keys[i%len(keys)], &s); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func benchCanon(b *testing.B, sym model.Symmetry) {
	m := benchMachine(b)
	m.Config.Resources = 2
	states, _ := sampleStates(m, 4096)
	c := m.NewCanon(sym)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf, _ = c.Key(&states[i%len(states)], buf[:0])
		i++
	}
}

func BenchmarkCanonNone(b *testing.B)      { benchCanon(b, 0) }
func BenchmarkCanonWorkers(b *testing.B)   { benchCanon(b, model.SymWorkers) }
func BenchmarkCanonResources(b *testing.B) { benchCanon(b, model.SymWorkers|model.SymResources) }
