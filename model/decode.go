package model

import "errors"

// errEncoding reports bytes that Encode did not produce under this config.
var errEncoding = errors.New("model: not an encoding of a state under this config")

// Decode reads a state that Encode wrote under the same config into *s and
// returns the bytes after it. Fields Encode does not write (entries beyond
// the config's workers, resources and replicas) are left zero, so
// Encode(Decode(b)) == b and the decoded state behaves as the encoded one.
func (m *Machine) Decode(b []byte, s *State) ([]byte, error) {
	*s = State{}
	c := &m.Config
	nw, nr, nc := c.Workers, c.Resources, c.Replicas
	fixed := nw*10 + nc*nr*(6+4*nw) + nr*2 + 1
	if len(b) < fixed {
		return nil, errEncoding
	}
	for w := 0; w < nw; w++ {
		wk := &s.Workers[w]
		wk.Inc, wk.Ops, wk.Pending, wk.Res, wk.Token, wk.Grant, wk.Req = b[0], b[1], b[2], b[3], b[4], b[5], b[6]
		wk.Paused, wk.Skew, wk.Left = b[7] != 0, int8(b[8]), int8(b[9])
		b = b[10:]
	}
	for rep := 0; rep < nc; rep++ {
		co := &s.Coord[rep]
		for r := 0; r < nr; r++ {
			co.Lease[r] = Lease{Holder: b[0], Inc: b[1], Token: b[2], Grant: b[3], Left: int8(b[4])}
			co.Counter[r] = b[5]
			b = b[6:]
			for w := 0; w < nw; w++ {
				co.Dedup[r][w] = Dedup{Inc: b[0], Req: b[1], Token: b[2], Grant: b[3]}
				b = b[4:]
			}
		}
	}
	for r := 0; r < nr; r++ {
		s.Sink.Fence[r], s.Sink.Left[r] = b[0], int8(b[1])
		b = b[2:]
	}
	s.Sink.NResults, b = b[0], b[1:]
	if s.Sink.NResults > MaxResults || len(b) < int(s.Sink.NResults)*5+1 {
		return nil, errEncoding
	}
	for i := 0; i < int(s.Sink.NResults); i++ {
		s.Sink.Results[i] = Result{Res: b[0], Key: b[1], Writer: b[2], Token: b[3], Grant: b[4]}
		b = b[5:]
	}
	s.NMsgs, b = b[0], b[1:]
	if s.NMsgs > MaxMsgs || len(b) < int(s.NMsgs)*14 {
		return nil, errEncoding
	}
	for i := 0; i < int(s.NMsgs); i++ {
		s.Msgs[i] = Msg{Kind: b[0], Worker: b[1], Res: b[2], Replica: b[3], Inc: b[4], Token: b[5], Req: b[6],
			Grant: b[7], Code: b[8], PW: b[9], PT: b[10], Age: b[11], Skew: int8(b[12]), Live: b[13] != 0}
		b = b[14:]
	}
	for r := 0; r < nr; r++ {
		if len(b) < 2 {
			return nil, errEncoding
		}
		g := &s.Ghost[r]
		g.Grants, g.Observed, b = b[0], b[1], b[2:]
		if g.Grants > MaxGrants || len(b) < int(g.Grants)*6+nw*4 {
			return nil, errEncoding
		}
		for i := 1; i <= int(g.Grants); i++ {
			g.Grant[i] = GrantTruth{Worker: b[0], Inc: b[1], Token: b[2], Early: int8(b[3]), Late: int8(b[4]),
				Released: b[5] != 0}
			b = b[6:]
		}
		for w := 0; w < nw; w++ {
			g.Answer[w] = Dedup{Inc: b[0], Req: b[1], Token: b[2], Grant: b[3]}
			b = b[4:]
		}
	}
	if len(b) < 5 {
		return nil, errEncoding
	}
	s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged = b[0], b[1], b[2], b[3], b[4]
	return b[5:], nil
}
