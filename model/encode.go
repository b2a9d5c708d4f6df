package model

import "errors"

// key orders messages: a total order over all fields.
func (m *Msg) key() [16]byte {
	var live byte
	if m.Live {
		live = 1
	}
	return [16]byte{m.Kind, m.Worker, m.Res, m.Replica, m.Inc, m.Token, m.Req, m.Grant, m.Code,
		m.PW, m.PT, m.Age, byte(m.Skew), live, m.Key, m.U}
}

func lessMsg(a, b *Msg) bool {
	if a.Kind == MsgNone || b.Kind == MsgNone {
		return b.Kind == MsgNone && a.Kind != MsgNone
	}
	ka, kb := a.key(), b.key()
	return string(ka[:]) < string(kb[:])
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

func lessResult(a, b *Result) bool {
	ka := [5]byte{a.Res, a.Key, a.Writer, a.Token, a.Grant}
	kb := [5]byte{b.Res, b.Key, b.Writer, b.Token, b.Grant}
	return string(ka[:]) < string(kb[:])
}

func (s *State) sortResults() {
	r := &s.Sink
	for i := 1; i < int(r.NResults); i++ {
		for j := i; j > 0 && lessResult(&r.Results[j], &r.Results[j-1]); j-- {
			r.Results[j], r.Results[j-1] = r.Results[j-1], r.Results[j]
		}
	}
}

// Encode appends the canonical encoding of s: the bytes of every field in
// use under the machine's config. Two states are equal exactly when their
// encodings are.
func (m *Machine) Encode(s *State, b []byte) []byte {
	c := &m.Config
	nw, nr, nc := c.Workers, c.Resources, c.Replicas
	for w := 0; w < nw; w++ {
		wk := &s.Workers[w]
		b = append(b, wk.Inc, wk.Ops, wk.Pending, wk.Res, wk.Token, wk.Grant, wk.Req, bit(wk.Paused), wk.PausedFor, byte(wk.Skew))
		b = wk.U.append(b)
	}
	for rep := 0; rep < nc; rep++ {
		co := &s.Coord[rep]
		b = co.U.append(b)
		for r := 0; r < nr; r++ {
			l := &co.Lease[r]
			b = append(b, l.Holder, l.Inc, l.Token, l.Grant, byte(l.Left), co.Counter[r], co.AdvSeq[r])
			b = co.RU[r].append(b)
			wt := &co.Wait[r]
			b = append(b, wt.Worker, wt.Inc, wt.Req, wt.Age, byte(wt.Skew), wt.U, wt.Seq, wt.Token)
			for w := 0; w < nw; w++ {
				d := &co.Dedup[r][w]
				b = append(b, d.Inc, d.Req, d.Token, d.Grant)
			}
		}
	}
	for r := 0; r < nr; r++ {
		b = append(b, s.Sink.Fence[r])
		for rep := 0; rep < nc; rep++ {
			b = append(b, s.Sink.AdvSeq[rep][r], s.Sink.AdvFence[rep][r])
		}
		b = s.Sink.U[r].append(b)
	}
	b = append(b, s.Sink.NResults)
	for i := 0; i < int(s.Sink.NResults); i++ {
		x := &s.Sink.Results[i]
		b = append(b, x.Res, x.Key, x.Writer, x.Token, x.Grant)
	}
	b = append(b, s.NMsgs)
	for i := 0; i < int(s.NMsgs); i++ {
		k := s.Msgs[i].key()
		b = append(b, k[:]...)
	}
	for r := 0; r < nr; r++ {
		g := &s.Ghost[r]
		b = append(b, g.Grants, g.Observed, g.Advanced)
		for i := 1; i <= int(g.Grants); i++ {
			t := &g.Grant[i]
			b = append(b, t.Worker, t.Inc, t.Token, byte(t.Early), byte(t.Late), bit(t.Released))
		}
		for w := 0; w < nw; w++ {
			b = append(b, g.Answered[w][0], g.Answered[w][1])
		}
	}
	return append(b, s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged, s.SinkRestarts)
}

func (u *Regs) append(b []byte) []byte { return append(b, u.A, u.B, byte(u.T)) }

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
		wk := &s.Workers[w]
		wk.Inc, wk.Ops, wk.Pending, wk.Res, wk.Token, wk.Grant, wk.Req = d.u8(), d.u8(), d.u8(), d.u8(), d.u8(), d.u8(), d.u8()
		wk.Paused, wk.PausedFor, wk.Skew = d.bool(), d.u8(), d.i8()
		d.regs(&wk.U)
	}
	for rep := 0; rep < nc; rep++ {
		co := &s.Coord[rep]
		d.regs(&co.U)
		for r := 0; r < nr; r++ {
			l := &co.Lease[r]
			l.Holder, l.Inc, l.Token, l.Grant, l.Left = d.u8(), d.u8(), d.u8(), d.u8(), d.i8()
			co.Counter[r], co.AdvSeq[r] = d.u8(), d.u8()
			d.regs(&co.RU[r])
			wt := &co.Wait[r]
			wt.Worker, wt.Inc, wt.Req, wt.Age, wt.Skew, wt.U, wt.Seq, wt.Token = d.u8(), d.u8(), d.u8(), d.u8(), d.i8(), d.u8(), d.u8(), d.u8()
			for w := 0; w < nw; w++ {
				x := &co.Dedup[r][w]
				x.Inc, x.Req, x.Token, x.Grant = d.u8(), d.u8(), d.u8(), d.u8()
			}
		}
	}
	for r := 0; r < nr; r++ {
		s.Sink.Fence[r] = d.u8()
		for rep := 0; rep < nc; rep++ {
			s.Sink.AdvSeq[rep][r], s.Sink.AdvFence[rep][r] = d.u8(), d.u8()
		}
		d.regs(&s.Sink.U[r])
	}
	s.Sink.NResults = d.count(MaxResults)
	for i := 0; i < int(s.Sink.NResults); i++ {
		x := &s.Sink.Results[i]
		x.Res, x.Key, x.Writer, x.Token, x.Grant = d.u8(), d.u8(), d.u8(), d.u8(), d.u8()
	}
	s.NMsgs = d.count(MaxMsgs)
	for i := 0; i < int(s.NMsgs); i++ {
		x := &s.Msgs[i]
		x.Kind, x.Worker, x.Res, x.Replica, x.Inc, x.Token, x.Req, x.Grant = d.u8(), d.u8(), d.u8(), d.u8(), d.u8(), d.u8(), d.u8(), d.u8()
		x.Code, x.PW, x.PT, x.Age, x.Skew, x.Live, x.Key, x.U = d.u8(), d.u8(), d.u8(), d.u8(), d.i8(), d.bool(), d.u8(), d.u8()
	}
	for r := 0; r < nr; r++ {
		g := &s.Ghost[r]
		g.Grants, g.Observed, g.Advanced = d.count(MaxGrants), d.u8(), d.u8()
		for i := 1; i <= int(g.Grants); i++ {
			t := &g.Grant[i]
			t.Worker, t.Inc, t.Token, t.Early, t.Late, t.Released = d.u8(), d.u8(), d.u8(), d.i8(), d.i8(), d.bool()
		}
		for w := 0; w < nw; w++ {
			g.Answered[w][0], g.Answered[w][1] = d.u8(), d.u8()
		}
	}
	s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged, s.SinkRestarts = d.u8(), d.u8(), d.u8(), d.u8(), d.u8(), d.u8()
	if d.bad || len(d.b) != 0 {
		return errEncoded
	}
	return nil
}

// decoder reads Encode's bytes in order; reading past the end, or a value
// out of range, marks it bad (and reads zero).
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) u8() uint8 {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) i8() int8 { return int8(d.u8()) }

func (d *decoder) bool() bool {
	v := d.u8()
	if v > 1 {
		d.bad = true
	}
	return v == 1
}

// count reads a length that may not exceed limit (the array it indexes).
func (d *decoder) count(limit int) uint8 {
	v := d.u8()
	if int(v) > limit {
		d.bad = true
		return 0
	}
	return v
}

func (d *decoder) regs(u *Regs) { u.A, u.B, u.T = d.u8(), d.u8(), d.i8() }

func bit(v bool) byte {
	if v {
		return 1
	}
	return 0
}
