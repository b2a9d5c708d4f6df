// Package lease holds what fencecheck's adapters for real lease services
// share (etcd: package lease/etcdlease, Redis: package lease/redislock): the
// log they record the history in as they go, the holder's fence raise that
// makes a grant count, and the protocol errors of the history format.
//
// The recording rule for services without a coordinator, which the adapters
// follow (docs/real-systems.md states it in full):
//
//   - The holder records its own acquire, renew and release, under its process
//     name, as a coordinator-backed worker does.
//   - A lease service that grants no fence of its own has nobody to advance the
//     sink's fence: the holder does it. After the service has granted the lock
//     and before the acquire completes, the holder raises the resource's fence
//     on the sink to its token (Raiser) and records that as an advance by the
//     process named FenceProcess(holder): an advance that overlaps the acquire,
//     completed ok with the new fence. The grant counts as observed only then,
//     at the acquire's ok: the fence is already there, as fence-before-grant
//     requires of a coordinator.
//   - A raise that finds the fence already at or above the token (a newer
//     holder got there first: this grant is stale before it is used) changes
//     nothing and is recorded as a failed advance (error "fenced"). The acquire
//     still completes ok: the service did grant the lock.
package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fencecheck/fencecheck/history"
)

// Protocol errors: the fail answers of the history format.
var (
	ErrHeld      = errors.New(history.Held)
	ErrExpired   = errors.New(history.Expired)
	ErrNotHolder = errors.New(history.NotHolder)
)

// Log is where an adapter records its events. Each call returns once the
// event is recorded. A process has at most one operation open at a time.
type Log interface {
	Invoke(process, f, resource string, v history.Value) error
	Complete(process string, t history.Type, f, resource string, v history.Value) error
}

// RecorderLog records in r. It is safe for concurrent use.
func RecorderLog(r *history.Recorder) Log {
	return &recorderLog{rec: r, open: map[string]*history.Pending{}}
}

type recorderLog struct {
	rec  *history.Recorder
	mu   sync.Mutex
	open map[string]*history.Pending
}

func (l *recorderLog) Invoke(process, f, resource string, v history.Value) error {
	p := l.rec.Invoke(process, f, resource, v)
	l.mu.Lock()
	l.open[process] = p
	l.mu.Unlock()
	return l.rec.Err()
}

func (l *recorderLog) Complete(process string, t history.Type, f, resource string, v history.Value) error {
	l.mu.Lock()
	p, ok := l.open[process]
	delete(l.open, process)
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("lease: %s completes %s on %s with nothing open", process, f, resource)
	}
	l.rec.Complete(p, t, v)
	return l.rec.Err()
}

// Holder names who holds a lease in the history: its process name, and the
// owner and incarnation its acquire, renew and release values carry.
type Holder struct {
	Process, Owner, Incarnation string
}

// FenceProcess is the process name under which a holder records the advances
// it makes itself: its own name with "/fence".
func FenceProcess(process string) string { return process + "/fence" }

// Raiser raises resource's fence on the sink to token if it is below, in one
// atomic step, and returns the fence the sink holds after it and whether
// this call raised it.
type Raiser func(ctx context.Context, resource string, token int64) (fence int64, raised bool, err error)

// Grant is what a lease service granted.
type Grant struct {
	Token int64
	TTL   time.Duration
}

// Unit converts durations into the history's time unit (default: ns).
type Unit time.Duration

func (u Unit) of(d time.Duration) int64 {
	if u <= 0 {
		return int64(d)
	}
	return int64(d / time.Duration(u))
}

// Recording is the recording side of an adapter: nil Log records nothing.
type Recording struct {
	Log    Log
	Holder Holder
	// Unit is the history's time unit, for ttls (default ns).
	Unit Unit
}

func (r Recording) invoke(f, resource string, v history.Value) error {
	if r.Log == nil {
		return nil
	}
	return r.Log.Invoke(r.Holder.Process, f, resource, v)
}

func (r Recording) complete(f, resource string, err error, ok history.Value) error {
	if r.Log == nil {
		return nil
	}
	t, v := history.OK, ok
	switch {
	case errors.Is(err, ErrHeld), errors.Is(err, ErrExpired), errors.Is(err, ErrNotHolder):
		t, v = history.Fail, history.Value{Error: protocolText(err)}
	case err != nil:
		t, v = history.Info, history.Value{Error: err.Error()}
	}
	return r.Log.Complete(r.Holder.Process, t, f, resource, v)
}

func protocolText(err error) string {
	for _, p := range []error{ErrHeld, ErrExpired, ErrNotHolder} {
		if errors.Is(err, p) {
			return p.Error()
		}
	}
	return err.Error()
}

// Acquire records an acquire around lock and, when it grants, the holder's
// raise of the fence (if raise is not nil) before the acquire completes. It
// returns lock's grant and error; a raise that fails is returned as an error
// too, with the grant (the lock is held: release it).
func (r Recording) Acquire(ctx context.Context, resource, requestID string, ttl time.Duration,
	lock func(ctx context.Context) (Grant, error), raise Raiser) (Grant, error) {
	h := r.Holder
	if err := r.invoke(history.Acquire, resource, history.Value{Owner: h.Owner, Incarnation: h.Incarnation,
		RequestID: requestID, TTL: r.Unit.of(ttl)}); err != nil {
		return Grant{}, err
	}
	g, err := lock(ctx)
	var raiseErr error
	if err == nil && raise != nil {
		raiseErr = r.raise(ctx, resource, g.Token, raise)
	}
	if lerr := r.complete(history.Acquire, resource, err, history.Value{Token: g.Token, TTL: r.Unit.of(g.TTL)}); lerr != nil {
		return g, lerr
	}
	if err != nil {
		return g, err
	}
	return g, raiseErr
}

// ErrStale is returned (wrapped) by Acquire when the holder's raise found the
// fence above its token: the grant was superseded before it was used.
var ErrStale = errors.New("lease: the fence is already above this grant's token")

func (r Recording) raise(ctx context.Context, resource string, token int64, raise Raiser) error {
	proc := FenceProcess(r.Holder.Process)
	if r.Log != nil {
		if err := r.Log.Invoke(proc, history.Advance, resource, history.Value{}); err != nil {
			return err
		}
	}
	fence, raised, err := raise(ctx, resource, token)
	t, v := history.OK, history.Value{Token: fence}
	switch {
	case err != nil:
		t, v = history.Info, history.Value{Error: err.Error()}
	case !raised:
		t, v = history.Fail, history.Value{Error: history.Fenced}
	}
	if r.Log != nil {
		if lerr := r.Log.Complete(proc, t, history.Advance, resource, v); lerr != nil {
			return lerr
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("lease: raising the fence of %s to %d: %w", resource, token, err)
	case !raised && fence > token:
		return fmt.Errorf("%w: %s fence %d, token %d", ErrStale, resource, fence, token)
	}
	return nil
}

// Renew records a renew of the lease with token around keep.
func (r Recording) Renew(ctx context.Context, resource string, token int64, ttl time.Duration, keep func(ctx context.Context) error) error {
	h := r.Holder
	if err := r.invoke(history.Renew, resource, history.Value{Owner: h.Owner, Incarnation: h.Incarnation,
		Token: token, TTL: r.Unit.of(ttl)}); err != nil {
		return err
	}
	err := keep(ctx)
	if lerr := r.complete(history.Renew, resource, err, history.Value{}); lerr != nil {
		return lerr
	}
	return err
}

// Release records a release of the lease with token around drop.
func (r Recording) Release(ctx context.Context, resource string, token int64, drop func(ctx context.Context) error) error {
	h := r.Holder
	if err := r.invoke(history.Release, resource, history.Value{Owner: h.Owner, Incarnation: h.Incarnation,
		Token: token}); err != nil {
		return err
	}
	err := drop(ctx)
	if lerr := r.complete(history.Release, resource, err, history.Value{}); lerr != nil {
		return lerr
	}
	return err
}
