package realdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/fencecheck/fencecheck/history"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, "sqlite"
)

// sqliteSink is the fenced sink on an SQLite file, shared by goroutines and
// processes through WAL mode and a busy timeout. Transactions begin
// IMMEDIATE, taking the write lock at once, so a transaction that reads the
// fence holds it until it commits.
type sqliteSink struct {
	cfg SinkConfig
	db  *sql.DB
}

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS fences (
	resource TEXT PRIMARY KEY,
	fence INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
	resource TEXT NOT NULL,
	result_id TEXT NOT NULL,
	payload TEXT NOT NULL,
	task TEXT NOT NULL,
	token INTEGER NOT NULL,
	PRIMARY KEY (resource, result_id)
);`

// sqliteDSN is the URI that opens the database file at path. SQLite reads a
// file: URI's path percent-decoded and ends it at the first '?' or '#', so
// the path is escaped as a URI path (a '%', '?' or '#' in a folder's name
// would otherwise open another file); an absolute path gets the empty
// authority ("file:///..."), so that a path starting "//" is no host.
func sqliteDSN(path string) string {
	uri := "file:"
	if filepath.IsAbs(path) {
		uri += "//"
	}
	return uri + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(20000)&_pragma=journal_mode(wal)" +
		"&_pragma=synchronous(normal)&_txlock=immediate"
}

func openSQLite(c SinkConfig) (*sqliteSink, error) {
	db, err := sql.Open("sqlite", sqliteDSN(c.DSN))
	if err != nil {
		return nil, fmt.Errorf("realdb: opening sqlite %s: %w", c.DSN, err)
	}
	db.SetMaxOpenConns(2)
	return &sqliteSink{cfg: c, db: db}, nil
}

func createSQLite(ctx context.Context, c SinkConfig) (*sqliteSink, error) {
	if err := dropSQLite(c); err != nil {
		return nil, err
	}
	s, err := openSQLite(c)
	if err != nil {
		return nil, err
	}
	if _, err := s.db.ExecContext(ctx, sqliteSchema); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("realdb: creating the sqlite schema in %s: %w", c.DSN, err)
	}
	return s, nil
}

func dropSQLite(c SinkConfig) error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(c.DSN + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("realdb: removing the sqlite database: %w", err)
		}
	}
	return nil
}

func (s *sqliteSink) Close() error { return s.db.Close() }

func (s *sqliteSink) Advance(ctx context.Context, resource string) (int64, error) {
	var fence int64
	err := s.db.QueryRowContext(ctx, `INSERT INTO fences (resource, fence) VALUES (?, 1)
		ON CONFLICT (resource) DO UPDATE SET fence = fences.fence + 1 RETURNING fence`, resource).Scan(&fence)
	if err != nil {
		return 0, fmt.Errorf("realdb: sqlite advance %s: %w", resource, err)
	}
	return fence, nil
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func sqliteFence(ctx context.Context, q querier, resource string) (int64, error) {
	var fence int64
	err := q.QueryRowContext(ctx, `SELECT fence FROM fences WHERE resource = ?`, resource).Scan(&fence)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return fence, err
}

// sqlitePut inserts the result unless its id is taken, and says what the
// write's outcome is. Results never change once written, so reading the
// stored payload after a refused insert needs no further isolation.
func sqlitePut(ctx context.Context, q querier, resource string, token int64, resultID, payload, task string) (Outcome, error) {
	res, err := q.ExecContext(ctx, `INSERT INTO results (resource, result_id, payload, task, token)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (resource, result_id) DO NOTHING`,
		resource, resultID, payload, task, token)
	if err != nil {
		return "", err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return "", err
	}
	var stored string
	if n == 0 {
		err = q.QueryRowContext(ctx, `SELECT payload FROM results WHERE resource = ? AND result_id = ?`,
			resource, resultID).Scan(&stored)
		if err != nil {
			return "", err
		}
	}
	return decide(n == 1, stored, payload), nil
}

func (s *sqliteSink) Write(ctx context.Context, resource string, token int64, resultID, payload, task string) (Outcome, int64, error) {
	var out Outcome
	var fence int64
	var err error
	switch s.cfg.Kind {
	case Atomic, MaxToken, None:
		out, fence, err = s.writeTx(ctx, resource, token, resultID, payload, task)
	default:
		out, fence, err = s.writeCheckThenWrite(ctx, resource, token, resultID, payload, task)
	}
	if err != nil {
		return "", fence, fmt.Errorf("realdb: sqlite %s write %s/%s: %w", s.cfg.Kind, resource, resultID, err)
	}
	return out, fence, nil
}

// writeTx checks the token (by the sink's kind) and writes the result in one
// IMMEDIATE transaction: no advance can commit between the check and the
// write. Max-token raises the fence to a token above it in the same
// transaction when the write is accepted (a conflict raises nothing); none
// and check-then-write (whose check came before) check nothing.
func (s *sqliteSink) writeTx(ctx context.Context, resource string, token int64, resultID, payload, task string) (Outcome, int64, error) {
	s.cfg.window(ctx)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return "", 0, err
	}
	defer tx.Rollback()
	fence, err := sqliteFence(ctx, tx, resource)
	if err != nil {
		return "", 0, err
	}
	fenced, raise := s.cfg.check(fence, token)
	if fenced {
		return history.Fenced, fence, nil
	}
	out, err := sqlitePut(ctx, tx, resource, token, resultID, payload, task)
	if err != nil {
		return "", fence, err
	}
	if raise && out.Accepted() {
		if err := sqliteSetFence(ctx, tx, resource, token); err != nil {
			return "", fence, err
		}
	}
	return out, fence, tx.Commit()
}

func sqliteSetFence(ctx context.Context, q querier, resource string, fence int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO fences (resource, fence) VALUES (?, ?)
		ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence`, resource, fence)
	return err
}

// Raise sets the fence to token if it is below, in one IMMEDIATE transaction.
func (s *sqliteSink) Raise(ctx context.Context, resource string, token int64) (int64, bool, error) {
	fence, raised, err := func() (int64, bool, error) {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return 0, false, err
		}
		defer tx.Rollback()
		fence, err := sqliteFence(ctx, tx, resource)
		if err != nil || fence >= token {
			return fence, false, err
		}
		if err := sqliteSetFence(ctx, tx, resource, token); err != nil {
			return fence, false, err
		}
		return token, true, tx.Commit()
	}()
	if err != nil {
		return 0, false, fmt.Errorf("realdb: sqlite raise %s to %d: %w", resource, token, err)
	}
	return fence, raised, nil
}

// writeCheckThenWrite reads the fence in one statement and writes in
// another: the unsafe shortcut. A takeover between the two goes unnoticed by
// the write, but not by its report: the write's own transaction (writeTx,
// which checks nothing for this kind) reads the fence it commits under, and
// that fence, not the check's, is the one reported for an accepted write.
func (s *sqliteSink) writeCheckThenWrite(ctx context.Context, resource string, token int64, resultID, payload, task string) (Outcome, int64, error) {
	fence, err := sqliteFence(ctx, s.db, resource)
	if err != nil {
		return "", 0, err
	}
	if fence != token {
		return history.Fenced, fence, nil
	}
	return s.writeTx(ctx, resource, token, resultID, payload, task)
}

func (s *sqliteSink) Read(ctx context.Context, resource, resultID string) (string, bool, error) {
	var payload string
	err := s.db.QueryRowContext(ctx, `SELECT payload FROM results WHERE resource = ? AND result_id = ?`,
		resource, resultID).Scan(&payload)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("realdb: sqlite read %s/%s: %w", resource, resultID, err)
	}
	return payload, true, nil
}
