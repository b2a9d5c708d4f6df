package model

import (
	"bytes"
	"unsafe"
)

// Symmetry says which process identities a search may treat as
// interchangeable. Workers and resources are interchangeable unless the
// design declares itself Asymmetric (its decisions tell workers or
// resources apart): no step of the framework depends on a worker's or a
// resource's number. Resources are not interchangeable either when the
// design shares a fence or a counter among them (Design.FenceOf,
// CounterOf). Coordinator replicas are never permuted.
type Symmetry uint8

// Symmetries.
const (
	// SymWorkers permutes worker numbers.
	SymWorkers Symmetry = 1 << iota
	// SymResources permutes resource numbers. An idle worker's Res, which
	// nothing reads, is 0 and is not renamed, so every renaming fixes the
	// initial state and the orbits of the reachable states are reachable.
	SymResources
)

// Perm is a permutation of workers and resources: a state's worker w
// becomes worker W[w] and its resource r becomes resource R[r].
type Perm struct {
	W [MaxWorkers]uint8
	R [MaxResources]uint8
}

// Identity returns the permutation that changes nothing.
func Identity() Perm {
	var p Perm
	for i := range p.W {
		p.W[i] = uint8(i)
	}
	for i := range p.R {
		p.R[i] = uint8(i)
	}
	return p
}

// Permute returns s with its workers and resources renamed by p. It is an
// automorphism of the machine for the renamings Symmetry allows: the
// renamed state has the renamed successors and the same invariant verdicts.
func (m *Machine) Permute(s *State, p *Perm) State {
	var t State
	m.permute(s, p, &t)
	return t
}

// permute writes Permute(s, p) to *t, which must not be s.
func (m *Machine) permute(s *State, p *Perm, t *State) {
	*t = *s
	c := &m.Config
	nw, nr := c.Workers, c.Resources
	for w := 0; w < nw; w++ {
		wk := s.Workers[w]
		if wk.busy() { // else Res is 0, and means no resource
			wk.Res = p.R[wk.Res]
		}
		t.Workers[p.W[w]] = wk
	}
	for rep := 0; rep < c.Replicas; rep++ {
		p.coordinator(&s.Coord[rep], &t.Coord[rep], nw, nr)
	}
	p.sink(&s.Sink, &t.Sink, nr)
	for r := 0; r < nr; r++ {
		g := s.Ghost[r]
		for i := 1; i <= int(g.Grants); i++ {
			g.Grant[i].Worker = p.worker(g.Grant[i].Worker)
		}
		g.LostWriter = p.worker(g.LostWriter)
		for w := 0; w < nw; w++ {
			g.Answered[p.W[w]] = s.Ghost[r].Answered[w]
		}
		t.Ghost[p.R[r]] = g
	}
	for i := 0; i < int(t.NMsgs); i++ {
		t.Msgs[i] = p.msg(s.Msgs[i])
	}
	t.sortMsgs()
}

// worker renames a worker numbered from 1 (Lease.Holder, Waiting.Worker,
// Msg.PW, Result.Writer), 0 for none.
func (p *Perm) worker(w uint8) uint8 {
	if w == 0 {
		return 0
	}
	return p.W[w-1] + 1
}

// msg returns msg with its worker, resource and payload's writer renamed.
func (p *Perm) msg(msg Msg) Msg {
	if !msg.coordinators() { // a coordinator's message: Worker is unused
		msg.Worker = p.W[msg.Worker]
	}
	msg.Res, msg.PW = p.R[msg.Res], p.worker(msg.PW)
	return msg
}

// lease returns l with its holder renamed.
func (p *Perm) lease(l Lease) Lease {
	l.Holder = p.worker(l.Holder)
	return l
}

// view returns v with the holder of its lease record renamed.
func (p *Perm) view(v SinkView) SinkView {
	v.Lease = p.lease(v.Lease)
	return v
}

// coordinator writes to *to, a copy of *co, coordinator co with its first
// nw workers and nr resources renamed.
func (p *Perm) coordinator(co, to *Coordinator, nw, nr int) {
	for r := 0; r < nr; r++ {
		to.Lease[p.R[r]] = p.lease(co.Lease[r])
		for w := 0; w < nw; w++ {
			to.Dedup[p.R[r]][p.W[w]] = co.Dedup[r][w]
		}
		to.Counter[p.R[r]] = co.Counter[r]
		to.RU[p.R[r]] = co.RU[r]
		to.AdvSeq[p.R[r]] = co.AdvSeq[r]
		wt := co.Wait[r]
		wt.Worker = p.worker(wt.Worker)
		to.Wait[p.R[r]] = wt
	}
}

// sink writes to *to, a copy of *k, sink k with its first nr resources
// renamed (and the writers of its results), its results sorted again.
func (p *Perm) sink(k, to *Sink, nr int) {
	for r := 0; r < nr; r++ {
		to.Fence[p.R[r]] = k.Fence[r]
		for rep := range k.AdvSeq {
			to.AdvSeq[rep][p.R[r]] = k.AdvSeq[rep][r]
			to.AdvFence[rep][p.R[r]] = k.AdvFence[rep][r]
		}
		to.U[p.R[r]] = k.U[r]
	}
	for i := 0; i < int(to.NResults); i++ {
		x := &to.Results[i]
		x.Res, x.Writer = p.R[x.Res], p.worker(x.Writer)
	}
	to.sortResults()
}

// Symmetries is the renamings the machine's design allows: none if the
// design is Asymmetric; otherwise workers, and resources unless it shares
// a fence or a counter among them.
func (m *Machine) Symmetries() Symmetry {
	sym := SymWorkers | SymResources
	if m.Design.Asymmetric {
		sym = 0
	}
	if m.shared {
		sym &^= SymResources
	}
	return sym
}

// GroupOrder is the number of permutations in the symmetry group sym
// generates under the machine's config.
func (m *Machine) GroupOrder(sym Symmetry) int {
	n := 1
	if sym&SymWorkers != 0 {
		n *= factorial(m.Config.Workers)
	}
	if sym&SymResources != 0 {
		n *= factorial(m.Config.Resources)
	}
	return n
}

func factorial(n int) int {
	f := 1
	for i := 2; i <= n; i++ {
		f *= i
	}
	return f
}

// Canon computes canonical forms under a symmetry group. It keeps scratch
// space, so one Canon must not be used by two goroutines at once; the zero
// value is not usable, call NewCanon.
type Canon struct {
	m     *Machine
	sym   Symmetry
	order int
	tmp   State // Canonical's scratch
	rep   State // Key's
}

// NewCanon returns a canonicaliser for m under sym.
func (m *Machine) NewCanon(sym Symmetry) *Canon {
	if m.Config.Workers < 2 {
		sym &^= SymWorkers
	}
	if m.Config.Resources < 2 {
		sym &^= SymResources
	}
	sym &= m.Symmetries()
	return &Canon{m: m, sym: sym, order: m.GroupOrder(sym)}
}

// Key appends to b the canonical key of s, the Encode of its canonical
// representative (see Canonical), and returns the size of s's orbit. Two
// states get the same key exactly when one is a renaming of the other.
func (c *Canon) Key(s *State, b []byte) ([]byte, int) {
	if c.sym == 0 {
		return c.m.Encode(s, b), 1 // s is its own representative
	}
	orbit := c.Canonical(s, &c.rep)
	return c.m.Encode(&c.rep, b), orbit
}

// Canonical writes to *t the canonical representative of s's orbit, the
// least state (in the order of its memory) among the renamings of s that
// list workers (and resources) in the order of a signature that no
// renaming changes, and returns the size of the orbit: the number of
// distinct states that are renamings of s. s must be normal, its messages
// and results sorted, as every state Init, Step and Next make is
// (TestIdentityRenamesNothing): the identity's renaming of s is then s
// itself, and a copy stands for it.
//
// Correctness: the signatures are invariant, so the set of renamings whose
// signatures come out sorted is the same set for every state of an orbit,
// and so is its least member. Among them, exactly |Stab(s)| renamings reach
// the least member, so orbit = |G| / |Stab(s)|.
func (c *Canon) Canonical(s, t *State) int {
	m := c.m
	if c.sym == 0 {
		*t = *s
		return 1
	}
	nw, nr := m.Config.Workers, m.Config.Resources
	var rsig [MaxResources]uint64
	var rord [MaxResources]uint8 // resource at sorted position k
	var rgrp, wgrp groups
	for r := 0; r < nr; r++ {
		rord[r] = uint8(r)
	}
	if c.sym&SymResources != 0 {
		for r := 0; r < nr; r++ {
			rsig[r] = c.resourceSig(s, uint8(r))
		}
		rgrp = sortBySig(rord[:nr], rsig[:nr])
	}
	var wsig [MaxWorkers]uint64
	var word [MaxWorkers]uint8
	for w := 0; w < nw; w++ {
		word[w] = uint8(w)
	}
	if c.sym&SymWorkers != 0 {
		c.workerSigs(s, &rsig, &wsig)
		wgrp = sortBySig(word[:nw], wsig[:nw])
	}
	stab := 0
	p := Identity()
	for {
		rid := true // p.R is the identity
		for k := 0; k < nr; k++ {
			p.R[rord[k]] = uint8(k)
			rid = rid && rord[k] == uint8(k)
		}
		for {
			id := rid
			for k := 0; k < nw; k++ {
				p.W[word[k]] = uint8(k)
				id = id && word[k] == uint8(k)
			}
			u := t
			if stab > 0 {
				u = &c.tmp
			}
			if id { // s is normal: the identity renames it to itself
				*u = *s
			} else {
				m.permute(s, &p, u)
			}
			if stab == 0 {
				stab = 1
			} else {
				switch cmp := bytes.Compare(stateBytes(&c.tmp), stateBytes(t)); {
				case cmp < 0:
					*t, stab = c.tmp, 1
				case cmp == 0:
					stab++
				}
			}
			if c.sym&SymWorkers == 0 || !wgrp.next(word[:nw]) {
				break
			}
		}
		if c.sym&SymResources == 0 || !rgrp.next(rord[:nr]) {
			break
		}
	}
	return c.order / stab
}

// mix is a 64-bit finaliser (splitmix64): signatures are combined from
// mixed fields so that unrelated states rarely tie.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func pack(bs ...uint8) uint64 {
	var x uint64
	for _, v := range bs {
		x = x<<8 | uint64(v)
	}
	return x
}

// resourceSig is a function of resource r's data that no renaming of
// workers or resources changes.
func (c *Canon) resourceSig(s *State, r uint8) uint64 {
	m := c.m
	g := &s.Ghost[r]
	h := mix(pack(g.Grants|g.Named<<4|bit(g.LostWriter != 0)<<7, g.Observed, g.Advanced, g.LastAdvanced, g.Shown, g.LostToken, g.SeenToken, g.Latest))
	for i := 1; i <= int(g.Grants); i++ {
		t := &g.Grant[i]
		h = mix(h ^ pack(bit(t.Worker != 0), t.Inc, t.Token, uint8(t.Early), uint8(t.Late), uint8(t.Phase), t.Req))
	}
	for rep := 0; rep < m.Config.Replicas; rep++ {
		l := &s.Coord[rep].Lease[r]
		h = mix(h ^ pack(bit(l.Holder != 0), l.Inc, l.Token, l.Grant, uint8(l.Left), s.Coord[rep].Counter[r]))
		ru, wt := &s.Coord[rep].RU[r], &s.Coord[rep].Wait[r]
		h = mix(h ^ pack(ru.A, ru.B, uint8(ru.T), s.Coord[rep].AdvSeq[r]))
		h = mix(h ^ pack(bit(wt.Worker != 0), wt.Inc, wt.Req, wt.Age, uint8(wt.Skew), wt.U, wt.Seq, wt.Token))
	}
	u := &s.Sink.U[r]
	h = mix(h ^ pack(s.Sink.Fence[r], u.A, u.B, uint8(u.T)))
	for rep := 0; rep < m.Config.Replicas; rep++ {
		h = mix(h ^ pack(s.Sink.AdvSeq[rep][r], s.Sink.AdvFence[rep][r]))
	}
	var sum uint64 // a multiset: order-free
	for i := 0; i < int(s.Sink.NResults); i++ {
		if x := &s.Sink.Results[i]; x.Res == r {
			sum += mix(pack(x.Key, x.Token, x.Grant, bit(x.Writer != 0)))
		}
	}
	for i := 0; i < int(s.NMsgs); i++ {
		if x := &s.Msgs[i]; x.Res == r {
			sum += mix(pack(x.Kind, x.Replica, x.Inc, x.Token, x.Req, x.Grant, x.Code, x.PT) ^
				pack(x.Age, uint8(x.Skew), bit(x.Live), bit(x.PW != 0), x.Key, x.U)<<16)
		}
	}
	return mix(h ^ sum)
}

// workerSigs computes every worker's signature: its own fields (its
// resource, if busy, by the resource's signature when resources are permuted) and the
// multiset of the messages to or from it.
func (c *Canon) workerSigs(s *State, rsig *[MaxResources]uint64, sig *[MaxWorkers]uint64) {
	for w := 0; w < c.m.Config.Workers; w++ {
		wk := &s.Workers[w]
		res := uint64(wk.Res) // 0 for no resource (not busy)
		if c.sym&SymResources != 0 && wk.busy() {
			res = rsig[wk.Res]
		}
		sig[w] = mix(mix(pack(wk.Inc, wk.Ops, wk.Pending, wk.Token, wk.Grant, wk.Req, bit(wk.Paused), uint8(wk.Skew))) ^
			mix(pack(wk.U.A, wk.U.B, uint8(wk.U.T), wk.PausedFor, bit(wk.Holding))) ^ res)
	}
	for i := 0; i < int(s.NMsgs); i++ {
		x := &s.Msgs[i]
		if x.coordinators() {
			continue
		}
		res := uint64(x.Res)
		if c.sym&SymResources != 0 {
			res = rsig[x.Res]
		}
		sig[x.Worker] += mix(res ^ pack(x.Kind, x.Replica, x.Inc, x.Token, x.Req, x.Grant, x.Code, x.PT) ^
			pack(x.Age, uint8(x.Skew), bit(x.Live), bit(x.PW == x.Worker+1), bit(x.PW != 0), x.Key, x.U)<<16)
	}
}

// groups are the runs of equal signatures in a sorted order: end[i] is the
// position after group i. Only orders within a group are tried.
type groups struct {
	n   int
	end [MaxWorkers + 1]uint8
}

// sortBySig sorts ids by sig (stable, so each group starts in ascending id
// order) and returns the groups of equal signatures.
func sortBySig(ids []uint8, sig []uint64) groups {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && sig[ids[j]] < sig[ids[j-1]]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	var g groups
	for i := 1; i <= len(ids); i++ {
		if i == len(ids) || sig[ids[i]] != sig[ids[i-1]] {
			g.end[g.n] = uint8(i)
			g.n++
		}
	}
	return g
}

// next advances ids to the next order that permutes within groups only,
// like an odometer of lexicographic permutations; it returns false (with
// ids back at the first order) after the last.
func (g *groups) next(ids []uint8) bool {
	for i := g.n - 1; i >= 0; i-- {
		lo := 0
		if i > 0 {
			lo = int(g.end[i-1])
		}
		if nextPerm(ids[lo:g.end[i]]) {
			return true
		}
	}
	return false
}

// nextPerm is the lexicographic next permutation; after the last it
// restores ascending order and returns false.
func nextPerm(a []uint8) bool {
	i := len(a) - 2
	for i >= 0 && a[i] >= a[i+1] {
		i--
	}
	if i < 0 {
		for l, r := 0, len(a)-1; l < r; l, r = l+1, r-1 {
			a[l], a[r] = a[r], a[l]
		}
		return false
	}
	j := len(a) - 1
	for a[j] <= a[i] {
		j--
	}
	a[i], a[j] = a[j], a[i]
	for l, r := i+1, len(a)-1; l < r; l, r = l+1, r-1 {
		a[l], a[r] = a[r], a[l]
	}
	return true
}

// stateBytes is s's memory. A State is a plain array of one-byte fields
// (uint8, int8, bool): no padding, no pointers, so two states are ==
// exactly when their bytes are equal, and comparing the bytes orders
// states (Canonical's least image). TestStateLayout checks the layout.
func stateBytes(s *State) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s)), unsafe.Sizeof(State{}))
}
