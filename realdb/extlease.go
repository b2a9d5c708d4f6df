package realdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
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

// maxCallTimeout is the longest a call to an external lease service may
// take (extLessor.timeout: 5 ttls, 1 to 10 s).
const maxCallTimeout = 10 * time.Second

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
		if len(endpoints) != 1 {
			return nil, fmt.Errorf("realdb: redis needs one address (the lock is on one server), got %d", len(endpoints))
		}
		c.redis = newRedisClient(endpoints[0], maxCallTimeout)
	}
	return c, nil
}

// newRedisClient is a client of the Redis at addr that never re-sends a
// command (MaxRetries -1: package redislock refuses one that does) and
// whose calls end at their context's deadline (ContextTimeoutEnabled: else
// go-redis bounds a call by its read and write timeouts alone), or after
// timeout at the latest.
func newRedisClient(addr string, timeout time.Duration) *redis.Client {
	quietRedis.Do(func() { redis.SetLogger(quiet{}) })
	return redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 2 * time.Second,
		ReadTimeout: timeout, WriteTimeout: timeout, ContextTimeoutEnabled: true, MaxRetries: -1})
}

// EndpointError says why an endpoint of an external lease service cannot be
// used: nothing answers there, what answers is not the service named, or
// the address is not one the service's client takes.
type EndpointError struct {
	// Kind is the lease service (Etcd, Redis); Endpoint the address, as
	// given (several, comma-separated, when their number is the problem).
	Kind, Endpoint string
	Err            error
}

// Error names the service, the endpoint and why it cannot be used.
func (e *EndpointError) Error() string {
	return fmt.Sprintf("%s endpoint %s: %v", e.Kind, e.Endpoint, e.Err)
}

// Unwrap returns the cause.
func (e *EndpointError) Unwrap() error { return e.Err }

// TTLError says that the lease service grants another ttl than the one
// asked for: etcd grants at least its minimum lease (1.5 election timeouts,
// rounded up to whole seconds: 2s at etcd's default timings), so a run
// whose pauses are sized from the ttl asked for would test nothing.
type TTLError struct {
	// Kind is the lease service (Etcd), Endpoint its endpoints,
	// comma-separated; Asked the ttl asked for and Granted the one granted.
	Kind, Endpoint string
	Asked, Granted time.Duration
}

// Error names the ttls asked for and granted, and the ttl to ask for.
func (e *TTLError) Error() string {
	return fmt.Sprintf("%s at %s grants a lease of %v when asked for %v (its minimum lease): the pauses, sized from the ttl asked for, would not outlast the leases; ask for %v or more",
		e.Kind, e.Endpoint, e.Granted, e.Asked, e.Granted)
}

// checkWait bounds each answer CheckLeaseService waits for.
const checkWait = 5 * time.Second

// CheckLeaseService checks, before any run, that the lease service at
// endpoints can be used with leases of ttl: every endpoint answers, as the
// kind of service named (etcd: a Status request to each member; Redis: one
// HOST:PORT, answering PING), and (etcd) a lease asked for ttl is granted
// for ttl. Its errors are *EndpointError and *TTLError; Run calls it.
func CheckLeaseService(ctx context.Context, kind string, endpoints []string, ttl time.Duration) error {
	switch kind {
	case Etcd:
		return checkEtcd(ctx, endpoints, ttl)
	case Redis:
		return checkRedis(ctx, endpoints)
	}
	return nil
}

// tcpAddr is the host:port an etcd client URL (or bare host:port) names,
// or "" for one that is not TCP (unix://).
func tcpAddr(endpoint string) (string, error) {
	host := endpoint
	if i := strings.Index(endpoint, "://"); i >= 0 {
		u, err := url.Parse(endpoint)
		if err != nil {
			return "", err
		}
		switch u.Scheme {
		case "http", "https":
		case "unix", "unixs":
			return "", nil
		default:
			return "", fmt.Errorf("scheme %q: want http, https or unix", u.Scheme)
		}
		if u.Path != "" && u.Path != "/" {
			return "", fmt.Errorf("a client URL has no path (%q)", u.Path)
		}
		host = u.Host
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		return "", err
	}
	return host, nil
}

func checkEtcd(ctx context.Context, endpoints []string, ttl time.Duration) error {
	all := strings.Join(endpoints, ",")
	if len(endpoints) == 0 {
		return &EndpointError{Kind: Etcd, Endpoint: all, Err: errors.New("no endpoint")}
	}
	for _, ep := range endpoints {
		addr, err := tcpAddr(ep)
		if err != nil {
			return &EndpointError{Kind: Etcd, Endpoint: ep, Err: fmt.Errorf("not an etcd client URL: %w", err)}
		}
		if addr != "" {
			// A refused connection says so at once; gRPC would retry it
			// until the deadline and say only that.
			var d net.Dialer
			dctx, cancel := context.WithTimeout(ctx, checkWait)
			conn, err := d.DialContext(dctx, "tcp", addr)
			cancel()
			if err != nil {
				return &EndpointError{Kind: Etcd, Endpoint: ep, Err: fmt.Errorf("nothing answers there: %w", err)}
			}
			conn.Close()
		}
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return &EndpointError{Kind: Etcd, Endpoint: ep, Err: err}
		}
		sctx, cancel := context.WithTimeout(ctx, checkWait)
		_, err = cli.Status(sctx, ep)
		cancel()
		cli.Close()
		if err != nil {
			return &EndpointError{Kind: Etcd, Endpoint: ep, Err: fmt.Errorf("no etcd member answers there (its status, within %v: %w)", checkWait, err)}
		}
	}
	if ttl <= 0 {
		return nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return &EndpointError{Kind: Etcd, Endpoint: all, Err: err}
	}
	defer cli.Close()
	gctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	asked := int64((ttl + time.Second - 1) / time.Second)
	g, err := cli.Grant(gctx, asked)
	if err != nil {
		return &EndpointError{Kind: Etcd, Endpoint: all, Err: fmt.Errorf("granting a lease of %ds: %w", asked, err)}
	}
	_, _ = cli.Revoke(gctx, g.ID) // it expires anyway
	if g.TTL != asked {
		return &TTLError{Kind: Etcd, Endpoint: all, Asked: ttl, Granted: time.Duration(g.TTL) * time.Second}
	}
	return nil
}

func checkRedis(ctx context.Context, endpoints []string) error {
	all := strings.Join(endpoints, ",")
	switch {
	case len(endpoints) == 0:
		return &EndpointError{Kind: Redis, Endpoint: all, Err: errors.New("no address")}
	case len(endpoints) > 1:
		return &EndpointError{Kind: Redis, Endpoint: all, Err: fmt.Errorf("%d addresses: the Redis lock is on one server, give one HOST:PORT", len(endpoints))}
	}
	addr := endpoints[0]
	if strings.Contains(addr, "://") {
		return &EndpointError{Kind: Redis, Endpoint: addr, Err: errors.New("want HOST:PORT, not a URL")}
	}
	if _, port, err := net.SplitHostPort(addr); err != nil {
		return &EndpointError{Kind: Redis, Endpoint: addr, Err: fmt.Errorf("want HOST:PORT: %w", err)}
	} else if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return &EndpointError{Kind: Redis, Endpoint: addr, Err: fmt.Errorf("want HOST:PORT: port %q", port)}
	}
	cli := newRedisClient(addr, checkWait)
	defer cli.Close()
	pctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	pong, err := cli.Ping(pctx).Result()
	switch {
	case err != nil:
		return &EndpointError{Kind: Redis, Endpoint: addr, Err: fmt.Errorf("no Redis answers there (PING, within %v: %w)", checkWait, err)}
	case pong != "PONG":
		return &EndpointError{Kind: Redis, Endpoint: addr, Err: fmt.Errorf("PING answered %q, not PONG", pong)}
	}
	return nil
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
	l := &extLessor{held: map[string]held{}, timeout: min(max(5*s.TTL, time.Second), maxCallTimeout)}
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
