package model

// Enabled appends to buf the actions enabled in s, in a fixed order, and
// returns it.
func (m *Machine) Enabled(s *State, buf []Action) []Action {
	c := &m.Config
	buf = append(buf, Action{Kind: Tick})
	canSend := int(s.NMsgs) < c.InFlight
	for w := uint8(0); w < uint8(c.Workers); w++ {
		wk := &s.Workers[w]
		if wk.Paused {
			buf = append(buf, Action{Kind: Resume, Worker: w})
		} else {
			buf = append(buf, Action{Kind: Pause, Worker: w})
			if wk.Pending == OpNone && int(wk.Ops) < c.Ops && canSend {
				for r := uint8(0); r < uint8(c.Resources); r++ {
					if wk.Token == 0 {
						for rep := uint8(0); rep < uint8(c.Replicas); rep++ {
							buf = append(buf, Action{Kind: Acquire, Worker: w, Res: r, Replica: rep})
						}
					}
					if wk.Token == 0 || r == wk.Res { // a holder reads its own task's result
						buf = append(buf, Action{Kind: Read, Worker: w, Res: r})
					}
				}
				if wk.Token != 0 {
					for rep := uint8(0); rep < uint8(c.Replicas); rep++ {
						buf = append(buf, Action{Kind: Renew, Worker: w, Replica: rep},
							Action{Kind: Release, Worker: w, Replica: rep})
					}
					if !m.Protocol.HolderClock || wk.Left > 0 {
						buf = append(buf, Action{Kind: Write, Worker: w})
					}
					if int(s.Forged) < c.Forgeries {
						buf = append(buf, Action{Kind: Forge, Worker: w})
					}
				}
			}
			if wk.Pending == OpAcquire && canSend {
				for rep := uint8(0); rep < uint8(c.Replicas); rep++ {
					buf = append(buf, Action{Kind: Retry, Worker: w, Replica: rep})
				}
			}
			if wk.Pending != OpNone {
				buf = append(buf, Action{Kind: Timeout, Worker: w})
			}
		}
		if int(s.Crashes) < c.Crashes {
			buf = append(buf, Action{Kind: Crash, Worker: w})
		}
		if c.Skew > 0 {
			for k := -c.Skew; k <= c.Skew; k++ {
				if int8(k) != wk.Skew {
					buf = append(buf, Action{Kind: SetClock, Worker: w, Skew: int8(k)})
				}
			}
		}
	}
	if int(s.Restarts) < c.Restarts {
		for rep := uint8(0); rep < uint8(c.Replicas); rep++ {
			buf = append(buf, Action{Kind: Restart, Replica: rep})
		}
	}
	for i := 0; i < int(s.NMsgs); i++ {
		msg := s.Msgs[i]
		if i > 0 && msg == s.Msgs[i-1] {
			continue // the same message twice: one action covers both
		}
		if m.deliverable(s, &msg) {
			buf = append(buf, Action{Kind: Deliver, Msg: msg})
		}
		if msg.Kind == Commit {
			continue // inside the sink: the network cannot touch it
		}
		if int(s.Drops) < c.Drops {
			buf = append(buf, Action{Kind: Drop, Msg: msg})
		}
		if int(s.Dups) < c.Dups && canSend && msg.Kind != AdvanceReq {
			buf = append(buf, Action{Kind: Duplicate, Msg: msg})
		}
	}
	return buf
}

// deliverable reports whether delivering msg is possible now: a paused
// worker takes no replies, and an acquire that would need a grant beyond the
// config's bound waits.
func (m *Machine) deliverable(s *State, msg *Msg) bool {
	switch msg.Kind {
	case AcquireRep, RenewRep, ReleaseRep, WriteRep, ReadRep:
		return !s.Workers[msg.Worker].Paused
	case AcquireReq:
		if m.dedupHit(s, msg) {
			return true
		}
		co := &s.Coord[msg.Replica]
		if m.leaseValid(&co.Lease[msg.Res], msg) {
			return true // answered "held"
		}
		if int(s.Ghost[msg.Res].Grants) >= m.Config.Grants {
			return false
		}
		return !m.Protocol.GrantBeforeFence || s.NMsgs < MaxMsgs
	}
	return true
}

func (m *Machine) dedupHit(s *State, msg *Msg) bool {
	if m.Protocol.NoAcquireDedup {
		return false
	}
	d := s.Coord[msg.Replica].Dedup[msg.Res][msg.Worker]
	return d.Req != 0 && d.Inc == msg.Inc && d.Req == msg.Req
}

// leaseValid reports whether the coordinator judges lease l still valid when
// request msg arrives.
func (m *Machine) leaseValid(l *Lease, msg *Msg) bool {
	if l.Holder == 0 {
		return false
	}
	if m.Protocol.WorkerClock {
		return reported(msg) < int(l.Left)
	}
	return l.Left > 0
}

// reported is the time the request's sender reported, relative to now.
func reported(msg *Msg) int { return int(msg.Skew) - int(msg.Age) }
