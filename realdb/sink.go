// Package realdb runs the lease + fencing protocol for real: a fenced write
// target on a real database (SQLite or PostgreSQL), a coordinator that grants
// leases by its own monotonic clock, and workers — goroutines and separate OS
// processes stopped with SIGSTOP — whose pauses outlast their leases. It
// records what happens as a history (package history) and checks it with
// spec.Check.
//
// The write target comes in four kinds: "atomic" checks the fencing token and
// writes the result in one transaction, as the protocol requires;
// "check-then-write" reads the fence in one statement and writes in another,
// the unsafe shortcut that a takeover between the two steps defeats;
// "max-token" accepts a token at or above the fence and raises the fence to
// it in the same transaction (when the write is accepted: a conflicting
// result raises nothing), for services with no coordinator to advance
// the fence (the holder's token is the fence's next value); "none" checks
// nothing (a lock alone). Every write reports the fence it saw (for
// check-then-write's accepted writes, the fence at its own transaction).
package realdb

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fencecheck/fencecheck/history"
)

// Database and sink kinds, as Config and SinkConfig name them.
const (
	SQLite         = "sqlite"
	Postgres       = "postgres"
	Atomic         = "atomic"
	CheckThenWrite = "check-then-write"
	MaxToken       = "max-token"
	None           = "none"
)

// SinkKinds lists the sink kinds.
var SinkKinds = []string{Atomic, CheckThenWrite, MaxToken, None}

// Outcome is the answer of a write: history.Written or history.Replayed when
// it was accepted, history.Fenced or history.Conflict when it was rejected.
type Outcome string

// Accepted reports whether the write was accepted (written or replayed).
func (o Outcome) Accepted() bool { return o == history.Written || o == history.Replayed }

// Sink is a fenced write target. Every resource has its own fence, starting
// at 0; results are keyed by resource and result id and never change once
// written.
type Sink interface {
	// Advance raises the resource's fence and returns the new value.
	Advance(ctx context.Context, resource string) (int64, error)
	// Raise sets the resource's fence to token if it is below, atomically,
	// and returns the fence after it and whether it raised it: the advance a
	// holder makes itself when no coordinator does (package lease).
	Raise(ctx context.Context, resource string, token int64) (fence int64, raised bool, err error)
	// Write stores payload under resultID if token passes the sink's check
	// (atomic, check-then-write: token is the current fence; max-token: token
	// is at or above it, and the fence is raised to it; none: always):
	// written if the result was absent, replayed if it holds the same
	// payload, conflict if it holds another; fenced if the token fails the
	// check. It returns the fence the token was compared against, except
	// for check-then-write's accepted writes: the fence read in the write's
	// own transaction, the one it committed under, which a takeover between
	// the check and the write leaves above the token.
	Write(ctx context.Context, resource string, token int64, resultID, payload, task string) (Outcome, int64, error)
	// Read returns the payload stored under resultID, and whether there is one.
	Read(ctx context.Context, resource, resultID string) (payload string, ok bool, err error)
	// Close releases the sink's connections.
	Close() error
}

// SinkConfig says which write target to open.
type SinkConfig struct {
	// DB is SQLite or Postgres.
	DB string
	// DSN locates the database: for SQLite the path of the database file,
	// for PostgreSQL a connection string (URL or key=value).
	DSN string
	// Schema is the PostgreSQL schema that holds the sink's tables (default
	// "fencecheck"); unused for SQLite.
	Schema string
	// Kind is Atomic, CheckThenWrite, MaxToken or None.
	Kind string
	// Window, if set, is called inside every write at the sink's weak point:
	// between reading the fence and writing the result for CheckThenWrite,
	// just before the transaction for Atomic (which has no such window). It
	// runs while the sink holds no lock. A driver uses it to pause a worker
	// there.
	Window func(ctx context.Context) `json:"-"`
}

func (c SinkConfig) schema() string {
	if c.Schema == "" {
		return "fencecheck"
	}
	return c.Schema
}

func (c SinkConfig) validate() error {
	switch {
	case c.DB != SQLite && c.DB != Postgres:
		return fmt.Errorf("realdb: unknown database %q (want %s or %s)", c.DB, SQLite, Postgres)
	case !slices.Contains(SinkKinds, c.Kind):
		return fmt.Errorf("realdb: unknown sink %q (want one of %v)", c.Kind, SinkKinds)
	case c.DSN == "":
		return errors.New("realdb: the sink needs a DSN")
	}
	return nil
}

// Create makes the sink's storage empty and fresh (for PostgreSQL it drops
// and recreates the schema) and opens the sink.
func Create(ctx context.Context, c SinkConfig) (Sink, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.DB == SQLite {
		return createSQLite(ctx, c)
	}
	return createPostgres(ctx, c)
}

// Open opens a sink whose storage Create has made.
func Open(ctx context.Context, c SinkConfig) (Sink, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.DB == SQLite {
		return openSQLite(c)
	}
	return openPostgres(ctx, c)
}

// Drop removes the sink's storage: the SQLite file, or the PostgreSQL schema.
func Drop(ctx context.Context, c SinkConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	if c.DB == SQLite {
		return dropSQLite(c)
	}
	return dropPostgres(ctx, c)
}

// check is the sink's check of token against the fence it read in the
// write's transaction: whether the write is fenced, and whether the fence
// is raised to token if the write is accepted (MaxToken). Atomic passes the fence itself,
// MaxToken any token at or above it; CheckThenWrite checked before the
// transaction, and None checks nothing.
func (c SinkConfig) check(fence, token int64) (fenced, raise bool) {
	switch c.Kind {
	case Atomic:
		return fence != token, false
	case MaxToken:
		return token < fence, token > fence
	}
	return false, false
}

// window calls the hook, if any.
func (c SinkConfig) window(ctx context.Context) {
	if c.Window != nil {
		c.Window(ctx)
	}
}

// decide gives the outcome of an idempotent insert: written if it inserted,
// otherwise replayed or conflict by the payload already stored.
func decide(inserted bool, stored, payload string) Outcome {
	switch {
	case inserted:
		return history.Written
	case stored == payload:
		return history.Replayed
	}
	return history.Conflict
}
