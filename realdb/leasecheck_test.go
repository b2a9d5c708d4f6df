package realdb

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
	leases "github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/lease/etcdcluster"
)

// TestCheckLeaseService: an endpoint where nothing answers, an address of
// the wrong form, one of another service than the one named, extra Redis
// addresses, and an etcd cluster whose minimum lease is above the ttl are
// refused before any run, naming the endpoint (an unreachable etcd took
// about 21 s to end as "incomplete: 0 of N runs done", the endpoint never
// named; a Redis address was cut to its first, the others ignored); the
// services as they are pass.
func TestCheckLeaseService(t *testing.T) {
	ctx := context.Background()
	etcd := needEtcd(t).Endpoints()
	redisAddr := needRedis(t)
	defaults, err := etcdcluster.StartAt(context.Background(), t.TempDir(), 1, etcdcluster.Default) // a lease minimum of 2s, as on a cluster of one's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(defaults.Close)
	defEtcd := defaults.Endpoints()[0]
	etcdHostPort := strings.TrimPrefix(etcd[0], "http://")
	var ep *EndpointError
	for _, c := range []struct {
		kind      string
		endpoints []string
		ttl       time.Duration
		endpoint  string // named by the EndpointError; "" when it passes
	}{
		{Etcd, []string{"http://127.0.0.1:1"}, time.Second, "http://127.0.0.1:1"},
		{Etcd, append(append([]string{}, etcd...), "http://127.0.0.1:1"), time.Second, "http://127.0.0.1:1"},
		{Etcd, []string{"ftp://127.0.0.1:2379"}, time.Second, "ftp://127.0.0.1:2379"},
		{Etcd, []string{"http://" + redisAddr}, time.Second, "http://" + redisAddr},
		{Etcd, etcd, time.Second, ""},
		{Etcd, []string{etcdHostPort}, 3 * time.Second, ""},
		{Etcd, []string{defEtcd}, 2 * time.Second, ""},
		{Redis, []string{"http://127.0.0.1:6390"}, 0, "http://127.0.0.1:6390"},
		{Redis, []string{"127.0.0.1"}, 0, "127.0.0.1"},
		{Redis, []string{"127.0.0.1:1"}, 0, "127.0.0.1:1"},
		{Redis, []string{redisAddr, "127.0.0.1:1"}, 0, redisAddr + ",127.0.0.1:1"},
		{Redis, []string{etcdHostPort}, 0, etcdHostPort},
		{Redis, []string{redisAddr}, 0, ""},
	} {
		start := time.Now()
		err := CheckLeaseService(ctx, c.kind, c.endpoints, c.ttl)
		switch {
		case c.endpoint == "" && err != nil:
			t.Errorf("%s %v: %v", c.kind, c.endpoints, err)
		case c.endpoint == "":
		case !errors.As(err, &ep) || ep.Endpoint != c.endpoint || !strings.Contains(err.Error(), c.endpoint):
			t.Errorf("%s %v: %v; want an EndpointError naming %s", c.kind, c.endpoints, err, c.endpoint)
		}
		if d := time.Since(start); d > 2*checkWait {
			t.Errorf("%s %v: took %v", c.kind, c.endpoints, d)
		}
	}
	// etcd at its default timings grants 2s for 1s: the pauses of a run of
	// 1s leases would never outlast them.
	err = CheckLeaseService(ctx, Etcd, []string{defEtcd}, time.Second)
	var te *TTLError
	if !errors.As(err, &te) || te.Asked != time.Second || te.Granted != 2*time.Second || !strings.Contains(err.Error(), "2s") {
		t.Errorf("etcd at default timings, ttl 1s: %v; want a TTLError granting 2s", err)
	}
	// Run checks first: nothing runs, and the error names the endpoint.
	start := time.Now()
	res, err := Run(ctx, serviceConfig(Etcd, []string{"http://127.0.0.1:1"}, Atomic, 3, 1))
	if !errors.As(err, &ep) || len(res.Runs) != 0 || time.Since(start) > 2*checkWait {
		t.Errorf("Run on an unreachable etcd: %v, %d runs, in %v", err, len(res.Runs), time.Since(start))
	}
	res, err = Run(ctx, serviceConfig(Etcd, []string{defEtcd}, Atomic, 3, 1))
	if !errors.As(err, &te) || len(res.Runs) != 0 {
		t.Errorf("Run with 1s leases on an etcd that grants 2s: %v, %d runs", err, len(res.Runs))
	}
}

// TestRedisTTLWholeMilliseconds: Run refuses a Redis ttl that is not a
// whole number of milliseconds (go-redis sent 1.999ms as PX 1 while the
// history said 1.999ms: exclusive-lease false alarms in 13 of 30 runs).
func TestRedisTTLWholeMilliseconds(t *testing.T) {
	for _, ttl := range []time.Duration{1999 * time.Microsecond, 1500 * time.Microsecond, 100*time.Millisecond + time.Nanosecond} {
		cfg := serviceConfig(Redis, []string{"127.0.0.1:1"}, Atomic, 1, 1)
		cfg.TTL = ttl
		if _, err := cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), ttl.String()) {
			t.Errorf("ttl %v: %v; want an error naming it", ttl, err)
		}
	}
}

// raiseOnly is a sink that only raises (the lessor's holder raise).
type raiseOnly struct{ Sink }

func (raiseOnly) Raise(context.Context, string, int64) (int64, bool, error) { return 1, true, nil }

// TestRedisCallsEndAtTheirDeadline: a Redis call is bounded as the
// documentation says, 5 ttls (1 to 10 s), not by the client's read timeout
// (go-redis ignored the context's deadline: every call waited 2 s): against
// a server that never answers, an acquire at ttl 100ms gives up after 1 s,
// recorded info.
func TestRedisCallsEndAtTheirDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	clients, err := openLeaseClients(Redis, []string{ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer clients.Close()
	rec := history.NewRecorder(history.Header{TimeUnit: "ns"}, history.MonotonicClock(time.Nanosecond), nil)
	s := workerSpec{ID: "w1", Incarnation: "1", TTL: 100 * time.Millisecond, Lease: Redis, Prefix: "silent:"}
	l := newExtLessor(s, clients, raiseOnly{}, leases.RecorderLog(rec), (&counter{}).next)
	start := time.Now()
	_, err = l.Acquire(context.Background(), AcquireRequest{Resource: "job", Owner: "w1", Incarnation: "1", RequestID: "a", TTL: s.TTL})
	d := time.Since(start)
	if err == nil || d < 900*time.Millisecond || d > 1800*time.Millisecond {
		t.Fatalf("an acquire of a server that never answers: %v after %v; want an error after 1s", err, d)
	}
	h := rec.History()
	if n := len(h.Events); n != 2 || h.Events[1].Type != history.Info {
		t.Fatalf("recorded %+v, want the acquire and its info", h.Events)
	}
	// Two addresses: not silently cut to the first.
	if _, err := openLeaseClients(Redis, []string{ln.Addr().String(), "127.0.0.1:1"}); err == nil {
		t.Errorf("two Redis addresses opened a client of the first")
	}
}
