package checker

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// rebuild turns the stored path to the violating transition e into a run
// from the initial state whose last step violates an invariant in want,
// and returns it with those of want it violates. The stored path is
// over orbit representatives: it is replayed on them to recover their
// keys, then a concrete run is found that passes through the same orbits,
// taking at each step the first enabled action whose successor lies in
// the next orbit (and, at the last step, violates a stop invariant). The
// model's steps commute with renaming and with Normalize, so such an
// action always exists.
func (b *bfs) rebuild(e edge, want spec.Set) (*model.Run, spec.Set) {
	m := b.m
	canon := b.exps[0].canon
	acts := []uint16{e.act}
	for i := e.parent; i != 0; {
		p, a := b.paths.get(i)
		acts = append(acts, a)
		i = p
	}
	slices.Reverse(acts)

	// The representatives' keys, replayed from the initial state's.
	var buf []model.Action
	init := m.Init()
	var rep model.State
	canon.Canonical(&init, &rep)
	keys := make([][]byte, len(acts))
	for i, a := range acts {
		buf = m.Reduced(&rep, b.opt.Reduce, buf[:0])
		next := rep
		m.Next(&next, &buf[a])
		m.Normalize(&next, b.opt.Reduce)
		canon.Canonical(&next, &rep)
		keys[i] = m.Encode(&rep, nil)
	}

	run := model.NewRun(m)
	var key []byte
	for i := range acts {
		last := i == len(acts)-1
		buf = m.Enabled(&run.State, buf[:0])
		found := false
		for _, a := range buf {
			t := run.State
			f := m.Next(&t, &a)
			cut := t
			m.Normalize(&cut, b.opt.Reduce)
			key, _ = canon.Key(&cut, key[:0])
			if !bytes.Equal(key, keys[i]) || last && spec.Judge(m, &run.State, f, &t)&want == 0 {
				continue
			}
			prev := run.State
			f = run.Do(a)
			if last {
				return run, spec.Judge(m, &prev, f, &run.State) & want
			}
			found = true
			break
		}
		if !found {
			panic(fmt.Sprintf("checker: counterexample step %d not reproducible", i))
		}
	}
	panic("checker: empty counterexample")
}
