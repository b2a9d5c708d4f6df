package realdb

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/lease/etcdcluster"
	"github.com/fencecheck/fencecheck/lease/redisserver"
)

// The lease services the tests run against: an etcd cluster of three
// members inside the test binary, and a redis-server (Debian's) started as a
// throwaway non-root process on a spare loopback port. Without redis-server
// the Redis tests are skipped — except under CI=true, where they fail.

var services struct {
	etcdOnce  sync.Once
	etcd      *etcdcluster.Cluster
	etcdDir   string
	etcdErr   error
	redisOnce sync.Once
	redis     *redisserver.Server
	redisErr  error
}

func needEtcd(t testing.TB) *etcdcluster.Cluster {
	t.Helper()
	services.etcdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fencecheck-etcd-")
		if err != nil {
			services.etcdErr = err
			return
		}
		services.etcdDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		services.etcd, services.etcdErr = etcdcluster.Start(ctx, dir, 3)
	})
	if services.etcdErr != nil {
		t.Fatalf("embedded etcd: %v", services.etcdErr)
	}
	return services.etcd
}

func needRedis(t testing.TB) string {
	t.Helper()
	services.redisOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		services.redis, services.redisErr = redisserver.Start(ctx)
	})
	if services.redisErr != nil {
		msg := "no redis-server for the tests (install Debian's redis-server): " + services.redisErr.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return services.redis.Addr
}

func stopServices() error {
	var err error
	if services.etcd != nil {
		services.etcd.Close()
		os.RemoveAll(services.etcdDir)
	}
	if services.redis != nil {
		err = services.redis.Stop()
	}
	return err
}

func TestEtcdAtomicQuick(t *testing.T) {
	c := needEtcd(t)
	cfg := Config{Lease: Etcd, LeaseEndpoints: c.Endpoints(), Sink: Atomic, Runs: 1, Seed: 1}
	res := run(t, cfg)
	for _, r := range res.Runs {
		t.Logf("run %d: %v %+v unexpected %v", r.Run, r.Elapsed, r.Stats, r.Unexpected)
	}
}
