package redislock_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/lease/redislock"
	"github.com/fencecheck/fencecheck/lease/redisserver"
)

// A Redis lock (SET NX PX, compare-and-delete) recording its history. It
// needs Debian's redis-server, which the example starts on a spare loopback
// port (./test.sh installs it). The tokens in the history are made up by
// the Locker: Redis grants none.
func Example() {
	ctx := context.Background()
	srv, err := redisserver.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	// MaxRetries -1: a client that re-sends a command after a lost
	// connection could make the history say fail for an operation that
	// happened, and the Locker refuses it (redislock.ErrResends).
	cli := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer cli.Close()

	rec := history.NewRecorder(history.Header{TimeUnit: "ns"}, history.MonotonicClock(time.Nanosecond), nil)
	locker := func(name string) *redislock.Locker {
		return &redislock.Locker{Client: cli, Prefix: "example:", Recording: lease.Recording{
			Log: lease.RecorderLog(rec), Holder: lease.Holder{Process: name, Owner: name, Incarnation: "1"}}}
	}
	a, b := locker("a"), locker("b")
	la, err := a.TryAcquire(ctx, "job-1", "a-1", 200*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	_, err = b.TryAcquire(ctx, "job-1", "b-1", 200*time.Millisecond)
	fmt.Println("b while a holds:", err)
	time.Sleep(300 * time.Millisecond) // a pauses past its ttl
	lb, err := b.TryAcquire(ctx, "job-1", "b-2", 200*time.Millisecond)
	fmt.Println("b after a's ttl:", err)
	fmt.Println("a renews:", la.Renew(ctx))
	fmt.Println("a releases:", la.Release(ctx))
	fmt.Println("b releases:", lb.Release(ctx))
	// Both Lockers made up token 1: nothing orders them.
	fmt.Println("tokens:", la.Token(), lb.Token())
	// Output:
	// b while a holds: held
	// b after a's ttl: <nil>
	// a renews: not_holder
	// a releases: not_holder
	// b releases: <nil>
	// tokens: 1 1
}
