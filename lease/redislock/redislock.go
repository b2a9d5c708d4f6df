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
package redislock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fencecheck/fencecheck/lease"
)

// DefaultPrefix is where the lock keys live when Locker.Prefix is empty.
const DefaultPrefix = "fencecheck:lock:"

// Locker takes locks on Redis for one holder, one call at a time.
type Locker struct {
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

func (l *Locker) token() int64 {
	if l.Tokens != nil {
		return l.Tokens()
	}
	return l.count.Add(1)
}

// TryAcquire sets the lock key to a random value if it is absent, with ttl
// (whole milliseconds): lease.ErrHeld if it is present. It records an
// acquire whose token is made up (Tokens), and the holder's raise with Raise.
// An error with a non-nil Lease means the lock is held: release it.
func (l *Locker) TryAcquire(ctx context.Context, resource, requestID string, ttl time.Duration) (*Lease, error) {
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
// 0 the key is gone (expired), -1 another holder has it.
var extend = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v == ARGV[1] then
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
// lease's value; it records a renew: fail expired when the key is gone,
// not_holder when another holder's value is there.
func (ls *Lease) Renew(ctx context.Context) error {
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
// compare-and-delete of the Redis documentation); not_holder otherwise.
func (ls *Lease) Release(ctx context.Context) error {
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
