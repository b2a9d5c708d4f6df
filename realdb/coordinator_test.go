package realdb

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
)

func TestCoordinator(t *testing.T) {
	ctx := context.Background()
	sink := createSink(t, sinkConfig(t, SQLite, Atomic))
	var now int64
	clock := func() int64 { return now }
	rec := history.NewRecorder(history.Header{TimeUnit: "ns"}, clock, nil)
	c := NewCoordinator(sink, clock, rec)
	const ttl = 10 * time.Nanosecond
	acq := func(r, owner, req string) (Grant, error) {
		return c.Acquire(ctx, AcquireRequest{Resource: r, Owner: owner, Incarnation: "1", RequestID: req, TTL: ttl})
	}
	lease := func(r, owner, inc string, token int64) LeaseRequest {
		return LeaseRequest{Resource: r, Owner: owner, Incarnation: inc, Token: token, TTL: ttl}
	}
	must := func(err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("err = %v, want %v", err, want)
		}
	}

	g, err := acq("a", "A", "A1")
	if err != nil || g.Token != 1 || g.TTL != ttl {
		t.Fatalf("first acquire = %+v, %v", g, err)
	}
	// The fence was advanced before the grant.
	if out, _, err := sink.Write(ctx, "a", 1, "r", "p", "r"); err != nil || out != history.Written {
		t.Fatalf("write with the granted token: %q, %v", out, err)
	}
	_, err = acq("a", "B", "B1")
	must(err, ErrHeld)
	if g2, err := acq("b", "B", "B2"); err != nil || g2.Token != 1 {
		t.Fatalf("acquire of another resource = %+v, %v", g2, err)
	}
	// A retry of A1 after a lost reply gets the same grant, even later.
	now = 5
	if g2, err := acq("a", "A", "A1"); err != nil || g2 != g {
		t.Fatalf("retry = %+v, %v; want %+v", g2, err, g)
	}
	must(c.Renew(ctx, lease("a", "A", "2", 1)), ErrNotHolder) // another incarnation
	must(c.Renew(ctx, lease("a", "A", "1", 2)), ErrNotHolder) // another token
	must(c.Renew(ctx, lease("a", "B", "1", 1)), ErrNotHolder) // another owner
	must(c.Renew(ctx, lease("a", "A", "1", 1)), nil)          // deadline now 15
	now = 14
	_, err = acq("a", "B", "B3")
	must(err, ErrHeld)
	now = 15 // exactly at the deadline: expired
	must(c.Renew(ctx, lease("a", "A", "1", 1)), ErrExpired)
	g3, err := acq("a", "B", "B4")
	if err != nil || g3.Token != 2 {
		t.Fatalf("takeover = %+v, %v", g3, err)
	}
	must(c.Renew(ctx, lease("a", "A", "1", 1)), ErrNotHolder)
	must(c.Release(ctx, lease("a", "A", "1", 1)), ErrNotHolder)
	if out, _, _ := sink.Write(ctx, "a", 1, "r2", "p", "r2"); out != history.Fenced {
		t.Fatalf("stale write after takeover: %q", out)
	}
	must(c.Release(ctx, lease("a", "B", "1", 2)), nil)
	if g4, err := acq("a", "A", "A5"); err != nil || g4.Token != 3 {
		t.Fatalf("acquire after release = %+v, %v", g4, err)
	}
	if _, err := acq("b", "A", "A1"); err == nil {
		t.Fatal("a request id reused for another resource was granted")
	}
	// Every advance was recorded by the coordinator.
	h := rec.History()
	var advances []int64
	for _, e := range h.Events {
		if e.Process == history.Coordinator && e.F == history.Advance && e.Type == history.OK {
			advances = append(advances, e.Value.Token)
		}
	}
	if len(advances) != 4 || rec.Err() != nil {
		t.Fatalf("advances recorded = %v (err %v), want 4", advances, rec.Err())
	}
}

// TestCoordinatorRestart: a restart loses the lease table (a renew is
// not_holder), keeps the grant records (a retry gets its grant) and grants
// nothing for the grace period; an advance made for the next grant is taken
// as its token, and a restart forgets it.
func TestCoordinatorRestart(t *testing.T) {
	ctx := context.Background()
	sink := createSink(t, sinkConfig(t, SQLite, Atomic))
	var now int64
	c := NewCoordinator(sink, func() int64 { return now }, nil)
	const ttl = 10 * time.Nanosecond
	acq := func(owner, req string) (Grant, error) {
		return c.Acquire(ctx, AcquireRequest{Resource: "a", Owner: owner, Incarnation: "1", RequestID: req, TTL: ttl})
	}
	g, err := acq("A", "A1")
	if err != nil || g.Token != 1 {
		t.Fatalf("acquire = %+v, %v", g, err)
	}
	now = 2
	c.Restart(ttl)
	if err := c.Renew(ctx, LeaseRequest{Resource: "a", Owner: "A", Incarnation: "1", Token: 1, TTL: ttl}); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("renew after the restart: %v, want not_holder", err)
	}
	if g2, err := acq("A", "A1"); err != nil || g2 != g {
		t.Fatalf("retry after the restart = %+v, %v; want %+v", g2, err, g)
	}
	now = 11 // within the grace (2 + 10)
	if _, err := acq("B", "B1"); !errors.Is(err, ErrHeld) {
		t.Fatalf("acquire in the grace period: %v, want held", err)
	}
	now = 12
	if err := c.advanceForGrant(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if g3, err := acq("B", "B2"); err != nil || g3.Token != 2 {
		t.Fatalf("acquire after the grace, the fence advanced for it = %+v, %v; want token 2", g3, err)
	}
	if err := c.advanceForGrant(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	c.Restart(0)
	if g4, err := c.Acquire(ctx, AcquireRequest{Resource: "b", Owner: "B", Incarnation: "1", RequestID: "B3", TTL: ttl}); err != nil || g4.Token != 2 {
		t.Fatalf("acquire after a restart that forgot the advance for it = %+v, %v; want token 2 (advanced again)", g4, err)
	}
}
