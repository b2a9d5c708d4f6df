package model

import "testing"

// TestOnSendAndOnCrash: OnSend gives a worker's registers after each
// request it sends (a retried acquire too), with the kind and the ttl, and
// Stamp reads them before it; OnCrash gives them after a crash. A design
// that sets OnSend keeps its reads (a read's send changes its registers),
// as one that sets OnReply does.
func TestOnSendAndOnCrash(t *testing.T) {
	c := Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 3, Grants: 2, InFlight: 3, Crashes: 1}
	d := Design{
		OnSend: func(u Regs, kind uint8, ttl int) Regs {
			u.A++
			u.B, u.T = kind, Clamp(ttl)
			return u
		},
		Stamp:   func(u Regs, _ uint8) uint8 { return u.A },
		OnCrash: func(u Regs) Regs { return Regs{A: 100 + u.A} },
	}
	m, err := New(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if m.Applies(ReduceReads) != 0 {
		t.Error("reads are left out of a design whose OnSend sees them")
	}
	if ref, _ := New(c, Design{}); ref.Applies(ReduceReads) == 0 {
		t.Error("reads are kept for the reference")
	}
	r := NewRun(m)
	do := func(k Kind) {
		t.Helper()
		for _, a := range m.Enabled(&r.State, nil) {
			if a.Kind == k && a.Worker == 0 {
				r.Do(a)
				return
			}
		}
		t.Fatalf("no %v of w1 enabled", k)
	}
	do(Acquire)
	do(Retry)
	w := r.State.Workers[0]
	if w.U != (Regs{A: 2, B: AcquireReq, T: 3}) {
		t.Errorf("after an acquire and its retry: registers %+v, want two sends of an acquire, ttl 3", w.U)
	}
	var stamps []uint8
	for _, msg := range r.State.Msgs[:r.State.NMsgs] {
		if msg.Kind == AcquireReq {
			stamps = append(stamps, msg.U)
		}
	}
	if len(stamps) != 2 || stamps[0] == stamps[1] || min(stamps[0], stamps[1]) != 0 || max(stamps[0], stamps[1]) != 1 {
		t.Errorf("stamps %v, want 0 and 1: Stamp reads the registers before OnSend", stamps)
	}
	do(Crash)
	if w := r.State.Workers[0]; w.U != (Regs{A: 102}) {
		t.Errorf("after a crash: registers %+v, want OnCrash's", w.U)
	}
}
