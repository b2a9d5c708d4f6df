// Package etcdlease is a lock on etcd (go.etcd.io/etcd/client/v3) that
// records its history as it goes: acquire, renew and release around an etcd
// lease and a lock key, with the lock key's create revision as the fencing
// token.
//
// The lock is concurrency.Mutex's algorithm (one key per holder under the
// resource's prefix, attached to the holder's lease; the key with the
// smallest create revision holds the lock), in its TryLock form, written out
// here for one reason: concurrency.Session runs its own KeepAlive stream,
// which renews the lease behind the history's back — a holder that is
// paused would keep its lock, and no renew would show. Here the holder owns
// its keepalives: Lease.Renew is one KeepAliveOnce, recorded as a renew with
// the lease's ttl, and Lease.KeepAlive calls it on a ticker.
//
// Why the create revision is a fencing token: etcd's revision is one counter
// for the whole keyspace, raised by every committed change through raft, so
// a key's create revision is unique and never reused, even across leader
// changes. A holder's key is created before it can hold the lock, and it
// holds the lock only while no key with a smaller create revision exists
// under the prefix; the next holder's key exists only after this holder's
// was created (it is created later, so its revision is larger) or it waited
// behind it. So the holders of one lock have strictly increasing tokens in
// grant order, and a token names one grant.
package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fencecheck/fencecheck/lease"
)

// DefaultPrefix is where the lock keys live when Locker.Prefix is empty.
const DefaultPrefix = "/fencecheck/locks/"

// Locker takes locks on etcd for one holder. Its methods may be called from
// one goroutine at a time (a holder is sequential: its history has one
// operation open at a time); Lease.KeepAlive runs under the holder's
// KeepAliveProcess name so that it may run beside the holder's other calls.
type Locker struct {
	Client *clientv3.Client
	// Prefix of the lock keys; a resource's keys are Prefix+resource+"/"+lease id.
	Prefix string
	// Recording says where and as whom to record (nil Log: nothing).
	Recording lease.Recording
	// Raise, if set, raises the sink's fence to the token before an acquire
	// completes (the rule for services without a coordinator, package lease).
	Raise lease.Raiser
}

// Lease is a lock held: its etcd lease, its key, its token.
type Lease struct {
	l        *Locker
	resource string
	id       clientv3.LeaseID
	key      string
	token    int64
	ttl      time.Duration
}

// Token is the lock key's create revision.
func (ls *Lease) Token() int64 { return ls.token }

// TTL is the lease's ttl as etcd granted it (whole seconds, at least the
// server's minimum).
func (ls *Lease) TTL() time.Duration { return ls.ttl }

// ID is the etcd lease.
func (ls *Lease) ID() clientv3.LeaseID { return ls.id }

func (l *Locker) prefix(resource string) string {
	p := l.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	return p + resource + "/"
}

// seconds rounds a ttl up to etcd's whole seconds (at least 1).
func seconds(ttl time.Duration) int64 {
	s := int64((ttl + time.Second - 1) / time.Second)
	return max(s, 1)
}

// TryAcquire grants a new etcd lease of ttl (rounded up to seconds) and
// tries to take the lock on resource with it: lease.ErrHeld if another
// holder has it. It records an acquire (and the holder's raise, with
// Raise). On ErrHeld, and on an error with no grant, the lease is revoked.
// A returned error with a non-nil Lease (a raise that failed or found the
// grant stale) means the lock is held: release it.
func (l *Locker) TryAcquire(ctx context.Context, resource, requestID string, ttl time.Duration) (*Lease, error) {
	var ls *Lease
	lock := func(ctx context.Context) (lease.Grant, error) {
		var err error
		ls, err = l.tryLock(ctx, resource, ttl)
		if err != nil {
			return lease.Grant{}, err
		}
		return lease.Grant{Token: ls.token, TTL: ls.ttl}, nil
	}
	_, err := l.Recording.Acquire(ctx, resource, requestID, ttl, lock, l.Raise)
	return ls, err
}

func (l *Locker) tryLock(ctx context.Context, resource string, ttl time.Duration) (*Lease, error) {
	g, err := l.Client.Grant(ctx, seconds(ttl))
	if err != nil {
		return nil, fmt.Errorf("etcdlease: grant: %w", err)
	}
	pfx := l.prefix(resource)
	key := fmt.Sprintf("%s%016x", pfx, int64(g.ID))
	revoke := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_, _ = l.Client.Revoke(rctx, g.ID) // the lease expires anyway
	}
	put := clientv3.OpPut(key, l.Recording.Holder.Owner, clientv3.WithLease(g.ID))
	owner := clientv3.OpGet(pfx, clientv3.WithFirstCreate()...)
	resp, err := l.Client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(put, owner).Else(clientv3.OpGet(key), owner).Commit()
	if err != nil {
		revoke()
		return nil, fmt.Errorf("etcdlease: lock txn: %w", err)
	}
	rev := resp.Header.Revision
	if !resp.Succeeded {
		rev = resp.Responses[0].GetResponseRange().Kvs[0].CreateRevision
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if len(kvs) > 0 && kvs[0].CreateRevision != rev {
		revoke() // deletes the key with it
		return nil, lease.ErrHeld
	}
	return &Lease{l: l, resource: resource, id: g.ID, key: key, token: rev, ttl: time.Duration(g.TTL) * time.Second}, nil
}

// Renew sends one keepalive for the lease (KeepAliveOnce) and records it as
// a renew with the lease's ttl: ok when etcd extended it, fail expired when
// etcd no longer has it (an expired lease is revoked, never revived), info
// when the answer is unknown.
func (ls *Lease) Renew(ctx context.Context) error {
	return ls.renew(ctx, ls.l.Recording)
}

func (ls *Lease) renew(ctx context.Context, r lease.Recording) error {
	return r.Renew(ctx, ls.resource, ls.token, ls.ttl, func(ctx context.Context) error {
		resp, err := ls.l.Client.KeepAliveOnce(ctx, ls.id)
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			return lease.ErrExpired
		case err != nil:
			return fmt.Errorf("etcdlease: keepalive: %w", err)
		case resp.TTL <= 0:
			return lease.ErrExpired
		}
		return nil
	})
}

// KeepAlive renews the lease every interval until ctx is done or a renew
// finds the lease gone, recording each renew under process keepAliveProcess
// (the holder's process name must not be used for it while the holder
// records other operations: one operation open per process). Each renew
// waits for its answer at most interval: one whose answer does not come by
// then (etcd unreachable, no quorum) is recorded info and the loop goes on
// (the lease may still be alive). It returns the error that says the lease
// is gone (lease.ErrExpired, lease.ErrNotHolder), or nil when ctx is done.
func (ls *Lease) KeepAlive(ctx context.Context, interval time.Duration, keepAliveProcess string) error {
	r := ls.l.Recording
	r.Holder.Process = keepAliveProcess
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		// Without a bound a renew with no answer would wait for ctx's end
		// (the client waits for a connection), and no renew would follow.
		rctx, cancel := context.WithTimeout(ctx, interval)
		err := ls.renew(rctx, r)
		cancel()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil // cut by the end of ctx (recorded info)
			case errors.Is(err, lease.ErrExpired), errors.Is(err, lease.ErrNotHolder):
				return err // the lease is gone
			}
			// An answer that did not come (recorded info): the lease may
			// still be alive, so keep renewing, as a holder would.
		}
	}
}

// Release deletes the lock key if it is still this lease's (not_holder if
// it is gone: the lease expired) and revokes the lease; it records a
// release.
func (ls *Lease) Release(ctx context.Context) error {
	return ls.l.Recording.Release(ctx, ls.resource, ls.token, func(ctx context.Context) error {
		resp, err := ls.l.Client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(ls.key), "=", ls.token)).
			Then(clientv3.OpDelete(ls.key)).Commit()
		if err != nil {
			return fmt.Errorf("etcdlease: release: %w", err)
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_, _ = ls.l.Client.Revoke(rctx, ls.id)
		cancel()
		if !resp.Succeeded {
			return lease.ErrNotHolder
		}
		return nil
	})
}

// Resource is the resource the lease locks.
func (ls *Lease) Resource() string { return ls.resource }

// Key is the lock key.
func (ls *Lease) Key() string { return ls.key }
