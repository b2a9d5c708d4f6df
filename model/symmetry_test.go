package model_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// symConfig has room for every kind of renaming: three workers, two
// resources, two replicas, and every fault.
var symConfig = model.Config{Workers: 3, Resources: 2, Replicas: 2, TTL: 2, Ops: 3, Grants: 3, InFlight: 4,
	Drops: 1, Dups: 1, Crashes: 1, Restarts: 1, Forgeries: 1, Skew: 1, SinkRestarts: 1}

// forgetfulSink is a design whose sink loses its results when it
// restarts: the ghost then keeps a lost payload (Ghost.LostWriter), which
// the state's encoding, renamings and canonical forms carry.
var forgetfulSink = model.Design{SinkRestart: func(s model.Sink) model.Sink {
	s.Results, s.NResults = [model.MaxResults]model.Result{}, 0
	return s
}}

// variantMachines is one machine per built-in variant under c, and one of
// forgetfulSink.
func variantMachines(t *testing.T, c model.Config) map[string]*model.Machine {
	ms := map[string]*model.Machine{}
	for _, v := range designs.All() {
		m, err := v.Machine(c)
		if err != nil {
			t.Fatal(err)
		}
		ms[v.Name] = m
	}
	m, err := model.New(c, forgetfulSink)
	if err != nil {
		t.Fatal(err)
	}
	ms["forgetful-sink"] = m
	return ms
}

// perms lists every permutation of 0..n-1.
func perms(n int) [][]uint8 {
	if n == 0 {
		return [][]uint8{{}}
	}
	var out [][]uint8
	for _, p := range perms(n - 1) {
		for i := 0; i <= len(p); i++ { // insert n-1 at position i
			q := append(append(append([]uint8{}, p[:i]...), uint8(n-1)), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// allPerms lists every permutation of sym's group under m's config.
func allPerms(m *model.Machine, sym model.Symmetry) []model.Perm {
	ws, rs := [][]uint8{nil}, [][]uint8{nil}
	if sym&model.SymWorkers != 0 {
		ws = perms(m.Config.Workers)
	}
	if sym&model.SymResources != 0 {
		rs = perms(m.Config.Resources)
	}
	var out []model.Perm
	for _, w := range ws {
		for _, r := range rs {
			p := model.Identity()
			copy(p.W[:], w)
			copy(p.R[:], r)
			out = append(out, p)
		}
	}
	return out
}

// TestStateLayout checks what Canonical's byte comparison relies on: a State is one-byte fields
// only, with no padding.
func TestStateLayout(t *testing.T) {
	var leaves func(ty reflect.Type) int
	leaves = func(ty reflect.Type) int {
		switch ty.Kind() {
		case reflect.Uint8, reflect.Int8, reflect.Bool:
			return 1
		case reflect.Array:
			return ty.Len() * leaves(ty.Elem())
		case reflect.Struct:
			n := 0
			for i := range ty.NumField() {
				n += leaves(ty.Field(i).Type)
			}
			return n
		}
		t.Fatalf("State holds a %s: stateBytes needs one-byte fields", ty)
		return 0
	}
	if n, size := leaves(reflect.TypeFor[model.State]()), int(unsafe.Sizeof(model.State{})); n != size {
		t.Fatalf("State has %d bytes of fields in %d bytes of memory: padding breaks stateBytes", n, size)
	}
}

// TestDecodeRoundTrip checks that Decode inverts Encode on reachable states,
// raw and canonical, with and without timing faults, under every design, and
// refuses truncated or overlong bytes; and on each raw state with its first
// resource's highest token seen above the newest observed grant's (a
// newer grant with a lower token: Encode then writes it apart), every
// grant named by the ghost (Ghost.Named, which shares a byte with Grants),
// the last advance below the highest (written apart too), and a fence
// shown above every advance and token seen (Ghost.Shown, written apart
// where it is not 0).
func TestDecodeRoundTrip(t *testing.T) {
	timed := symConfig
	timed.Delay, timed.Pause = 1, 2
	for _, c := range []model.Config{symConfig, timed} {
		for name, m := range variantMachines(t, c) {
			states, _ := sampleStates(m, 2000)
			canon := m.NewCanon(model.SymWorkers | model.SymResources)
			var rep, u model.State
			for i := range states {
				canon.Canonical(&states[i], &rep)
				lower := states[i]
				g := &lower.Ghost[0]
				g.SeenToken = g.Grant[g.Observed].Token + 1
				g.Named = g.Grants // grants the ghost named for answers from records
				if g.Advanced > 0 {
					g.LastAdvanced = g.Advanced - 1 // an advance lowered the fence
				}
				g.Shown = max(g.Advanced, g.SeenToken) + 1 // a sink showed a fence above both
				for _, s := range []*model.State{&states[i], &rep, &lower} {
					b := m.Encode(s, nil)
					if err := m.Decode(b, &u); err != nil || u != *s {
						t.Fatalf("%s: Decode(Encode(s)) = %v, equal %v", name, err, u == *s)
					}
					if m.Decode(b[:len(b)-1], &u) == nil {
						t.Fatalf("%s: a truncated encoding was accepted", name)
					}
					if m.Decode(append(b, 0), &u) == nil {
						t.Fatalf("%s: an encoding with a trailing byte was accepted", name)
					}
				}
			}
		}
	}
}

// TestIdentityRenamesNothing checks what Canonical relies on to skip the
// identity's renaming: the states the model makes, stepped and then
// normalized by every reduction, are normal (messages and results sorted),
// so that renaming one by the identity gives it back.
func TestIdentityRenamesNothing(t *testing.T) {
	id := model.Identity()
	results := 0
	for name, m := range variantMachines(t, symConfig) {
		for seed := range uint64(40) {
			r := rand.New(rand.NewPCG(seed, 3))
			s := m.Init()
			var acts, busy []model.Action
			for range 300 {
				acts = m.Enabled(&s, acts[:0])
				if len(acts) == 0 {
					break
				}
				busy = busy[:0] // mostly steps toward a commit, or the walk rarely makes two
				for _, a := range acts {
					if a.Kind == model.Acquire || a.Kind == model.Write || a.Kind == model.Deliver {
						busy = append(busy, a)
					}
				}
				pick := acts
				if len(busy) > 0 && r.IntN(5) > 0 {
					pick = busy
				}
				m.Next(&s, &pick[r.IntN(len(pick))])
				n := s
				m.Normalize(&n, model.Reductions)
				for _, u := range []*model.State{&s, &n} {
					if p := m.Permute(u, &id); p != *u {
						t.Fatalf("%s: the identity renames a reachable state:\n%+v\nto\n%+v", name, *u, p)
					}
				}
				if s.Sink.NResults > 1 {
					results++
				}
			}
		}
	}
	if results < 100 {
		t.Fatalf("%d states sampled with two results at the sink: their order went all but unchecked", results)
	}
	t.Logf("%d states with two results or more", results)
}

// TestPermuteIsAutomorphism checks that renaming commutes with the model:
// the successors of a renamed state are the renamed successors, with the
// same verdicts.
func TestPermuteIsAutomorphism(t *testing.T) {
	for name, m := range variantMachines(t, symConfig) {
		perms := allPerms(m, m.Symmetries())
		if want := m.GroupOrder(m.Symmetries()); len(perms) != want {
			t.Fatalf("%d permutations, want %d", len(perms), want)
		}
		states, _ := sampleStates(m, 300)
		var acts, pacts []model.Action
		for i := range states {
			s := &states[i]
			p := perms[i%len(perms)]
			ps := m.Permute(s, &p)
			acts = m.Enabled(s, acts[:0])
			pacts = m.Enabled(&ps, pacts[:0])
			if len(acts) != len(pacts) {
				t.Fatalf("%s: %d actions, %d after renaming by %v", name, len(acts), len(pacts), p)
			}
			want := map[string]spec.Set{}
			for _, a := range pacts {
				n := ps
				f := m.Next(&n, &a)
				want[string(m.Encode(&n, nil))] |= spec.Judge(m, &ps, f, &n) | 1<<15
			}
			for _, a := range acts {
				n := *s
				f := m.Next(&n, &a)
				v := spec.Judge(m, s, f, &n)
				pn := m.Permute(&n, &p)
				got, ok := want[string(m.Encode(&pn, nil))]
				if !ok || got&v != v {
					t.Fatalf("%s: renaming by %v does not commute with %v (found %v, verdict %v of %v)",
						name, p, a, ok, v.IDs(), got.IDs())
				}
			}
		}
	}
}

// TestRenamingKeepsInit checks what makes the orbits' sizes count
// reachable states: every renaming leaves the initial state as it is, and
// a worker with neither an outstanding operation nor a token has resource
// 0 in every sampled state and in each renaming of it.
func TestRenamingKeepsInit(t *testing.T) {
	idle := 0
	for name, m := range variantMachines(t, symConfig) {
		perms := allPerms(m, m.Symmetries())
		init := m.Init()
		for _, p := range perms {
			if r := m.Permute(&init, &p); r != init {
				t.Fatalf("%s: renaming by %v changes the initial state", name, p)
			}
		}
		states, _ := sampleStates(m, 300)
		for i := range states {
			p := perms[i%len(perms)]
			for _, s := range []model.State{states[i], m.Permute(&states[i], &p)} {
				for w, wk := range s.Workers[:m.Config.Workers] {
					if wk.Token == 0 && wk.Pending == model.OpNone {
						idle++
						if wk.Res != 0 {
							t.Fatalf("%s: idle worker %d has resource %d", name, w, wk.Res)
						}
					}
				}
			}
		}
	}
	if idle == 0 {
		t.Fatal("no idle worker sampled")
	}
}

// TestCanonicalIsOrbitInvariant checks Key against brute force: every
// renaming of a state has its key, and the orbit size is the number of
// distinct renamings.
func TestCanonicalIsOrbitInvariant(t *testing.T) {
	for _, sym := range []model.Symmetry{model.SymWorkers, model.SymResources, model.SymWorkers | model.SymResources} {
		for name, m := range variantMachines(t, symConfig) {
			perms := allPerms(m, sym&m.Symmetries())
			c := m.NewCanon(sym)
			states, _ := sampleStates(m, 200)
			owner := map[string]string{} // key -> an orbit member's encoding
			for i := range states {
				s := &states[i]
				key, orbit := c.Key(s, nil)
				distinct := map[string]bool{}
				least := ""
				for _, p := range perms {
					ps := m.Permute(s, &p)
					enc := string(m.Encode(&ps, nil))
					distinct[enc] = true
					if least == "" || enc < least {
						least = enc
					}
					if k, o := c.Key(&ps, nil); !bytes.Equal(k, key) || o != orbit {
						t.Fatalf("%s sym=%d: renaming by %v changes the key or orbit (%d, %d)", name, sym, p, o, orbit)
					}
				}
				if orbit != len(distinct) {
					t.Fatalf("%s sym=%d: orbit %d, brute force %d", name, sym, orbit, len(distinct))
				}
				if !distinct[string(key)] {
					t.Fatalf("%s sym=%d: the key is not the encoding of a renaming", name, sym)
				}
				if prev, ok := owner[string(key)]; ok && prev != least {
					t.Fatalf("%s sym=%d: two orbits share a key", name, sym)
				}
				owner[string(key)] = least
			}
		}
	}
}

// TestActionTextRoundTrip: every action of every built-in design reads back
// from its text form, as a history header records it.
func TestActionTextRoundTrip(t *testing.T) {
	cfg := model.DefaultConfig()
	cfg.Replicas = 2
	for name, m := range variantMachines(t, cfg) {
		for seed := uint64(0); seed < 20; seed++ {
			r := rand.New(rand.NewPCG(seed, 1))
			run := model.NewRun(m)
			for i := 0; i < 80; i++ {
				acts := m.Enabled(&run.State, nil)
				a := acts[r.IntN(len(acts))]
				b, err := model.ParseAction(a.String())
				if err != nil || b != a {
					t.Fatalf("%s: %q parses to %+v, %v; want %+v", name, a.String(), b, err, a)
				}
				run.Do(a)
			}
		}
	}
	// A field the kind does not have, or one given twice, changed nothing
	// and was taken: a replay then blamed a step that read as fine.
	for _, bad := range []string{"", "fly w=1", "deliver", "deliver rocket", "acquire w", "acquire w=300", "acquire q=1", "clock skew=500",
		"tick w=1", "acquire w=0 r=0 c=0 skew=3", "acquire w=0 r=0 c=0 w=1", "write w=0 held held"} {
		if _, err := model.ParseAction(bad); err == nil {
			t.Errorf("ParseAction(%q) accepted", bad)
		}
	}
}
