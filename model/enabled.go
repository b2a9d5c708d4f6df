package model

// Enabled appends to buf the actions enabled in s, in a fixed order, and
// returns it.
func (m *Machine) Enabled(s *State, buf []Action) []Action {
	c := &m.Config
	if !m.overdue(s) {
		buf = append(buf, Action{Kind: Tick})
	}
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
					if m.Design.MayWrite(wk.U) {
						buf = append(buf, Action{Kind: Write, Worker: w})
						if c.Delay > 0 { // a pause between the check and the send
							buf = append(buf, Action{Kind: Write, Worker: w, Hold: true})
						}
					}
					if int(s.Forged) < c.Forgeries {
						buf = m.forgeries(buf, w, wk.Token)
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
	if int(s.SinkRestarts) < c.SinkRestarts {
		buf = append(buf, Action{Kind: SinkCrash})
	}
	for i := 0; i < int(s.NMsgs); i++ {
		msg := s.Msgs[i]
		if i > 0 && msg == s.Msgs[i-1] {
			continue // the same message twice: one action covers both
		}
		if m.deliverable(s, &msg) {
			buf = append(buf, Action{Kind: Deliver, Msg: msg})
		}
		if msg.Kind == Commit || held(s, &msg) {
			continue // inside the sink, or not sent yet: the network cannot touch it
		}
		if int(s.Drops) < c.Drops && !awaited(s, &msg) {
			buf = append(buf, Action{Kind: Drop, Msg: msg})
		}
		if int(s.Dups) < c.Dups && canSend {
			buf = append(buf, Action{Kind: Duplicate, Msg: msg})
		}
	}
	return buf
}

// awaited reports whether msg is the sequenced advance that a coordinator
// waits on to grant an acquire, or the sink's answer to it. The coordinator
// sends that advance again until it is answered, and the sink answers a
// retry with the fence it gave, so a loss of either is only a delay, which
// the network makes anyway: the network does not lose them. (Without the
// resending, one lost advance would hold the resource for good once its
// worker gave up on the acquire: every later acquire is answered "held"
// while the grant is in progress.) An advance no one waits on any more
// (its coordinator restarted, or took the answer from another copy) can be
// lost like any message.
func awaited(s *State, msg *Msg) bool {
	if msg.Kind != AdvanceReq && msg.Kind != AdvanceRep || msg.Req == 0 {
		return false
	}
	wt := &s.Coord[msg.Replica].Wait[msg.Res]
	return wt.Worker != 0 && wt.Seq == msg.Req
}

// forgeries appends worker w's forged writes: a token bigger than any
// the run can grant (forgedToken), and one below the token it holds (a
// number granted before). A forgery equal to a token in use is not tried:
// it is the token itself, and no fence can tell it from the holder's
// (tokens that must not be guessed need authentication, which is outside
// the protocol).
func (m *Machine) forgeries(buf []Action, w, held uint8) []Action {
	buf = append(buf, Action{Kind: Forge, Worker: w, Token: m.forgedToken()})
	if held > 1 {
		buf = append(buf, Action{Kind: Forge, Worker: w, Token: held - 1})
	}
	return buf
}

// held reports whether msg is the write request a paused worker holds:
// decided, not sent yet (Worker.Holding).
func held(s *State, msg *Msg) bool {
	return msg.Kind == WriteReq && msg.Live && s.Workers[msg.Worker].Holding
}

// deliverable reports whether delivering msg is possible now: a paused
// worker takes no replies and sends no write it holds, and an acquire that
// would need a grant beyond the config's bound waits.
func (m *Machine) deliverable(s *State, msg *Msg) bool {
	switch msg.Kind {
	case WriteReq:
		return !held(s, msg)
	case AcquireRep, RenewRep, ReleaseRep, WriteRep, ReadRep:
		return !s.Workers[msg.Worker].Paused
	case AcquireReq:
		// Answers and Valid are asked at every age, as a step asks them
		// (ageFree): a read of the age that only decides whether the
		// acquire is taken is a read all the same.
		d := &m.Design
		co := &s.Coord[msg.Replica]
		rec := co.Dedup[msg.Res][msg.Worker]
		a := d.Answers(rec, *msg)
		decided(m, decAnswers, msg, a, func(q Msg, _ Perm) uint8 { return d.Answers(rec, q) })
		if a == RepHeld {
			return true
		}
		if a == RepOK && rec.Req != 0 {
			// An answer from the record that no grant of the incarnation
			// carries is a grant in all but name (stepper.reanswered).
			// It needs a slot that no grant a coordinator waits on the
			// sink to issue will take.
			g := &s.Ghost[msg.Res]
			return !msg.Live || g.recordGrant(msg.Worker, msg.Inc, rec) != 0 || int(g.Grants)+granting(s, msg.Res) < MaxGrants
		}
		if co.Wait[msg.Res].Worker != 0 {
			return true // a retry of the acquire being granted
		}
		l := co.Lease[msg.Res]
		valid := d.Valid(l, *msg)
		decided(m, decValid, msg, valid, func(q Msg, p Perm) bool { return d.Valid(p.lease(l), q) })
		if valid || d.Hold(co.U, co.RU[msg.Res]) {
			return true // answered "held"
		}
		return m.grantRoom(s, msg.Res) && (d.Tokens != GrantThenFence || s.NMsgs < MaxMsgs)
	case ReleaseReq:
		return !m.Design.ReleaseAdvances || s.NMsgs < MaxMsgs
	}
	return true
}

// grantRoom reports whether resource r has room for one more grant within
// the config's bound, counting the grants its coordinators are waiting on
// the sink to issue, and not those the ghost named (Ghost.Named), and in
// the ghost's slots, which both take.
func (m *Machine) grantRoom(s *State, r uint8) bool {
	g, n := &s.Ghost[r], granting(s, r)
	return int(g.Grants-g.Named)+n < m.Config.Grants && int(g.Grants)+n < MaxGrants
}

// granting is the number of resource r's grants that coordinators are
// waiting on the sink to issue.
func granting(s *State, r uint8) int {
	n := 0
	for c := range s.Coord {
		if s.Coord[c].Wait[r].Worker != 0 {
			n++
		}
	}
	return n
}

// forgedToken is bigger than any token a coordinator can grant
// (MaxToken).
func (m *Machine) forgedToken() uint8 { return uint8(m.maxToken + 1) }

// ageCap is the age beyond which a request's age changes no decision, nor
// (Config.Delay) whether time may pass.
func (m *Machine) ageCap() uint8 {
	return uint8(max(m.Config.TTL+2*m.Config.Skew+2, m.Config.Delay))
}

// overdue reports whether a message has been in flight Config.Delay ticks
// and its receiver can take it, or a worker has been paused Config.Pause
// ticks: time cannot pass until the message is delivered (or lost) and the
// worker resumes (or crashes).
func (m *Machine) overdue(s *State) bool {
	for w := 0; w < m.Config.Workers && m.Config.Pause > 0; w++ {
		if wk := &s.Workers[w]; wk.Paused && int(wk.PausedFor) >= m.Config.Pause {
			return true
		}
	}
	for i := 0; i < int(s.NMsgs) && m.Config.Delay > 0; i++ {
		if msg := &s.Msgs[i]; int(msg.Age) >= m.Config.Delay && m.deliverable(s, msg) {
			return true
		}
	}
	return false
}
