package realdb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/fencecheck/fencecheck/history"
)

// pgSink is the fenced sink on PostgreSQL, in its own schema. It keeps a few
// idle connections for reuse; a connection that saw an error is closed.
type pgSink struct {
	cfg  SinkConfig
	conf *pgx.ConnConfig

	mu     sync.Mutex
	idle   []*pgx.Conn
	closed bool
}

// maxIdle bounds the connections a pgSink keeps open between calls.
const maxIdle = 4

func pgConfig(c SinkConfig) (*pgx.ConnConfig, error) {
	conf, err := pgx.ParseConfig(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("realdb: parsing the postgres DSN: %w", err)
	}
	conf.RuntimeParams["search_path"] = c.schema()
	return conf, nil
}

// CheckPostgres checks, before any run, that the PostgreSQL server of dsn
// can be reached: the DSN parses, and a connection is made and answers a
// ping (within checkWait).
func CheckPostgres(ctx context.Context, dsn string) error {
	conf, err := pgConfig(SinkConfig{DSN: dsn})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, conf)
	if err != nil {
		return fmt.Errorf("realdb: connecting to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("realdb: postgres does not answer: %w", err)
	}
	return nil
}

func openPostgres(ctx context.Context, c SinkConfig) (*pgSink, error) {
	conf, err := pgConfig(c)
	if err != nil {
		return nil, err
	}
	s := &pgSink{cfg: c, conf: conf}
	conn, err := s.get(ctx)
	if err != nil {
		return nil, err
	}
	s.put(conn, nil)
	return s, nil
}

func createPostgres(ctx context.Context, c SinkConfig) (*pgSink, error) {
	if err := dropPostgres(ctx, c); err != nil {
		return nil, err
	}
	s, err := openPostgres(ctx, c)
	if err != nil {
		return nil, err
	}
	schema := pgx.Identifier{c.schema()}.Sanitize()
	err = s.with(ctx, func(conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`;
			CREATE TABLE `+schema+`.fences (
				resource TEXT PRIMARY KEY,
				fence BIGINT NOT NULL
			);
			CREATE TABLE `+schema+`.results (
				resource TEXT NOT NULL,
				result_id TEXT NOT NULL,
				payload TEXT NOT NULL,
				task TEXT NOT NULL,
				token BIGINT NOT NULL,
				PRIMARY KEY (resource, result_id)
			)`)
		return err
	})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("realdb: creating postgres schema %s: %w", c.schema(), err)
	}
	return s, nil
}

func dropPostgres(ctx context.Context, c SinkConfig) error {
	conf, err := pgConfig(c)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, conf)
	if err != nil {
		return fmt.Errorf("realdb: connecting to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{c.schema()}.Sanitize()+` CASCADE`); err != nil {
		return fmt.Errorf("realdb: dropping postgres schema %s: %w", c.schema(), err)
	}
	return nil
}

func (s *pgSink) get(ctx context.Context) (*pgx.Conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("realdb: the postgres sink is closed")
	}
	if n := len(s.idle); n > 0 {
		conn := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return conn, nil
	}
	s.mu.Unlock()
	conn, err := pgx.ConnectConfig(ctx, s.conf)
	if err != nil {
		return nil, fmt.Errorf("realdb: connecting to postgres: %w", err)
	}
	return conn, nil
}

// put returns conn for reuse, or closes it if err is not nil or the sink
// already keeps enough.
func (s *pgSink) put(conn *pgx.Conn, err error) {
	s.mu.Lock()
	if err == nil && !s.closed && len(s.idle) < maxIdle {
		s.idle = append(s.idle, conn)
		conn = nil
	}
	s.mu.Unlock()
	if conn != nil {
		conn.Close(context.Background())
	}
}

func (s *pgSink) with(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := s.get(ctx)
	if err != nil {
		return err
	}
	err = fn(conn)
	s.put(conn, err)
	return err
}

func (s *pgSink) Close() error {
	s.mu.Lock()
	idle := s.idle
	s.idle, s.closed = nil, true
	s.mu.Unlock()
	var errs []error
	for _, conn := range idle {
		errs = append(errs, conn.Close(context.Background()))
	}
	return errors.Join(errs...)
}

func (s *pgSink) Advance(ctx context.Context, resource string) (int64, error) {
	var fence int64
	err := s.with(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `INSERT INTO fences (resource, fence) VALUES ($1, 1)
			ON CONFLICT (resource) DO UPDATE SET fence = fences.fence + 1 RETURNING fence`, resource).Scan(&fence)
	})
	if err != nil {
		return 0, fmt.Errorf("realdb: postgres advance %s: %w", resource, err)
	}
	return fence, nil
}

// pgQuerier is what *pgx.Conn and pgx.Tx share.
type pgQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgFence reads the resource's fence; with lock, it also takes a share lock
// on the fence's row, which Advance's update must wait for.
func pgFence(ctx context.Context, q pgQuerier, resource string, lock bool) (int64, error) {
	query := `SELECT fence FROM fences WHERE resource = $1`
	if lock {
		query += ` FOR SHARE`
	}
	var fence int64
	err := q.QueryRow(ctx, query, resource).Scan(&fence)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return fence, err
}

// pgPut inserts the result unless its id is taken, and says what the write's
// outcome is. Results never change once written, so reading the stored
// payload after a refused insert needs no further isolation.
func pgPut(ctx context.Context, q pgQuerier, resource string, token int64, resultID, payload, task string) (Outcome, error) {
	var inserted bool
	err := q.QueryRow(ctx, `INSERT INTO results (resource, result_id, payload, task, token)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (resource, result_id) DO NOTHING RETURNING true`,
		resource, resultID, payload, task, token).Scan(&inserted)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", err
	}
	var stored string
	if !inserted {
		err = q.QueryRow(ctx, `SELECT payload FROM results WHERE resource = $1 AND result_id = $2`,
			resource, resultID).Scan(&stored)
		if err != nil {
			return "", err
		}
	}
	return decide(inserted, stored, payload), nil
}

func (s *pgSink) Write(ctx context.Context, resource string, token int64, resultID, payload, task string) (Outcome, int64, error) {
	var out Outcome
	var fence int64
	err := s.with(ctx, func(conn *pgx.Conn) error {
		var err error
		if s.cfg.Kind == CheckThenWrite {
			out, fence, err = s.writeCheckThenWrite(ctx, conn, resource, token, resultID, payload, task)
		} else {
			out, fence, err = s.writeTx(ctx, conn, resource, token, resultID, payload, task)
		}
		return err
	})
	if err != nil {
		return "", fence, fmt.Errorf("realdb: postgres %s write %s/%s: %w", s.cfg.Kind, resource, resultID, err)
	}
	return out, fence, nil
}

// writeTx checks the token (by the sink's kind) and writes the result in one
// transaction that holds a lock on the fence's row — a share lock for
// atomic, none and check-then-write (whose check came before), which an
// advance must wait for; an update lock for max-token, which may raise the
// fence in the same transaction (for an accepted write).
func (s *pgSink) writeTx(ctx context.Context, conn *pgx.Conn, resource string, token int64, resultID, payload, task string) (Outcome, int64, error) {
	s.cfg.window(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var fence int64
	if s.cfg.Kind == MaxToken {
		if _, err := tx.Exec(ctx, `INSERT INTO fences (resource, fence) VALUES ($1, 0) ON CONFLICT (resource) DO NOTHING`, resource); err != nil {
			return "", 0, err
		}
		err = tx.QueryRow(ctx, `SELECT fence FROM fences WHERE resource = $1 FOR UPDATE`, resource).Scan(&fence)
	} else {
		fence, err = pgFence(ctx, tx, resource, true)
	}
	if err != nil {
		return "", 0, err
	}
	fenced, raise := s.cfg.check(fence, token)
	if fenced {
		return history.Fenced, fence, nil
	}
	out, err := pgPut(ctx, tx, resource, token, resultID, payload, task)
	if err != nil {
		return "", fence, err
	}
	if raise && out.Accepted() {
		if _, err := tx.Exec(ctx, `UPDATE fences SET fence = $2 WHERE resource = $1`, resource, token); err != nil {
			return "", fence, err
		}
	}
	return out, fence, tx.Commit(ctx)
}

// Raise sets the fence to token if it is below, in one statement.
func (s *pgSink) Raise(ctx context.Context, resource string, token int64) (int64, bool, error) {
	var fence int64
	var raised bool
	err := s.with(ctx, func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, `INSERT INTO fences (resource, fence) VALUES ($1, $2)
			ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence WHERE fences.fence < excluded.fence
			RETURNING fence`, resource, token).Scan(&fence)
		if err == nil {
			raised = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		// Not raised: the fence was at or above token, and fences only rise.
		return conn.QueryRow(ctx, `SELECT fence FROM fences WHERE resource = $1`, resource).Scan(&fence)
	})
	if err != nil {
		return 0, false, fmt.Errorf("realdb: postgres raise %s to %d: %w", resource, token, err)
	}
	return fence, raised, nil
}

// writeCheckThenWrite reads the fence in one statement and writes in
// another, each its own transaction: the unsafe shortcut. The write's own
// transaction (writeTx, which checks nothing for this kind) holds a share
// lock on the fence it commits under, and that fence, not the check's, is
// the one reported for an accepted write.
func (s *pgSink) writeCheckThenWrite(ctx context.Context, conn *pgx.Conn, resource string, token int64, resultID, payload, task string) (Outcome, int64, error) {
	fence, err := pgFence(ctx, conn, resource, false)
	if err != nil {
		return "", 0, err
	}
	if fence != token {
		return history.Fenced, fence, nil
	}
	return s.writeTx(ctx, conn, resource, token, resultID, payload, task)
}

func (s *pgSink) Read(ctx context.Context, resource, resultID string) (string, bool, error) {
	var payload string
	var found bool
	err := s.with(ctx, func(conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, `SELECT payload FROM results WHERE resource = $1 AND result_id = $2`,
			resource, resultID).Scan(&payload)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("realdb: postgres read %s/%s: %w", resource, resultID, err)
	}
	return payload, found, nil
}
