package explore

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/internal/servicetest"
	"github.com/fencecheck/fencecheck/lease/etcdcluster"
)

// TestRealEndpointsChecked: explore real checks the lease service of
// --endpoints before it writes or runs anything: nothing answering there,
// an address of the wrong form or of another service than --lease names,
// extra Redis addresses, and an etcd cluster that grants longer leases
// than --ttl are usage errors (exit 2) naming the flag and the address. An
// unreachable etcd took about 21 s to end "incomplete: 0 of 3 runs done
// ... no violation found so far", the endpoint never named; a Redis URL
// ran the campaign into the same ending, and a second Redis address was
// ignored.
func TestRealEndpointsChecked(t *testing.T) {
	redisAddr := servicetest.Redis(t).Addr
	defaults, err := etcdcluster.StartAt(context.Background(), t.TempDir(), 1, etcdcluster.Default) // a lease minimum of 2s, as on a cluster of one's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(defaults.Close)
	etcd := defaults.Endpoints()[0]
	etcdHostPort := strings.TrimPrefix(etcd, "http://")
	for _, c := range []struct {
		args []string
		want []string // in the error
	}{
		{[]string{"--lease", "etcd", "--endpoints", "http://127.0.0.1:1"}, []string{"--endpoints http://127.0.0.1:1", "connection refused"}},
		{[]string{"--lease", "etcd", "--endpoints", etcd + ",http://127.0.0.1:1"}, []string{"--endpoints http://127.0.0.1:1:"}},
		{[]string{"--lease", "etcd", "--endpoints", "http://" + redisAddr, "--ttl", "2s"}, []string{"--endpoints http://" + redisAddr, "no etcd"}},
		{[]string{"--lease", "etcd", "--endpoints", etcd}, []string{"--ttl 1s (the default with --lease etcd)", "2s"}},
		{[]string{"--lease", "etcd", "--endpoints", etcd, "--ttl", "1s"}, []string{"--ttl 1s:", "2s"}},
		{[]string{"--lease", "redis", "--endpoints", "http://127.0.0.1:6390"}, []string{"--endpoints http://127.0.0.1:6390", "HOST:PORT"}},
		{[]string{"--lease", "redis", "--endpoints", "127.0.0.1:1"}, []string{"--endpoints 127.0.0.1:1", "no Redis"}},
		{[]string{"--lease", "redis", "--endpoints", redisAddr + ",127.0.0.1:1"}, []string{"--endpoints " + redisAddr + ",127.0.0.1:1", "one server"}},
		{[]string{"--lease", "redis", "--endpoints", etcdHostPort}, []string{"--endpoints " + etcdHostPort, "no Redis"}},
	} {
		out := t.TempDir()
		start := time.Now()
		code, stdout, stderr := explore(t, append([]string{"real", "--runs", "3", "--out", out}, c.args...)...)
		d := time.Since(start)
		if code != exitUsage || d > 15*time.Second {
			t.Errorf("%v: exit %d in %v, want 2 at once\n%s%s", c.args, code, d, stdout, stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: the error %q does not say %q", c.args, stderr, w)
			}
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%v: a usage error wrote into --out", c.args)
		}
	}
	// The services as they are: the campaign runs.
	for _, args := range [][]string{
		{"--lease", "redis", "--endpoints", redisAddr},
		{"--lease", "etcd", "--endpoints", etcd, "--ttl", "2s", "--pause", "0"},
	} {
		code, stdout, stderr := explore(t, append([]string{"real", "--runs", "1", "--workers", "2", "--resources", "1", "--tasks", "1",
			"--out", t.TempDir()}, args...)...)
		if code != exitOK && code != exitViolation {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
}

// TestRealRedisTTLWholeMilliseconds: --lease redis with a ttl that is not a
// whole number of milliseconds is a usage error naming --ttl (go-redis sent
// --ttl 1999us as PX 1 while the history said 1.999ms: exclusive-lease false
// alarms in 13 of 30 runs).
func TestRealRedisTTLWholeMilliseconds(t *testing.T) {
	for _, ttl := range []string{"1999us", "1500us", "2500us"} {
		out := t.TempDir()
		code, stdout, stderr := explore(t, "real", "--lease", "redis", "--ttl", ttl, "--runs", "1", "--out", out)
		if code != exitUsage || !strings.Contains(stderr, "--ttl ") || !strings.Contains(stderr, "whole milliseconds") {
			t.Errorf("--ttl %s: exit %d, want 2 naming --ttl\n%s%s", ttl, code, stdout, stderr)
		}
	}
}
