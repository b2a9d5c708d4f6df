package model

import (
	"fmt"
	"reflect"
)

// A design that does not set ReportsTime must not let an age change a
// decision: a message's (Msg.Age, and Reported, which reads it) or an
// acquire's the coordinator waits to grant (Waiting.Age, which Restart
// sees). The timers and ages reductions (ReduceTimers, ReduceAges) rest on
// it, and a search that cut or merged ages a decision tells apart could
// prove an unsafe design safe. A declaration nobody checks is no ground
// for a proof, so the machine checks it twice. New probes each decision
// the design sets itself on a few inputs at every age a run can give them
// and refuses a design whose answer changes with the age (a heuristic: a
// decision may read the age only on inputs the probes do not try). And
// every step that takes such a decision on a message that ages calls it
// again at every other age a run can give that message (0 to ageCap), so
// does the test of whether an acquire can be delivered (Answers and Valid,
// Machine.deliverable: the timers reduction, which cuts ages, would
// otherwise hide a read that only decides whether the acquire is taken), and
// a restart calls Restart again at every combination of the waiting
// acquires' ages; if the answer changes, the step panics with a
// DesignFault naming ReportsTime. That check is complete: the inputs of a
// state a reduction cut or merged are those of a state the search expands
// but for ages (no decision reads the ghost deadlines, the reductions'
// other difference), so a search that meets no such fault took every
// decision as it would have taken it without the reductions.

// decisionSet is a set of a design's decisions, bit per decision: those
// whose answers the machine checks do not change with a message's age
// (ageReaders) or with a renaming of workers or resources (identityReaders,
// asymmetry.go).
type decisionSet uint16

// The decisions the machine checks.
const (
	decAnswers decisionSet = 1 << iota
	decValid
	decDeadline
	decRenew
	decRelease
	decCheck
	decCommit
	decPrepared
	decAccepted
	decOnReply
	decRestart
	decOnLease
	decKey
	decSinkRestart
)

var decisionNames = [...]string{"Answers", "Valid", "Deadline", "Renew", "Release", "Check", "Commit",
	"Prepared", "Accepted", "OnReply", "Restart", "OnLease", "Key", "SinkRestart"}

// ageReaders are the decisions that can read an age: those that read a
// message (Msg.Age), and Restart, which reads the coordinator's waiting
// acquires (Waiting.Age). Key is not among them: it is called on a write
// as it is sent, at age 0 in every run.
const ageReaders = decAnswers | decValid | decDeadline | decRenew | decRelease | decCheck | decCommit |
	decPrepared | decAccepted | decOnReply | decRestart

func (k decisionSet) name() string {
	for i, n := range decisionNames {
		if k == 1<<i {
			return n
		}
	}
	return fmt.Sprintf("decision %#x", uint16(k))
}

// ownDecisions returns the decisions of d (before withDefaults) that the
// machine checks and that are the design's own: set, and not the
// reference's function (which reads no age and tells no worker or
// resource apart).
func (d *Design) ownDecisions() decisionSet {
	var k decisionSet
	own := func(bit decisionSet, f, ref any) {
		if v := reflect.ValueOf(f); !v.IsNil() && v.Pointer() != reflect.ValueOf(ref).Pointer() {
			k |= bit
		}
	}
	own(decAnswers, d.Answers, RefAnswers)
	own(decValid, d.Valid, RefValid)
	own(decDeadline, d.Deadline, RefDeadline)
	own(decRenew, d.Renew, RefRenew)
	own(decRelease, d.Release, RefRelease)
	own(decCheck, d.Check, RefCheck)
	if d.Commit != nil { // no reference: nil is the one-step write
		k |= decCommit
	}
	own(decPrepared, d.Prepared, RefPrepared)
	own(decAccepted, d.Accepted, RefAccepted)
	own(decOnReply, d.OnReply, RefOnReply)
	own(decRestart, d.Restart, RefRestart)
	own(decOnLease, d.OnLease, RefOnLease)
	own(decKey, d.Key, RefKey)
	own(decSinkRestart, d.SinkRestart, RefSinkRestart)
	return k
}

// agesFault panics with the DesignFault of decision k answering got for
// a message of age a and other for the same message at age b.
func agesFault(k decisionSet, a, b uint8, got, other any) {
	panic(&DesignFault{Decision: k.name(), Detail: fmt.Sprintf("reads the age of a message (Msg.Age, or Reported): "+
		"on the same inputs it returned %s at age %d and %s at age %d; a design whose decisions read ages must set "+
		"ReportsTime (model.Design.ReportsTime), without which the searches' timers and ages reductions cut and "+
		"merge ages as if only the framework read them", answerText(k, got), a, answerText(k, other), b)})
}

// codeDecisions are the decisions that answer with a reply code.
const codeDecisions = decAnswers | decRenew | decRelease | decCheck | decCommit

// answerText is decision k's answer v for a person: a reply code by its
// name (RepFenced), anything else as Go prints it.
func answerText(k decisionSet, v any) string {
	if c, ok := v.(uint8); ok && k&codeDecisions != 0 {
		switch {
		case c == 0:
			return "0 (no answer)"
		case int(c) < len(repNames) && repNames[c] != "":
			return "Rep" + repNames[c]
		}
	}
	return fmt.Sprint(v)
}

// ages reports whether a message of kind can be older than 0 in a run:
// acquire and renew requests, and under a bounded delay every message
// (stepper.tick).
func (m *Machine) ages(kind uint8) bool {
	return kind == AcquireReq || kind == RenewReq || m.Config.Delay > 0
}

// ageFree checks that decision k, which answered got on msg, answers the
// same on msg at every other age a run can give it (f is the decision on
// the message it is given, every other input as in the step or the
// enabledness test), when m checks k (Machine.ageChecked) and msg can age;
// it panics with a DesignFault otherwise.
func ageFree[R comparable](m *Machine, k decisionSet, msg *Msg, got R, f func(Msg) R) {
	if m.ageChecked&k == 0 || !m.ages(msg.Kind) {
		return
	}
	q := *msg
	for a := range int(m.ageCap()) + 1 {
		if q.Age = uint8(a); q.Age == msg.Age {
			continue
		}
		if r := f(q); r != got {
			agesFault(k, msg.Age, q.Age, got, r)
		}
	}
}

// restartAgeFree checks, when the machine checks Restart, that the
// design's Restart, which returned got for coordinator replica co, returns
// what the framework keeps the same of (restartKept) with the acquires co
// waits to grant at every combination of ages a run can give
// them; it panics with a DesignFault otherwise. Restarts are few, so the
// combinations (at most (ageCap+1)^MaxResources) are affordable.
func (st *stepper) restartAgeFree(co, got *Coordinator) {
	m := st.m
	if m.ageChecked&decRestart == 0 {
		return
	}
	var waiting [MaxResources]int
	n := 0
	for r := range co.Wait {
		if co.Wait[r].Worker != 0 {
			waiting[n] = r
			n++
		}
	}
	if n == 0 {
		return
	}
	want, q, top := restartKept(co, *got), *co, m.ageCap()
	for i := range n {
		q.Wait[waiting[i]].Age = 0
	}
	for {
		if restartKept(&q, st.d.Restart(q, m.Config.TTL)) != want {
			restartFault(waiting, n, co, &q)
		}
		i := 0 // the next combination of ages, as an odometer
		for ; i < n; i++ {
			if a := &q.Wait[waiting[i]].Age; *a < top {
				*a++
				break
			}
			q.Wait[waiting[i]].Age = 0
		}
		if i == n {
			return
		}
	}
}

// restartFault panics with the DesignFault of a Restart that answered
// differently for coordinator q than for co, which differ in the ages of
// the n acquires waiting for the resources in waiting (its arguments are
// copies, so that restartAgeFree's stay on its stack).
func restartFault(waiting [MaxResources]int, n int, co, q *Coordinator) {
	var had, other [MaxResources]uint8
	for i := range n {
		had[i], other[i] = co.Wait[waiting[i]].Age, q.Wait[waiting[i]].Age
	}
	panic(&DesignFault{Decision: "Restart", Detail: fmt.Sprintf("reads the age of an acquire the coordinator "+
		"waits to grant (Waiting.Age): it returned another coordinator when the ages of the acquires waiting "+
		"for resources %v were %v instead of %v; a design whose decisions read ages must set ReportsTime "+
		"(model.Design.ReportsTime), without which the searches' timers and ages reductions cut and merge "+
		"ages as if only the framework read them", waiting[:n], other[:n], had[:n])})
}

// sinkAnswer is Accepted's answer, as one comparable value.
type sinkAnswer struct {
	Fence uint8
	U     Regs
}

// probeAges calls each decision of m's design in m.ageChecked on a few
// inputs, the message at every age from 0 to ageCap, and returns an error
// naming the first whose answer changed with the age, or whose answer at
// age 0 changed when asked again (no function of its inputs: pureFault). A
// probe that panics tells nothing and is skipped: the decision may never
// see that input.
func (m *Machine) probeAges() error {
	d, ttl := &m.Design, m.Config.TTL
	leases := []Lease{{}, {Holder: 1, Inc: 1, Token: 1, Grant: 1, Left: Clamp(ttl)},
		{Holder: 1, Inc: 1, Token: 1, Grant: 1, Left: 1}, {Holder: 1, Inc: 1, Token: 1, Grant: 1},
		{Holder: 1, Inc: 1, Token: 1, Grant: 1, Left: -1}, {Holder: 2, Inc: 1, Token: 2, Grant: 2, Left: Clamp(ttl)}}
	msg := func(kind uint8) Msg {
		return Msg{Kind: kind, Inc: 1, Token: 1, Req: 1, Grant: 1, PW: 1, PT: 1, Live: true}
	}
	var err error
	try := func(k decisionSet, kind uint8, f func(Msg) any) {
		if err != nil || m.ageChecked&k == 0 || !m.ages(kind) {
			return
		}
		defer func() { _ = recover() }()
		q := msg(kind)
		got := f(q)
		if again := f(q); again != got {
			err = fmt.Errorf("design: %s is not a function of its inputs: New probed it twice on the same inputs "+
				"and it returned %s and then %s; a decision must keep nothing between calls and read no clock or "+
				"random number, since the searches store a state once for every path that reaches it",
				k.name(), answerText(k, got), answerText(k, again))
			return
		}
		for a := 1; a <= int(m.ageCap()); a++ {
			q.Age = uint8(a)
			if r := f(q); r != got {
				err = fmt.Errorf("design: %s reads the age of a request (Msg.Age, or Reported; Waiting.Age "+
					"for Restart): New probed it on the same inputs at ages 0 and %d and it returned %s and %s; "+
					"a design whose decisions read ages "+
					"must set ReportsTime (model.Design.ReportsTime): without it, the searches' timers and ages "+
					"reductions cut and merge ages as if only the framework read them, and could prove it safe "+
					"when it is not", k.name(), a, answerText(k, got), answerText(k, r))
				return
			}
		}
	}
	for _, l := range leases {
		try(decValid, AcquireReq, func(q Msg) any { return d.Valid(l, q) })
		try(decDeadline, RenewReq, func(q Msg) any { return d.Deadline(l, q, ttl) })
		try(decRenew, RenewReq, func(q Msg) any { return d.Renew(l, q) })
		try(decRelease, ReleaseReq, func(q Msg) any { return d.Release(l, q) })
	}
	try(decDeadline, AcquireReq, func(q Msg) any { return d.Deadline(Lease{}, q, ttl) })
	for _, rec := range []Dedup{{}, {Inc: 1, Req: 1, Token: 1, Grant: 1}} {
		try(decAnswers, AcquireReq, func(q Msg) any { return d.Answers(rec, q) })
	}
	for fence := uint8(0); fence <= 2; fence++ {
		v := SinkView{Fence: fence}
		try(decCheck, WriteReq, func(q Msg) any { return d.Check(v, q) })
		try(decCommit, Commit, func(q Msg) any { return d.Commit(v, q) })
		try(decAccepted, WriteReq, func(q Msg) any { f, u := d.Accepted(v, q); return sinkAnswer{f, u} })
	}
	try(decPrepared, WriteReq, func(q Msg) any { return d.Prepared(Regs{}, q) })
	for _, l := range leases {
		try(decRestart, AcquireReq, func(q Msg) any { // q's age is the waiting acquire's
			co := Coordinator{Wait: [MaxResources]Waiting{{Worker: 2, Inc: 1, Req: 1, Age: q.Age, Seq: 1}}}
			co.Lease[0], co.Dedup[0][0], co.AdvSeq[0] = l, Dedup{Inc: 1, Req: 1, Token: 1, Grant: 1}, 1
			return restartKept(&co, d.Restart(co, ttl))
		})
	}
	for _, kind := range []uint8{AcquireRep, RenewRep, ReleaseRep, WriteRep, ReadRep} {
		for _, code := range []uint8{RepOK, RepExpired} {
			try(decOnReply, kind, func(q Msg) any { q.Code = code; return d.OnReply(Regs{}, replyOp[kind], q, ttl) })
		}
	}
	return err
}
