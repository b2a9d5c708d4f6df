// Package etcdcluster runs an etcd cluster inside this process (etcd's
// embed package): n members on 127.0.0.1, on spare ports chosen when it
// starts, with fast elections (10ms heartbeats, 100ms election timeout, so
// that etcd's lease minimum is 1s; or etcd's default timings, StartAt) and
// no fsync. It is for tests and for explore real: members can be stopped
// and restarted to make a leader go away mid-run.
package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Timings are a cluster's heartbeat interval and election timeout, in
// milliseconds; etcd's minimum lease is 1.5 election timeouts, rounded up
// to whole seconds.
type Timings struct{ TickMs, ElectionMs uint }

// Fast is Start's timings: a lease minimum of 1s, elections in 100ms.
var Fast = Timings{TickMs: 10, ElectionMs: 100}

// Default is etcd's own default timings, as on a cluster of one's own: a
// lease minimum of 2s.
var Default = Timings{TickMs: 100, ElectionMs: 1000}

// Cluster is a running embedded cluster.
type Cluster struct {
	timings Timings
	dir     string
	token   string
	initial string
	mu      sync.Mutex
	members []*member
}

type member struct {
	name         string
	peer, client url.URL
	etcd         *embed.Etcd // nil while stopped
}

// spare returns a loopback address with a port that was free a moment ago.
func spare() (url.URL, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, err
	}
	addr := ln.Addr().String()
	ln.Close()
	return url.URL{Scheme: "http", Host: addr}, nil
}

// Start starts n members (1 or 3 make sense) with their data under dir and
// waits until they serve, with Fast timings.
func Start(ctx context.Context, dir string, n int) (*Cluster, error) {
	return StartAt(ctx, dir, n, Fast)
}

// StartAt is Start with the timings t.
func StartAt(ctx context.Context, dir string, n int, t Timings) (*Cluster, error) {
	if n < 1 {
		return nil, errors.New("etcdcluster: need at least one member")
	}
	c := &Cluster{timings: t, dir: dir, token: fmt.Sprintf("fencecheck-%d-%d", os.Getpid(), time.Now().UnixNano())}
	var parts []string
	for i := range n {
		m := &member{name: fmt.Sprintf("etcd-%d", i+1)}
		var err error
		if m.peer, err = spare(); err != nil {
			return nil, err
		}
		if m.client, err = spare(); err != nil {
			return nil, err
		}
		parts = append(parts, m.name+"="+m.peer.String())
		c.members = append(c.members, m)
	}
	c.initial = strings.Join(parts, ",")
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.start(ctx, m, embed.ClusterStateFlagNew)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) config(m *member, state string) *embed.Config {
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = filepath.Join(c.dir, m.name)
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peer}, []url.URL{m.peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.client}, []url.URL{m.client}
	cfg.InitialCluster, cfg.InitialClusterToken, cfg.ClusterState = c.initial, c.token, state
	cfg.TickMs, cfg.ElectionMs = c.timings.TickMs, c.timings.ElectionMs
	cfg.UnsafeNoFsync = true
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenMetricsUrls = nil
	return cfg
}

func (c *Cluster) start(ctx context.Context, m *member, state string) error {
	e, err := embed.StartEtcd(c.config(m, state))
	if err != nil {
		return fmt.Errorf("etcdcluster: starting %s: %w", m.name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcdcluster: %s: %w", m.name, err)
	case <-ctx.Done():
		e.Close()
		return fmt.Errorf("etcdcluster: %s not ready: %w", m.name, ctx.Err())
	case <-time.After(60 * time.Second):
		e.Close()
		return fmt.Errorf("etcdcluster: %s not ready in 60s", m.name)
	}
	c.mu.Lock()
	m.etcd = e
	c.mu.Unlock()
	return nil
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client.String())
	}
	return eps
}

// Name is member i's name (etcd-1, ...).
func (c *Cluster) Name(i int) string { return c.members[i].name }

// Leader returns the index of the member that is leader, as the running
// members see it, or -1.
func (c *Cluster) Leader() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.etcd == nil {
			continue
		}
		lead := uint64(m.etcd.Server.Leader())
		for j, o := range c.members {
			if o.etcd != nil && uint64(o.etcd.Server.MemberID()) == lead {
				return j
			}
		}
	}
	return -1
}

// Stop stops member i (its data stays, for Restart).
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	e := c.members[i].etcd
	c.members[i].etcd = nil
	c.mu.Unlock()
	if e != nil {
		e.Close()
	}
}

// Restart starts a stopped member i again from its data.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	c.mu.Lock()
	running := c.members[i].etcd != nil
	c.mu.Unlock()
	if running {
		return nil
	}
	return c.start(ctx, c.members[i], embed.ClusterStateFlagExisting)
}

// Close stops every member.
func (c *Cluster) Close() {
	for i := range c.members {
		c.Stop(i)
	}
}
