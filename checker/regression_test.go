package checker

import (
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// judgedScript runs a script, judging every step, and returns the run and
// what it violated.
func judgedScript(t *testing.T, m *model.Machine, steps []string) (*model.Run, spec.Set) {
	t.Helper()
	run, err := Script(m, steps)
	if err != nil {
		t.Fatal(err)
	}
	replayed, judged, err := Replay(m, run.Actions)
	if err != nil {
		t.Fatal(err)
	}
	return replayed, judged
}

// TestRequestIDKeysBelongToTheirWriter: with per-attempt result keys, two
// workers' writes of the same attempt number are two results, not a
// conflict on an id nobody wrote (the keys used to be the attempt number
// alone).
func TestRequestIDKeysBelongToTheirWriter(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 2, InFlight: 2}
	m, err := designs.RequestIDKey.Machine(c)
	if err != nil {
		t.Fatal(err)
	}
	run, _ := judgedScript(t, m, []string{
		"acquire w=0", "deliver acquire-req w=0", "deliver advance-req", "deliver advance-rep", "deliver acquire-rep w=0", "write w=0",
		"deliver write-req w=0", "deliver write-rep w=0", "tick", "tick",
		"acquire w=1", "deliver acquire-req w=1", "deliver advance-req", "deliver advance-rep", "deliver acquire-rep w=1", "write w=1",
		"deliver write-req w=1", "deliver write-rep w=1"})
	var ids []string
	for _, e := range run.Events {
		if e.F == history.Write && e.Type == history.Invoke {
			ids = append(ids, e.Value.ResultID)
		}
		if e.F == history.Write && e.Type != history.Invoke && e.Type != history.OK {
			t.Fatalf("a write ended %s %s: the attempts' keys collided", e.Type, e.Value.Error)
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] || !strings.Contains(ids[1], "w2") {
		t.Fatalf("result ids %v: want one per writer's attempt", ids)
	}
}

// TestLateCopyOfAnOldAcquire: a copy of a worker's first acquire request
// that the network delivers after the worker's second request was granted
// is refused by the reference, and a design that grants it again is
// caught as acquire-idempotent (the ghost used to remember only the last
// request per worker).
func TestLateCopyOfAnOldAcquire(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 5, Grants: 3, InFlight: 3, Dups: 1}
	steps := []string{
		"acquire w=0", "duplicate acquire-req w=0", "deliver acquire-req w=0", "deliver advance-req", "deliver advance-rep",
		"deliver acquire-rep w=0",
		"release w=0", "deliver release-req w=0", "deliver release-rep w=0",
		"acquire w=0", "deliver acquire-req w=0 req=2", "deliver advance-req", "deliver advance-rep",
		"deliver acquire-rep w=0 req=2",
		"release w=0", "deliver release-req w=0", "deliver release-rep w=0",
		"deliver acquire-req w=0 req=1"}
	ref, err := designs.Reference.Machine(c)
	if err != nil {
		t.Fatal(err)
	}
	run, judged := judgedScript(t, ref, steps)
	if judged != 0 || run.State.Ghost[0].Grants != 2 {
		t.Fatalf("reference: %d grants, violated %v: the late copy was granted", run.State.Ghost[0].Grants, judged.IDs())
	}
	nodedup, err := designs.NoAcquireDedup.Machine(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, judged := judgedScript(t, nodedup, append(steps, "deliver advance-req", "deliver advance-rep")); !judged.Has(spec.AcquireIdempotent) {
		t.Fatalf("no-acquire-dedup granted request 1 twice, judged %v", judged.IDs())
	}
}

// TestEveryAcceptedConfigRuns: a config that New accepts runs; one it cannot
// run (per-attempt result keys beyond the sink's table) is refused with a
// message, not a panic mid-search (request-id-key --ops 8 used to panic).
func TestEveryAcceptedConfigRuns(t *testing.T) {
	c := model.DefaultConfig()
	c.Ops = 8
	if _, err := designs.RequestIDKey.Machine(c); err == nil || !strings.Contains(err.Error(), "lower ops") {
		t.Fatalf("New(request-id-key, ops 8) = %v; want a clear refusal", err)
	}
	c.Ops = 5 // 2 resources + 2 workers × 5 attempts = 12 results: just fits
	m, err := designs.RequestIDKey.Machine(c)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(300) {
		RandomRun(m, seed, 200, 0) // a full table would panic here
	}
}

// TestLateRetryOfACrashedIncarnation: a worker's acquire and its retry are
// in flight, it crashes and acquires again; the coordinator grants the old
// incarnation's request, then the new one's once that lease expired, and
// then the retry of the old request arrives. The record of the worker's
// last grant (the new incarnation's) used to let that retry through, to a
// second grant for a request id already answered (acquire-idempotent: the
// P1 search under the reductions found it at depth 16); now a copy from an
// earlier incarnation is refused as held.
func TestLateRetryOfACrashedIncarnation(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Crashes: 1}
	m := newMachine(t, c, model.Design{})
	steps := []string{"acquire w=0", "retry w=0", "crash w=0", "acquire w=0", "deliver acquire-req w=0 inc=1 req=1",
		"deliver advance-req req=1", "deliver advance-rep req=1", "tick", "tick", "deliver acquire-req w=0 inc=2 req=2",
		"deliver advance-req req=2", "deliver advance-rep req=2", "tick", "tick", "deliver acquire-req w=0 inc=1 req=1"}
	run, judged := judgedScript(t, m, steps)
	if judged.Has(spec.AcquireIdempotent) || run.State.Ghost[0].Grants != 2 {
		t.Fatalf("the late retry got a grant: violated %v, %d grants", judged.IDs(), run.State.Ghost[0].Grants)
	}
	last := run.State.Msgs[:run.State.NMsgs]
	for _, msg := range last {
		if msg.Kind == model.AcquireRep && msg.Inc == 1 && msg.Code == model.RepHeld {
			return
		}
	}
	t.Fatalf("no held answer to the late retry: %+v", last)
}
