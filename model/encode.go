package model

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// raw is the memory of *p, a value of one-byte fields only (uint8, int8,
// bool; TestStateLayout): their values, field by field, in declaration
// order. Its length is a constant of E, so that appending it or copying
// it compiles to a few moves.
func raw[E any](p *E) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// lessMsg orders messages by their bytes, empty slots last: a Msg is 16
// bytes, compared as two big-endian words.
func lessMsg(a, b *Msg) bool {
	if a.Kind == MsgNone || b.Kind == MsgNone {
		return b.Kind == MsgNone && a.Kind != MsgNone
	}
	x, y := raw(a), raw(b)
	if p, q := binary.BigEndian.Uint64(x[:8]), binary.BigEndian.Uint64(y[:8]); p != q {
		return p < q
	}
	return binary.BigEndian.Uint64(x[8:16]) < binary.BigEndian.Uint64(y[8:16])
}

// A Msg is 16 bytes (lessMsg): either array length is negative otherwise.
var (
	_ [unsafe.Sizeof(Msg{}) - 16]struct{}
	_ [16 - unsafe.Sizeof(Msg{})]struct{}
)

// normal puts a state a step changed in its normal form: the Res of every
// worker that is not busy 0, and the messages sorted.
func (s *State) normal() {
	for i := range s.Workers {
		if wk := &s.Workers[i]; !wk.busy() {
			wk.Res = 0
		}
	}
	s.sortMsgs()
}

// sortMsgs keeps the in-flight messages sorted, so that the network is a
// multiset: states that differ only in the order messages were sent are equal.
func (s *State) sortMsgs() {
	for i := 1; i < int(s.NMsgs); i++ {
		for j := i; j > 0 && lessMsg(&s.Msgs[j], &s.Msgs[j-1]); j-- {
			s.Msgs[j], s.Msgs[j-1] = s.Msgs[j-1], s.Msgs[j]
		}
	}
}

func lessResult(a, b *Result) bool { return string(raw(a)) < string(raw(b)) }

func (r *Sink) sortResults() {
	for i := 1; i < int(r.NResults); i++ {
		for j := i; j > 0 && lessResult(&r.Results[j], &r.Results[j-1]); j-- {
			r.Results[j], r.Results[j-1] = r.Results[j-1], r.Results[j]
		}
	}
}

// Encode appends the canonical encoding of s: the bytes of every field in
// use under the machine's config, a struct (raw) or a field at a time. Two
// states are equal exactly when their encodings are.
func (m *Machine) Encode(s *State, b []byte) []byte {
	c := &m.Config
	nw, nr, nc := c.Workers, c.Resources, c.Replicas
	for w := 0; w < nw; w++ {
		b = append(b, raw(&s.Workers[w])...)
	}
	for rep := 0; rep < nc; rep++ {
		co := &s.Coord[rep]
		b = append(b, raw(&co.U)...)
		for r := 0; r < nr; r++ {
			b = append(b, raw(&co.Lease[r])...)
			b = append(b, co.Counter[r], co.AdvSeq[r])
			b = append(b, raw(&co.RU[r])...)
			b = append(b, raw(&co.Wait[r])...)
			for w := 0; w < nw; w++ {
				b = append(b, raw(&co.Dedup[r][w])...)
			}
		}
	}
	k := &s.Sink
	for r := 0; r < nr; r++ {
		b = append(b, k.Fence[r])
		for rep := 0; rep < nc; rep++ {
			b = append(b, k.AdvSeq[rep][r], k.AdvFence[rep][r])
		}
		b = append(b, raw(&k.U[r])...)
	}
	b = append(b, k.NResults)
	for i := 0; i < int(k.NResults); i++ {
		b = append(b, raw(&k.Results[i])...)
	}
	b = append(b, s.NMsgs)
	for i := 0; i < int(s.NMsgs); i++ {
		b = append(b, raw(&s.Msgs[i])...)
	}
	for r := 0; r < nr; r++ {
		g := &s.Ghost[r]
		// Observed and Latest in one byte, with a bit for a SeenToken
		// other than the token of the newest grant observed (it is that
		// token unless a newer grant carried a lower one), which then
		// follows the grants, and one for a LastAdvanced below Advanced
		// (they are one unless an advance lowered the fence), which
		// follows Advanced.
		seen, lower := g.SeenToken != g.Grant[g.Observed].Token, g.LastAdvanced != g.Advanced
		b = append(b, g.Observed|g.Latest<<3|bit(seen)<<6|bit(lower)<<7, g.Grants|g.Named<<4|bit(g.Shown != 0)<<7, g.Advanced)
		if lower {
			b = append(b, g.LastAdvanced)
		}
		if g.Shown != 0 { // 0 unless a sink showed a fence or a token above every advance and grant seen
			b = append(b, g.Shown)
		}
		if m.losesResults {
			b = append(b, g.LostWriter, g.LostToken)
		}
		for i := 1; i <= int(g.Grants); i++ {
			t := &g.Grant[i] // Phase (2 bits) and Req (at most MaxOps) share a byte
			b = append(b, t.Worker, t.Inc, t.Token, uint8(t.Early), uint8(t.Late), uint8(t.Phase)|t.Req<<2)
		}
		if seen {
			b = append(b, g.SeenToken)
		}
		for w := 0; w < nw; w++ {
			b = append(b, raw(&g.Answered[w])...)
		}
	}
	return append(b, s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged, s.SinkRestarts) // budgetBytes
}

// Encode packs a resource's Observed and Latest, grant numbers, in three
// bits each, and its Grants and Named in four; a grant's Phase in two bits
// and its Req in the six above.
const _ = uint(7-MaxGrants) + uint(3-int(Released)) + uint(63-MaxOps)

// budgetBytes is the length of the tail of Encode that holds the fault
// budgets spent, one byte each (LessSpent).
const budgetBytes = 6

// errEncoded reports bytes that Encode did not write.
var errEncoded = errors.New("model: not an encoded state")

// Decode sets *s to the state whose encoding (under the machine's config)
// is b: the inverse of Encode for the states the machine reaches, in which
// every slot the config leaves unused is zero. It refuses bytes that Encode
// cannot have written: too few or too many, a bool above 1, a count above
// its array.
func (m *Machine) Decode(b []byte, s *State) error {
	*s = State{}
	c := &m.Config
	nw, nr, nc := c.Workers, c.Resources, c.Replicas
	d := decoder{b: b}
	for w := 0; w < nw; w++ {
		x, wk := d.take(14), &s.Workers[w]
		wk.Inc, wk.Ops, wk.Pending, wk.Res, wk.Token, wk.Grant, wk.Req = x[0], x[1], x[2], x[3], x[4], x[5], x[6]
		wk.Paused, wk.Holding, wk.PausedFor, wk.Skew, wk.U = d.bool(x[7]), d.bool(x[8]), x[9], int8(x[10]), regs(x[11:])
	}
	for rep := 0; rep < nc; rep++ {
		co := &s.Coord[rep]
		co.U = regs(d.take(3))
		for r := 0; r < nr; r++ {
			x, l, wt := d.take(18), &co.Lease[r], &co.Wait[r]
			l.Holder, l.Inc, l.Token, l.Grant, l.Left = x[0], x[1], x[2], x[3], int8(x[4])
			co.Counter[r], co.AdvSeq[r], co.RU[r] = x[5], x[6], regs(x[7:])
			wt.Worker, wt.Inc, wt.Req, wt.Age = x[10], x[11], x[12], x[13]
			wt.Skew, wt.U, wt.Seq, wt.Token = int8(x[14]), x[15], x[16], x[17]
			for w := 0; w < nw; w++ {
				x, dd := d.take(4), &co.Dedup[r][w]
				dd.Inc, dd.Req, dd.Token, dd.Grant = x[0], x[1], x[2], x[3]
			}
		}
	}
	for r := 0; r < nr; r++ {
		s.Sink.Fence[r] = d.take(1)[0]
		for rep := 0; rep < nc; rep++ {
			x := d.take(2)
			s.Sink.AdvSeq[rep][r], s.Sink.AdvFence[rep][r] = x[0], x[1]
		}
		s.Sink.U[r] = regs(d.take(3))
	}
	s.Sink.NResults = d.count(MaxResults)
	for i := 0; i < int(s.Sink.NResults); i++ {
		x, y := d.take(5), &s.Sink.Results[i]
		y.Res, y.Key, y.Writer, y.Token, y.Grant = x[0], x[1], x[2], x[3], x[4]
	}
	s.NMsgs = d.count(MaxMsgs)
	for i := 0; i < int(s.NMsgs); i++ {
		x, y := d.take(16), &s.Msgs[i]
		y.Kind, y.Worker, y.Res, y.Replica, y.Inc, y.Token, y.Req, y.Grant = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		y.Code, y.PW, y.PT, y.Age, y.Skew, y.Live, y.Key, y.U = x[8], x[9], x[10], x[11], int8(x[12]), d.bool(x[13]), x[14], x[15]
	}
	for r := 0; r < nr; r++ {
		g := &s.Ghost[r]
		packed, grants := d.take(1)[0], d.take(1)[0]
		g.Grants, g.Named = grants&15, grants>>4&7
		g.Observed, g.Latest, g.Advanced = packed&7, packed>>3&7, d.take(1)[0]
		g.LastAdvanced = g.Advanced
		if packed>>7 != 0 {
			g.LastAdvanced = d.take(1)[0]
			d.bad = d.bad || g.LastAdvanced >= g.Advanced
		}
		if grants>>7 != 0 {
			g.Shown = d.take(1)[0]
			d.bad = d.bad || g.Shown <= g.Advanced
		}
		if g.Grants > MaxGrants || g.Named > g.Grants || g.Observed > g.Grants || g.Latest > g.Grants {
			d.bad, g.Grants, g.Named, g.Observed, g.Latest = true, 0, 0, 0, 0
		}
		if m.losesResults {
			x := d.take(2)
			g.LostWriter, g.LostToken = x[0], x[1]
		}
		for i := 1; i <= int(g.Grants); i++ {
			x, t := d.take(6), &g.Grant[i]
			t.Worker, t.Inc, t.Token, t.Early, t.Late, t.Phase, t.Req = x[0], x[1], x[2], int8(x[3]), int8(x[4]), Phase(x[5]&3), x[5]>>2
			d.bad = d.bad || t.Req > MaxOps
		}
		g.SeenToken = g.Grant[g.Observed].Token
		if packed>>6&1 != 0 {
			g.SeenToken = d.take(1)[0]
			d.bad = d.bad || g.SeenToken == g.Grant[g.Observed].Token
		}
		d.bad = d.bad || g.Shown != 0 && g.Shown <= g.SeenToken // Encode writes none at or below it
		for w := 0; w < nw; w++ {
			x := d.take(2)
			g.Answered[w][0], g.Answered[w][1] = x[0], x[1]
		}
	}
	x := d.take(6)
	s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged, s.SinkRestarts = x[0], x[1], x[2], x[3], x[4], x[5]
	if d.bad || len(d.b) != 0 {
		return errEncoded
	}
	return nil
}

// decoder reads Encode's bytes in order, a group of fields at a time;
// reading past the end, or a value out of range, marks it bad.
type decoder struct {
	b   []byte
	bad bool
}

// zeros is what take reads past the end: its longest group.
var zeros [18]byte

// take returns the next n bytes (n ≤ len(zeros)), or zeros when fewer are
// left.
func (d *decoder) take(n int) []byte {
	if len(d.b) < n {
		d.bad, d.b = true, nil
		return zeros[:n]
	}
	x := d.b[:n:n]
	d.b = d.b[n:]
	return x
}

// bool reads a bool's byte: 0 or 1.
func (d *decoder) bool(v byte) bool {
	if v > 1 {
		d.bad = true
	}
	return v == 1
}

// count reads a length that may not exceed limit (the array it indexes).
func (d *decoder) count(limit int) uint8 {
	v := d.take(1)[0]
	if int(v) > limit {
		d.bad = true
		return 0
	}
	return v
}

func regs(x []byte) Regs { return Regs{x[0], x[1], int8(x[2])} }

func bit(v bool) byte {
	if v {
		return 1
	}
	return 0
}
