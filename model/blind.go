package model

// A decision sees what the process taking it could know. The framework
// keeps, next to the protocol's own data, fields no real process has: the
// ghost's grant identities (Msg.Grant, Lease.Grant, Dedup.Grant,
// Result.Grant), which the invariants judge by, and whether a message's
// worker still waits for it (Msg.Live), which the searches' reductions
// read. A design that read them could fence on the truth itself and be
// proved safe though no implementation can be built on it, so the
// machine never shows them: a decision the design sets gets its inputs
// with these fields zero (blind), and what the framework keeps of a
// restart's answer takes them from the state, never from the answer
// (restartKept, sinkKept).

// blind is m as a decision sees it: without the ghost's grant and the
// live flag.
func (m Msg) blind() Msg {
	m.Grant, m.Live = 0, false
	return m
}

// blind is l as a decision sees it: without the ghost's grant.
func (l Lease) blind() Lease {
	l.Grant = 0
	return l
}

// blind is d as a decision sees it: without the ghost's grant.
func (d Dedup) blind() Dedup {
	d.Grant = 0
	return d
}

// blind is v as a decision sees it: its lease without the ghost's grant.
func (v SinkView) blind() SinkView {
	v.Lease = v.Lease.blind()
	return v
}

// blind is co as Restart sees it: its leases and records without the
// ghost's grants.
func (co Coordinator) blind() Coordinator {
	for r := range co.Lease {
		co.Lease[r] = co.Lease[r].blind()
		for w := range co.Dedup[r] {
			co.Dedup[r][w] = co.Dedup[r][w].blind()
		}
	}
	return co
}

// blind is s as SinkRestart sees it: its results without the ghost's
// grants.
func (s Sink) blind() Sink {
	for i := range s.Results {
		s.Results[i].Grant = 0
	}
	return s
}

// blind returns d with every decision it sets that reads the framework's
// structures wrapped to see them blind. The others are left as they are:
// those it leaves nil are the reference's, which read no ghost, and the
// rest read only registers and numbers.
func (d Design) blind() Design {
	if f := d.Valid; f != nil {
		d.Valid = func(l Lease, req Msg) bool { return f(l.blind(), req.blind()) }
	}
	if f := d.Answers; f != nil {
		d.Answers = func(rec Dedup, req Msg) uint8 { return f(rec.blind(), req.blind()) }
	}
	if f := d.Deadline; f != nil {
		d.Deadline = func(old Lease, req Msg, ttl int) int8 { return f(old.blind(), req.blind(), ttl) }
	}
	if f := d.Renew; f != nil {
		d.Renew = func(l Lease, req Msg) uint8 { return f(l.blind(), req.blind()) }
	}
	if f := d.Release; f != nil {
		d.Release = func(l Lease, req Msg) uint8 { return f(l.blind(), req.blind()) }
	}
	if f := d.OnLease; f != nil {
		d.OnLease = func(e LeaseEvent, ru Regs, l Lease, ttl int) Regs { return f(e, ru, l.blind(), ttl) }
	}
	if f := d.Restart; f != nil {
		d.Restart = func(co Coordinator, ttl int) Coordinator { return f(co.blind(), ttl) }
	}
	if f := d.Check; f != nil {
		d.Check = func(v SinkView, w Msg) uint8 { return f(v.blind(), w.blind()) }
	}
	if f := d.Commit; f != nil {
		d.Commit = func(v SinkView, w Msg) uint8 { return f(v.blind(), w.blind()) }
	}
	if f := d.Prepared; f != nil {
		d.Prepared = func(u Regs, w Msg) Regs { return f(u, w.blind()) }
	}
	if f := d.Accepted; f != nil {
		d.Accepted = func(v SinkView, w Msg) (uint8, Regs) { return f(v.blind(), w.blind()) }
	}
	if f := d.Key; f != nil {
		d.Key = func(w Msg, attempt uint8) uint8 { return f(w.blind(), attempt) }
	}
	if f := d.SinkRestart; f != nil {
		d.SinkRestart = func(s Sink) Sink { return f(s.blind()) }
	}
	if f := d.OnReply; f != nil {
		d.OnReply = func(u Regs, op uint8, rep Msg, ttl int) Regs { return f(u, op, rep.blind(), ttl) }
	}
	return d
}
