package realdb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	leases "github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/lease/etcdlease"
	"github.com/fencecheck/fencecheck/lease/redislock"
)

// Lease services, as Config.Lease names them.
const (
	Builtin = "builtin"
	Etcd    = "etcd"
	Redis   = "redis"
)

// LeaseKinds lists the lease services.
var LeaseKinds = []string{Builtin, Etcd, Redis}

// held is a lock held on an external lease service.
type held interface {
	Token() int64
	TTL() time.Duration
	Renew(ctx context.Context) error
	Release(ctx context.Context) error
}

// extLessor is a worker's lessor on etcd or Redis: the adapters record the
// acquire, renew and release themselves (and the holder's raise of the
// fence), so the worker does not.
type extLessor struct {
	// timeout bounds each call to the service (a service that is gone
	// answers nothing: the call is recorded info).
	timeout time.Duration
	try     func(ctx context.Context, resource, requestID string, ttl time.Duration) (held, error)
	mu      sync.Mutex
	held    map[string]held // by resource
}

func (l *extLessor) recordsItself() {}

func (l *extLessor) Acquire(ctx context.Context, r AcquireRequest) (Grant, error) {
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	h, err := l.try(cctx, r.Resource, r.RequestID, r.TTL)
	if h != nil {
		l.mu.Lock()
		l.held[r.Resource] = h
		l.mu.Unlock()
	}
	switch {
	case errors.Is(err, leases.ErrStale):
		// The grant was superseded before its use: the worker goes on, and
		// its write is fenced (or, with a sink that checks nothing, lands).
		return Grant{Token: h.Token(), TTL: h.TTL()}, nil
	case err != nil && h == nil && !isProtocol(err) && ctx.Err() == nil:
		return Grant{}, unavailable{err}
	case err != nil:
		return Grant{}, err
	}
	return Grant{Token: h.Token(), TTL: h.TTL()}, nil
}

// unavailable is a lease service's answer of unknown outcome (a member gone,
// a timeout): recorded as info by the adapter; the worker gives the attempt
// up and goes on, as a real holder would.
type unavailable struct{ err error }

func (u unavailable) Error() string { return "lease service unavailable: " + u.err.Error() }
func (u unavailable) Unwrap() error { return u.err }

func isProtocol(err error) bool {
	return errors.Is(err, ErrHeld) || errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHolder)
}

func soft(ctx context.Context, err error) error {
	if err != nil && !isProtocol(err) && ctx.Err() == nil {
		return unavailable{err}
	}
	return err
}

func (l *extLessor) lease(r LeaseRequest) (held, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.held[r.Resource]
	if !ok || h.Token() != r.Token {
		return nil, fmt.Errorf("realdb: no lease held on %s with token %d", r.Resource, r.Token)
	}
	return h, nil
}

func (l *extLessor) Renew(ctx context.Context, r LeaseRequest) error {
	h, err := l.lease(r)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	return soft(ctx, h.Renew(cctx))
}

func (l *extLessor) Release(ctx context.Context, r LeaseRequest) error {
	h, err := l.lease(r)
	if err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.held, r.Resource)
	l.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	return soft(ctx, h.Release(cctx))
}

// leaseClients are the connections of a process (or of the driver's
// goroutine workers) to an external lease service.
type leaseClients struct {
	etcd  *clientv3.Client
	redis *redis.Client
}

func openLeaseClients(kind string, endpoints []string) (*leaseClients, error) {
	c := &leaseClients{}
	switch kind {
	case Etcd:
		cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second,
			Logger: zap.NewNop()})
		if err != nil {
			return nil, fmt.Errorf("realdb: etcd client: %w", err)
		}
		c.etcd = cli
	case Redis:
		quietRedis.Do(func() { redis.SetLogger(quiet{}) })
		if len(endpoints) == 0 {
			return nil, errors.New("realdb: redis needs an address")
		}
		c.redis = redis.NewClient(&redis.Options{Addr: endpoints[0], DialTimeout: 2 * time.Second,
			ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, MaxRetries: -1})
	}
	return c, nil
}

func (c *leaseClients) Close() error {
	var errs []error
	if c.etcd != nil {
		errs = append(errs, c.etcd.Close())
	}
	if c.redis != nil {
		errs = append(errs, c.redis.Close())
	}
	return errors.Join(errs...)
}

// quiet silences go-redis's own log (a server gone shows in the history and
// in the run's error instead).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var quietRedis sync.Once

// newExtLessor makes worker s's lessor on the run's lease service: its
// adapter records in log, raises the fence on sink, and (Redis) draws its
// made-up token from tokens.
func newExtLessor(s workerSpec, c *leaseClients, sink Sink, log leases.Log, tokens func() int64) *extLessor {
	rec := leases.Recording{Log: log, Holder: leases.Holder{Process: s.ID, Owner: s.ID, Incarnation: s.Incarnation}}
	l := &extLessor{held: map[string]held{}, timeout: min(max(5*s.TTL, time.Second), 10*time.Second)}
	switch s.Lease {
	case Etcd:
		lk := &etcdlease.Locker{Client: c.etcd, Prefix: s.Prefix, Recording: rec, Raise: sink.Raise}
		l.try = func(ctx context.Context, resource, requestID string, ttl time.Duration) (held, error) {
			ls, err := lk.TryAcquire(ctx, resource, requestID, ttl)
			if ls == nil {
				return nil, err
			}
			return ls, err
		}
	case Redis:
		lk := &redislock.Locker{Client: c.redis, Prefix: s.Prefix, Recording: rec, Raise: sink.Raise, Tokens: tokens}
		l.try = func(ctx context.Context, resource, requestID string, ttl time.Duration) (held, error) {
			ls, err := lk.TryAcquire(ctx, resource, requestID, ttl)
			if ls == nil {
				return nil, err
			}
			return ls, err
		}
	}
	return l
}

// counter is the run's made-up token source for Redis (see package
// redislock): the driver's memory, shared by the run's holders.
type counter struct{ n atomic.Int64 }

func (c *counter) next() int64 { return c.n.Add(1) }
