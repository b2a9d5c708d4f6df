package etcdlease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/lease/etcdcluster"
	"github.com/fencecheck/fencecheck/lease/etcdlease"
	"github.com/fencecheck/fencecheck/spec"
)

// startOne starts a one-member etcd cluster and a client of it, both
// closed when the test ends.
func startOne(t *testing.T) (*etcdcluster.Cluster, *clientv3.Client) {
	t.Helper()
	c, err := etcdcluster.Start(context.Background(), t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return c, cli
}

// TestKeepAliveAndExpiry: the holder's own keepalive loop keeps the lock
// past its ttl, each keepalive a recorded renew; once it stops, etcd revokes
// the lease, a renew fails expired, and another holder gets a larger token.
func TestKeepAliveAndExpiry(t *testing.T) {
	ctx := context.Background()
	_, cli := startOne(t)
	// No sink here, so no advances: the history says partial (nothing is
	// assumed about the fence), as the format asks of a lock service's
	// history without its sink's advances.
	rec := history.NewRecorder(history.Header{TimeUnit: "ns", Partial: true}, history.MonotonicClock(time.Nanosecond), nil)
	locker := func(name string) *etcdlease.Locker {
		return &etcdlease.Locker{Client: cli, Recording: lease.Recording{Log: lease.RecorderLog(rec),
			Holder: lease.Holder{Process: name, Owner: name, Incarnation: "1"}}}
	}
	a, b := locker("a"), locker("b")
	la, err := a.TryAcquire(ctx, "job", "a-1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	kctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer stop()
	if err := la.KeepAlive(kctx, 300*time.Millisecond, "a/keepalive"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryAcquire(ctx, "job", "b-1", time.Second); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("b's acquire after 1.5 s of a's keepalives: %v, want held", err)
	}
	time.Sleep(2500 * time.Millisecond) // past the ttl and etcd's expiry sweep
	if err := la.Renew(ctx); !errors.Is(err, lease.ErrExpired) {
		t.Fatalf("renew after the lease expired: %v, want expired", err)
	}
	lb, err := b.TryAcquire(ctx, "job", "b-2", time.Second)
	if err != nil || lb.Token() <= la.Token() {
		t.Fatalf("b after a's expiry: %v, token %v (a's %d)", err, lb, la.Token())
	}
	if err := la.Release(ctx); !errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("a's release after b took over: %v, want not_holder", err)
	}
	renews := 0
	for _, e := range rec.History().Events {
		if e.Process == "a/keepalive" && e.F == history.Renew && e.Type == history.OK {
			renews++
		}
	}
	if renews < 3 {
		t.Fatalf("%d keepalives recorded, want at least 3", renews)
	}
	if r := spec.Check(rec.History(), spec.Options{}); !r.OK {
		t.Fatalf("violations: %v", r.Violations)
	}
}

// TestKeepAliveGoesOnWithoutAnswers: with etcd gone, each renew of the
// keepalive loop gets no answer; it is recorded info after at most the
// interval and the loop goes on renewing, as its doc says, until ctx ends
// (the first renew waited for ctx's end, and no other was made).
func TestKeepAliveGoesOnWithoutAnswers(t *testing.T) {
	ctx := context.Background()
	c, cli := startOne(t)
	rec := history.NewRecorder(history.Header{TimeUnit: "ns", Partial: true}, history.MonotonicClock(time.Nanosecond), nil)
	l := &etcdlease.Locker{Client: cli, Recording: lease.Recording{Log: lease.RecorderLog(rec),
		Holder: lease.Holder{Process: "a", Owner: "a", Incarnation: "1"}}}
	la, err := l.TryAcquire(ctx, "job", "a-1", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close() // every member gone: no renew is answered
	kctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer stop()
	start := time.Now()
	if err := la.KeepAlive(kctx, 200*time.Millisecond, "a/keepalive"); err != nil {
		t.Fatalf("KeepAlive = %v, want nil at ctx's end (the lease may still be alive)", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("KeepAlive returned after %v, ctx ended at 1.5 s", d)
	}
	invoked, info := 0, 0
	for _, e := range rec.History().Events {
		if e.Process != "a/keepalive" || e.F != history.Renew {
			continue
		}
		switch e.Type {
		case history.Invoke:
			invoked++
		case history.Info:
			info++
		default:
			t.Errorf("a renew without etcd completed %s %v", e.Type, e.Value)
		}
	}
	if invoked < 3 || info != invoked {
		t.Fatalf("%d renews invoked, %d recorded info; want at least 3, each info", invoked, info)
	}
}
