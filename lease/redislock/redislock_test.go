package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/internal/servicetest"
	"github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/lease/redislock"
	"github.com/fencecheck/fencecheck/spec"
)

// dropProxy forwards TCP connections to upstream; once armed, it drops the
// next reply from Redis and the connection with it: the command ran, its
// answer is lost.
type dropProxy struct {
	ln    net.Listener
	armed atomic.Bool
}

func newDropProxy(t *testing.T, upstream string) *dropProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() {
				defer c.Close()
				defer s.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						if p.armed.CompareAndSwap(true, false) {
							return // Redis has answered: the command ran
						}
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *dropProxy) addr() string { return p.ln.Addr().String() }

// fence is a sink's fence in memory (the holders' Raise), and the one
// counter the holders draw their made-up tokens from.
type fence struct{ v, n atomic.Int64 }

func (f *fence) next() int64 { return f.n.Add(1) }

func (f *fence) raise(_ context.Context, _ string, t int64) (int64, bool, error) {
	for {
		v := f.v.Load()
		if v >= t {
			return v, false, nil
		}
		if f.v.CompareAndSwap(v, t) {
			return t, true, nil
		}
	}
}

func newRecorder(clock func() int64) *history.Recorder {
	return history.NewRecorder(history.Header{TimeUnit: "ns", Expect: []string{spec.AbsoluteValidity}}, clock, nil)
}

func holder(cli redis.UniversalClient, rec *history.Recorder, f *fence, prefix, name string) *redislock.Locker {
	return &redislock.Locker{Client: cli, Prefix: prefix, Raise: f.raise, Tokens: f.next, Recording: lease.Recording{
		Log: lease.RecorderLog(rec), Holder: lease.Holder{Process: name, Owner: name, Incarnation: "1"}}}
}

// violations returns the history's violations, as text.
func violations(h *history.History) []string {
	var out []string
	for _, v := range spec.Check(h, spec.Options{}).Violations {
		out = append(out, v.Invariant+": "+v.Message)
	}
	return out
}

// TestRefusesClientsThatResend: a client that re-sends a command after a
// lost connection (go-redis's default options, MaxRetries 3) is refused
// with nothing recorded — with it, a release whose reply was lost after
// Redis ran it was re-sent, found the key gone and was recorded fail
// not_holder, and the next holder's grant read as an exclusive-lease
// violation. With MaxRetries -1 the lost reply is recorded info, and a lost
// SET NX reply leaves an info acquire: the history has no violation.
func TestRefusesClientsThatResend(t *testing.T) {
	ctx := context.Background()
	srv := servicetest.Redis(t)
	p := newDropProxy(t, srv.Addr)

	cli := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1})
	defer cli.Close()
	warm := &redislock.Locker{Client: cli, Prefix: "warm:"} // loads the scripts, unrecorded
	if lw, err := warm.TryAcquire(ctx, "x", "w", time.Second); err != nil {
		t.Fatal(err)
	} else if err := lw.Renew(ctx); err != nil {
		t.Fatal(err)
	} else if err := lw.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Default options, as the Example had them: refused, nothing sent.
	def := redis.NewClient(&redis.Options{Addr: p.addr()})
	defer def.Close()
	rec := newRecorder(history.MonotonicClock(time.Nanosecond))
	f := &fence{}
	ld, err := holder(def, rec, f, "default:", "a").TryAcquire(ctx, "job-1", "a-1", 10*time.Second)
	if err == nil {
		// What it did: the release ran, its reply was lost, the re-sent
		// copy found the key gone.
		p.armed.Store(true)
		rerr := ld.Release(ctx)
		_, berr := holder(def, rec, f, "default:", "b").TryAcquire(ctx, "job-1", "b-1", 10*time.Second)
		t.Fatalf("a client with MaxRetries 3 was not refused: release %v, b's acquire %v, violations %v",
			rerr, berr, violations(rec.History()))
	}
	if !errors.Is(err, redislock.ErrResends) {
		t.Fatalf("a client with MaxRetries 3: TryAcquire returned %v, want ErrResends", err)
	}
	if n := len(rec.History().Events); n != 0 {
		t.Fatalf("a refused acquire recorded %d events", n)
	}
	if n := def.Exists(ctx, "default:job-1").Val(); n != 0 {
		t.Fatalf("a refused acquire set the key")
	}
	for _, c := range []struct {
		cli    redis.UniversalClient
		resend bool
	}{
		{redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: 1}), true},
		{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}}), true},
		{redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}, MaxRedirects: -1}), false},
		{redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr}}), true},
		{redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr}, MaxRetries: -1}), false},
		{redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1}), false},
	} {
		if err := redislock.CheckClient(c.cli); errors.Is(err, redislock.ErrResends) != c.resend {
			t.Errorf("%T: CheckClient %v, want refused %v", c.cli, err, c.resend)
		}
		c.cli.Close()
	}

	// No re-sends: a release whose reply is lost is info.
	a, b := holder(cli, rec, f, "resend:", "a"), holder(cli, rec, f, "resend:", "b")
	la, err := a.TryAcquire(ctx, "job-1", "a-1", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.armed.Store(true)
	if err := la.Release(ctx); err == nil || errors.Is(err, lease.ErrNotHolder) {
		t.Fatalf("a release whose reply was lost returned %v, want an error of unknown outcome", err)
	}
	if _, err := b.TryAcquire(ctx, "job-1", "b-1", 10*time.Second); err != nil {
		t.Fatalf("b acquires after a's release ran: %v", err)
	}
	// A lost SET NX reply: the acquire is info, and Redis holds the key.
	p.armed.Store(true)
	if _, err := a.TryAcquire(ctx, "job-2", "a-2", 10*time.Second); err == nil || errors.Is(err, lease.ErrHeld) {
		t.Fatalf("an acquire whose reply was lost returned %v, want an error of unknown outcome", err)
	}
	if _, err := b.TryAcquire(ctx, "job-2", "b-2", 10*time.Second); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("b acquires what a's lost SET NX took: %v, want held", err)
	}
	h := rec.History()
	infos := 0
	for _, e := range h.Events {
		if e.Type == history.Info {
			infos++
		}
		if e.Type == history.Fail && e.Process == "a" {
			t.Errorf("a's lost answer recorded fail: %+v", e)
		}
	}
	if infos != 2 {
		t.Errorf("%d info completions, want 2 (the lost release and the lost acquire)", infos)
	}
	if v := violations(h); len(v) > 0 {
		t.Errorf("violations of a correct lock: %v", v)
	}
}

// TestRefusesTTLNotWholeMilliseconds: Redis counts a lock's ttl in whole
// milliseconds; go-redis sent 1.999ms as PX 1 while the history said
// 1.999ms, and a renew below 1ms sent PEXPIRE 0, which deletes the key, and
// recorded ok. Such ttls are refused, with nothing recorded or set.
func TestRefusesTTLNotWholeMilliseconds(t *testing.T) {
	ctx := context.Background()
	srv := servicetest.Redis(t)
	cli := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer cli.Close()
	rec := newRecorder(history.MonotonicClock(time.Nanosecond))
	f := &fence{}
	for i, ttl := range []time.Duration{1999 * time.Microsecond, 500 * time.Microsecond, time.Millisecond + time.Nanosecond, 0, -time.Second} {
		res := fmt.Sprintf("bad-%d", i)
		ls, err := holder(cli, rec, f, "ttl:", "a").TryAcquire(ctx, res, res, ttl)
		if !errors.Is(err, redislock.ErrTTL) || ls != nil {
			t.Errorf("ttl %v: TryAcquire returned %v, %v; want ErrTTL", ttl, ls, err)
			continue
		}
		if want := fmt.Sprint(ttl); !strings.Contains(err.Error(), want) {
			t.Errorf("ttl %v: the error %q does not name it", ttl, err)
		}
		if cli.Exists(ctx, "ttl:"+res).Val() != 0 {
			t.Errorf("ttl %v: the key was set", ttl)
		}
	}
	if n := len(rec.History().Events); n != 0 {
		t.Fatalf("refused acquires recorded %d events", n)
	}
	for i, ttl := range []time.Duration{time.Millisecond, 1500 * time.Millisecond, 2 * time.Second} {
		res := fmt.Sprintf("good-%d", i)
		ls, err := holder(cli, rec, f, "ttl:", "a").TryAcquire(ctx, res, res, ttl)
		if err != nil {
			t.Errorf("ttl %v: %v", ttl, err)
			continue
		}
		if pttl := cli.PTTL(ctx, "ttl:"+res).Val(); pttl > ttl || pttl < ttl-500*time.Millisecond {
			t.Errorf("ttl %v: Redis has PTTL %v", ttl, pttl)
		}
		if err := ls.Release(ctx); err != nil && !errors.Is(err, lease.ErrNotHolder) {
			t.Errorf("ttl %v: release: %v", ttl, err)
		}
	}
}

// TestRenewPastTheDeadline: Redis keeps a key set (or extended) with PX n
// until its millisecond clock passes the set's millisecond + n — up to 1ms
// longer than the n the history records — and accepted a renew invoked
// just after the recorded deadline (the grant's or the last renew's ok +
// ttl): renew-validity on a correct lock, in most attempts. The renew
// script refuses a key in its last millisecond: such a renew is fail
// expired, and the history has no violation.
func TestRenewPastTheDeadline(t *testing.T) {
	ctx := context.Background()
	srv := servicetest.Redis(t)
	cli := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer cli.Close()
	if err := cli.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const ttl = 20 * time.Millisecond
	renewedInTime := 0
	for i := range 24 {
		clock := history.MonotonicClock(time.Nanosecond)
		rec := newRecorder(clock)
		lk := holder(cli, rec, &fence{}, fmt.Sprintf("deadline%d:", i), "a")
		ls, err := lk.TryAcquire(ctx, "job-1", "a-1", ttl)
		if err != nil {
			t.Fatal(err)
		}
		last := func() int64 { h := rec.History(); return h.Events[len(h.Events)-1].Time }
		okAt := last() // the acquire's ok
		if i%2 == 1 {
			// Renew at once; the deadline is then the renew's ok + ttl.
			if err := ls.Renew(ctx); err == nil {
				renewedInTime++
				okAt = last()
			}
		}
		// 100µs past the latest deadline the history allows.
		for clock() < okAt+int64(ttl+100*time.Microsecond) {
		}
		err = ls.Renew(ctx)
		if err == nil {
			t.Errorf("attempt %d: a renew invoked past the recorded deadline was accepted", i)
		} else if !errors.Is(err, lease.ErrExpired) {
			t.Errorf("attempt %d: renew past the deadline: %v, want expired", i, err)
		}
		if v := violations(rec.History()); len(v) > 0 {
			t.Errorf("attempt %d: %v", i, v)
		}
	}
	if renewedInTime == 0 {
		t.Errorf("no renew made right after its grant was accepted")
	}
}
