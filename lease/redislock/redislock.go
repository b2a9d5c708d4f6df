// Package redislock is the Redis lock of the Redlock family on one Redis
// (github.com/redis/go-redis/v9) — SET key value NX PX ttl with a random
// value, a compare-and-extend script to renew, a compare-and-delete script
// to release — recording its history as it goes.
//
// Redis grants no fencing token: nothing the lock returns orders one grant
// after another, and the resource checks nothing of it. The history format
// still wants a token on every acquire ok and write, so the history says what
// the client has: a number it makes up, Locker.Tokens (by default a counter
// of this Locker's own grants, from 1). That number is no fence: it is not
// ordered with the lock's grants (a holder that pauses between SET and
// drawing its number draws after its successor), two Lockers draw the same
// numbers, and it dies with the client. A sink can fence on it only as far
// as whoever hands the numbers out is a coordinator in disguise. The honest
// pairing is with a sink that checks nothing (realdb's "none"): the history
// then shows the paused holder's write landing after its successor's grant,
// which is what the checker's fencing invariant names.
//
// What the history says must be what Redis did, so the Locker refuses two
// things that would make it say otherwise:
//
//   - A client that re-sends a command after a lost connection (go-redis's
//     default, MaxRetries 3): if Redis ran the first copy, the re-sent SET NX
//     finds the key (its own) and answers nil, the re-sent compare-and-delete
//     finds it gone and answers 0, and the history would say "fail held" or
//     "fail not_holder" — certainly no effect — for an operation that
//     happened. Every call returns ErrResends, recording nothing, unless the
//     client's options rule re-sends out (MaxRetries -1; a ClusterClient's
//     MaxRedirects -1 too). An answer lost with the connection is then
//     recorded info, as it should be.
//   - A ttl that is not a whole number of milliseconds, or below 1ms
//     (ErrTTL): Redis's PX counts milliseconds, go-redis sends the ttl
//     truncated (PX 1 for 1.999ms; PEXPIRE 0, which deletes the key, for
//     a renew below 1ms), and the history would record a longer lease than
//     Redis keeps.
//
// Redis keeps a key set with PX n at its millisecond clock T until that clock
// passes T+n: between n and n+1 milliseconds of real time after the command
// ran. The history records ttl n, which is exact for the earliest expiry
// (what exclusive-lease needs) but not for the latest (renew-validity's
// deadline, the grant's ok + n, can be passed by up to 1ms while Redis still
// has the key). So the renew script refuses (fail expired) a key in its last
// millisecond (PTTL below 1), which Redis reaches no sooner than n after the
// key was set or extended: every renew Redis accepts was invoked before the
// recorded deadline, and the history's ttl is exact for both invariants.
// (This assumes Redis's clock and the recorder's run at one rate: a step of
// the server's wall clock moves every Redis expiry.)
package redislock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fencecheck/fencecheck/lease"
)

// DefaultPrefix is where the lock keys live when Locker.Prefix is empty.
const DefaultPrefix = "fencecheck:lock:"

// ErrResends is returned (wrapped, with the option to change) by every call
// of a Locker whose client may re-send a command after a lost connection:
// the answer to a re-sent copy may not be the answer to the copy Redis ran,
// and the history would record an operation that happened as failed. Such a
// call records nothing and sends nothing.
var ErrResends = errors.New("redislock: the client re-sends commands after a lost connection, so an answer may be a re-sent copy's and the history would record an operation that happened as failed")

// ErrTTL is returned (wrapped, with the ttl) by TryAcquire for a ttl that is
// not a whole number of milliseconds or is below 1ms: Redis would keep the
// lock for another ttl than the history records. Nothing is recorded.
var ErrTTL = errors.New("want a whole number of milliseconds, at least 1ms: Redis counts a lock's ttl (PX) in milliseconds, go-redis would send it truncated (and a renew below 1ms would delete the key) while the history records the ttl asked for")

// Locker takes locks on Redis for one holder, one call at a time.
type Locker struct {
	// Client is the connection to the one Redis server. It must not re-send
	// commands (redis.Options.MaxRetries -1; for a ClusterClient,
	// MaxRedirects -1 too): see ErrResends.
	Client redis.UniversalClient
	// Prefix of the lock keys; a resource's key is Prefix+resource.
	Prefix    string
	Recording lease.Recording
	// Tokens makes up the token an acquire records (default: a counter of
	// this Locker's grants). See the package comment: it is not a fence.
	Tokens func() int64
	// Raise, if set, raises the sink's fence to the made-up token before an
	// acquire completes (package lease).
	Raise lease.Raiser

	count atomic.Int64
}

// Lease is a lock held.
type Lease struct {
	l        *Locker
	resource string
	key      string
	value    string
	token    int64
	ttl      time.Duration
}

// Token is the made-up token the acquire recorded.
func (ls *Lease) Token() int64 { return ls.token }

// TTL is the lock's ttl.
func (ls *Lease) TTL() time.Duration { return ls.ttl }

// Value is the lock's random value.
func (ls *Lease) Value() string { return ls.value }

func (l *Locker) key(resource string) string {
	p := l.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	return p + resource
}

// CheckClient returns an error wrapping ErrResends unless c is a go-redis
// client whose options rule out re-sending a command: a *redis.Client (a
// failover client included) with MaxRetries -1, a *redis.ClusterClient with
// MaxRetries and MaxRedirects -1, a *redis.Ring with MaxRetries -1. A client
// of another type is refused too: there is no telling. (A hook that re-sends
// commands, added with AddHook, is the user's to leave out.)
func CheckClient(c redis.UniversalClient) error {
	switch c := c.(type) {
	case nil:
		return errors.New("redislock: Locker.Client is nil")
	case *redis.Client:
		if n := c.Options().MaxRetries; n > 0 {
			return fmt.Errorf("%w (MaxRetries %d): set redis.Options.MaxRetries to -1", ErrResends, n)
		}
	case *redis.ClusterClient:
		o := c.Options()
		if o.MaxRetries > 0 || o.MaxRedirects > 0 {
			return fmt.Errorf("%w (MaxRetries %d, MaxRedirects %d, which also bounds the re-sends after a network error): set redis.ClusterOptions.MaxRetries and MaxRedirects to -1",
				ErrResends, max(o.MaxRetries, 0), o.MaxRedirects)
		}
	case *redis.Ring:
		if n := c.Options().MaxRetries; n > 0 {
			return fmt.Errorf("%w (MaxRetries %d): set redis.RingOptions.MaxRetries to -1", ErrResends, n)
		}
	default:
		return fmt.Errorf("%w: a %T may (there is no telling); use a *redis.Client with MaxRetries -1", ErrResends, c)
	}
	return nil
}

// checkTTL returns an error wrapping ErrTTL unless ttl is a whole number of
// milliseconds, at least 1ms.
func checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond || ttl%time.Millisecond != 0 {
		return fmt.Errorf("redislock: ttl %v: %w", ttl, ErrTTL)
	}
	return nil
}

func (l *Locker) token() int64 {
	if l.Tokens != nil {
		return l.Tokens()
	}
	return l.count.Add(1)
}

// TryAcquire sets the lock key to a random value if it is absent, with ttl
// (whole milliseconds, at least 1ms: else ErrTTL): lease.ErrHeld if it is
// present. It records an acquire whose token is made up (Tokens), and the
// holder's raise with Raise. An error with a non-nil Lease means the lock is
// held: release it. A client that may re-send commands is refused
// (ErrResends); neither refusal records anything.
func (l *Locker) TryAcquire(ctx context.Context, resource, requestID string, ttl time.Duration) (*Lease, error) {
	if err := CheckClient(l.Client); err != nil {
		return nil, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	var ls *Lease
	lock := func(ctx context.Context) (lease.Grant, error) {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return lease.Grant{}, err
		}
		value := hex.EncodeToString(b[:])
		ok, err := l.Client.SetNX(ctx, l.key(resource), value, ttl).Result()
		switch {
		case err != nil:
			return lease.Grant{}, fmt.Errorf("redislock: SET NX: %w", err)
		case !ok:
			return lease.Grant{}, lease.ErrHeld
		}
		ls = &Lease{l: l, resource: resource, key: l.key(resource), value: value, token: l.token(), ttl: ttl}
		return lease.Grant{Token: ls.token, TTL: ttl}, nil
	}
	_, err := l.Recording.Acquire(ctx, resource, requestID, ttl, lock, l.Raise)
	return ls, err
}

// extend sets the key's ttl if the key still holds the value: 1 extended,
// 0 the key is gone (expired) or in its last millisecond (PTTL below 1),
// -1 another holder has it.
//
// The last millisecond: a key set or extended with PX n at Redis's
// millisecond clock T lives while that clock reads at most T+n, up to n+1
// milliseconds of real time. The history says n, so a renew accepted while
// the clock reads T+n could come after the deadline the history allows
// (renew-validity). The clock reads T+n no sooner than n after the command
// that set the ttl ran, itself no sooner than its invoke: a renew refused
// from then on is accepted only before the recorded deadline. The key is
// left alone (it expires within the millisecond): the renew had no effect.
var extend = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v == ARGV[1] then
  if redis.call("PTTL", KEYS[1]) < 1 then
    return 0
  end
  redis.call("PEXPIRE", KEYS[1], ARGV[2])
  return 1
elseif v then
  return -1
end
return 0`)

// unlock deletes the key if it still holds the value: 1 deleted, 0 not.
var unlock = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// Renew extends the lock by its ttl from now if the key still holds this
// lease's value; it records a renew: fail expired when the key is gone (or
// in the last millisecond Redis adds to every ttl: see extend), not_holder
// when another holder's value is there. A client that may re-send commands
// is refused (ErrResends), with nothing recorded.
func (ls *Lease) Renew(ctx context.Context) error {
	if err := CheckClient(ls.l.Client); err != nil {
		return err
	}
	return ls.l.Recording.Renew(ctx, ls.resource, ls.token, ls.ttl, func(ctx context.Context) error {
		n, err := extend.Run(ctx, ls.l.Client, []string{ls.key}, ls.value, ls.ttl.Milliseconds()).Int64()
		switch {
		case err != nil:
			return fmt.Errorf("redislock: renew: %w", err)
		case n == 0:
			return lease.ErrExpired
		case n < 0:
			return lease.ErrNotHolder
		}
		return nil
	})
}

// Release deletes the key if it still holds this lease's value (the
// compare-and-delete of the Redis documentation); not_holder otherwise. A
// client that may re-send commands is refused (ErrResends), with nothing
// recorded.
func (ls *Lease) Release(ctx context.Context) error {
	if err := CheckClient(ls.l.Client); err != nil {
		return err
	}
	return ls.l.Recording.Release(ctx, ls.resource, ls.token, func(ctx context.Context) error {
		n, err := unlock.Run(ctx, ls.l.Client, []string{ls.key}, ls.value).Int64()
		switch {
		case err != nil:
			return fmt.Errorf("redislock: release: %w", err)
		case n == 0:
			return lease.ErrNotHolder
		}
		return nil
	})
}
