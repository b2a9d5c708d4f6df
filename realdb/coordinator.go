package realdb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fencecheck/fencecheck/history"
	leases "github.com/fencecheck/fencecheck/lease"
)

// Protocol errors of the coordinator: the fail answers of the history format.
var (
	ErrHeld      = leases.ErrHeld
	ErrExpired   = leases.ErrExpired
	ErrNotHolder = leases.ErrNotHolder
)

// protocolError maps a protocol error's text back to it (for errors that
// crossed the loopback protocol), and anything else to a plain error.
func protocolError(msg string) error {
	for _, err := range []error{ErrHeld, ErrExpired, ErrNotHolder} {
		if msg == err.Error() {
			return err
		}
	}
	return errors.New(msg)
}

// AcquireRequest asks for the lease on Resource.
type AcquireRequest struct {
	Resource    string
	Owner       string
	Incarnation string
	// RequestID identifies the request: a retry with the same id gets the
	// same answer instead of a second grant.
	RequestID string
	TTL       time.Duration
}

// Grant is a lease granted: its fencing token and its length.
type Grant struct {
	Token int64
	TTL   time.Duration
}

// LeaseRequest names a lease held, for Renew and Release.
type LeaseRequest struct {
	Resource    string
	Owner       string
	Incarnation string
	Token       int64
	// TTL is the new length of the lease, for Renew.
	TTL time.Duration
}

// Coordinator grants leases on resources. It judges expiry by its own clock
// only, and advances the sink's fence for a resource before granting the new
// fence as the token. It is safe for concurrent use; its operations are
// serialised.
type Coordinator struct {
	clock func() int64 // nanoseconds, monotonic
	sink  Sink
	rec   *history.Recorder

	mu     sync.Mutex
	leases map[string]lease
	grants map[string]grantRecord // by request id, for the coordinator's lifetime
	// graceEnd: after a restart, no lease is granted before it (by clock).
	graceEnd int64

	// grantBeforeFence is the unsafe variant of that name, for replaying its
	// counterexample: grant the next token at once and advance the sink's
	// fence only when told (advanceTo).
	grantBeforeFence bool
	issued           map[string]int64
	// advanced is, per resource, a fence advanced for the next grant (the
	// replay's: the model's coordinator grants when the sink's answer to
	// the advance arrives, which is a step of its own).
	advanced map[string]int64
}

type lease struct {
	owner, incarnation string
	token              int64
	deadline           int64 // by clock; valid while now < deadline
}

type grantRecord struct {
	resource string
	grant    Grant
}

// NewCoordinator returns a coordinator that advances sink's fences and reads
// time from clock, which must be monotonic and count nanoseconds (for
// example history.MonotonicClock(time.Nanosecond)). If rec is not nil the
// coordinator records its advances there, as process "coordinator".
func NewCoordinator(sink Sink, clock func() int64, rec *history.Recorder) *Coordinator {
	return &Coordinator{clock: clock, sink: sink, rec: rec,
		leases: map[string]lease{}, grants: map[string]grantRecord{}, advanced: map[string]int64{}}
}

// Acquire grants the lease on r.Resource unless another valid lease holds it
// (ErrHeld). A request id already answered gets the same grant again.
func (c *Coordinator) Acquire(ctx context.Context, r AcquireRequest) (Grant, error) {
	if r.TTL <= 0 || r.RequestID == "" {
		return Grant{}, fmt.Errorf("realdb: acquire %s needs a positive ttl and a request id", r.Resource)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.grants[r.RequestID]; ok {
		if g.resource != r.Resource {
			return Grant{}, fmt.Errorf("realdb: request id %q was used for %s, not %s", r.RequestID, g.resource, r.Resource)
		}
		return g.grant, nil
	}
	if l, ok := c.leases[r.Resource]; ok && c.clock() < l.deadline || c.clock() < c.graceEnd {
		return Grant{}, ErrHeld
	}
	token, ok := c.advanced[r.Resource]
	delete(c.advanced, r.Resource)
	switch {
	case ok:
	case c.grantBeforeFence:
		c.issued[r.Resource]++
		token = c.issued[r.Resource]
	default:
		var err error
		if token, err = c.advance(ctx, r.Resource, 0); err != nil {
			return Grant{}, err
		}
	}
	c.leases[r.Resource] = lease{owner: r.Owner, incarnation: r.Incarnation, token: token,
		deadline: c.clock() + int64(r.TTL)}
	g := Grant{Token: token, TTL: r.TTL}
	c.grants[r.RequestID] = grantRecord{resource: r.Resource, grant: g}
	return g, nil
}

// Restart is the coordinator after a crash and restart, as the reference
// protocol has it: the lease table, kept in memory, is lost; the grant
// records (kept with the fences, in the store) are not; and no lease is
// granted for grace (one ttl), by which time every lease granted before the
// restart has expired.
func (c *Coordinator) Restart(grace time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.leases)
	clear(c.advanced)
	c.graceEnd = c.clock() + int64(grace)
}

// advance raises the sink's fence for resource (by one; to to if to > 0
// and the fence is below it), recording it; c.mu is held, so the
// coordinator never has two advances open.
func (c *Coordinator) advance(ctx context.Context, resource string, to int64) (int64, error) {
	var p *history.Pending
	if c.rec != nil {
		p = c.rec.Invoke(history.Coordinator, history.Advance, resource, history.Value{})
	}
	var token int64
	var err error
	if to > 0 {
		token, _, err = c.sink.Raise(ctx, resource, to)
	} else {
		token, err = c.sink.Advance(ctx, resource)
	}
	if c.rec != nil {
		if err != nil {
			c.rec.Complete(p, history.Info, history.Value{Error: err.Error()})
		} else {
			c.rec.Complete(p, history.OK, history.Value{Token: token})
		}
	}
	return token, err
}

// Advance advances the sink's fence for resource now, recorded.
func (c *Coordinator) Advance(ctx context.Context, resource string) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.advance(ctx, resource, 0)
}

// advanceTo raises the sink's fence for resource to token now, recorded
// (the grant-before-fence variant's late advance, for the token it granted:
// a copy of it raises nothing).
func (c *Coordinator) advanceTo(ctx context.Context, resource string, token int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.advance(ctx, resource, token)
	return err
}

// advanceForGrant advances the sink's fence for resource now, recorded, and
// the next grant on resource takes the new fence as its token.
func (c *Coordinator) advanceForGrant(ctx context.Context, resource string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	token, err := c.advance(ctx, resource, 0)
	if err == nil {
		c.advanced[resource] = token
	}
	return err
}

// holds reports whether the lease on r.Resource is the one r names; c.mu is
// held.
func (c *Coordinator) holds(r LeaseRequest) (lease, bool) {
	l, ok := c.leases[r.Resource]
	return l, ok && l.owner == r.Owner && l.incarnation == r.Incarnation && l.token == r.Token
}

// Renew extends the lease r names by r.TTL from now. It fails with
// ErrNotHolder when the resource's lease is not that one (another owner,
// incarnation or token) and ErrExpired when it is but now is at or past its
// deadline: an expired lease is not revived.
func (c *Coordinator) Renew(_ context.Context, r LeaseRequest) error {
	if r.TTL <= 0 {
		return fmt.Errorf("realdb: renew %s needs a positive ttl", r.Resource)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.holds(r)
	if !ok {
		return ErrNotHolder
	}
	now := c.clock()
	if now >= l.deadline {
		return ErrExpired
	}
	l.deadline = now + int64(r.TTL)
	c.leases[r.Resource] = l
	return nil
}

// Release gives up the lease r names; ErrNotHolder if the resource's lease is
// not that one.
func (c *Coordinator) Release(_ context.Context, r LeaseRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.holds(r); !ok {
		return ErrNotHolder
	}
	delete(c.leases, r.Resource)
	return nil
}
