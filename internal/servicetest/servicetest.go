// Package servicetest starts, for tests, the real services they run
// against: a throwaway server per test, stopped when the test ends.
package servicetest

import (
	"context"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/lease/redisserver"
)

// Redis starts a throwaway redis-server (installing Debian's package first
// when missing, as root), stopped when the test ends. Without one the test
// fails: it is never skipped.
func Redis(t testing.TB) *redisserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := redisserver.Start(ctx)
	if err != nil {
		t.Fatalf("no redis-server for the test (install Debian's redis-server): %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv
}
