package realdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

var testSchemas atomic.Int64

// sinkConfig returns a fresh sink configuration on db, of kind.
func sinkConfig(t *testing.T, db, kind string) SinkConfig {
	t.Helper()
	switch db {
	case SQLite:
		return SinkConfig{DB: SQLite, Kind: kind, DSN: filepath.Join(t.TempDir(), "sink.db")}
	case Postgres:
		return SinkConfig{DB: Postgres, Kind: kind, DSN: needPostgres(t),
			Schema: fmt.Sprintf("fencecheck_test_%d_%d", os.Getpid(), testSchemas.Add(1))}
	}
	t.Fatalf("unknown db %q", db)
	return SinkConfig{}
}

// createSink creates a fresh sink and removes it at the end of the test.
func createSink(t *testing.T, c SinkConfig) Sink {
	t.Helper()
	ctx := context.Background()
	s, err := Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := Drop(ctx, c); err != nil {
			t.Error(err)
		}
	})
	return s
}

func forEachSink(t *testing.T, f func(t *testing.T, db, kind string)) {
	for _, db := range []string{SQLite, Postgres} {
		for _, kind := range []string{Atomic, CheckThenWrite} {
			t.Run(db+"/"+kind, func(t *testing.T) { f(t, db, kind) })
		}
	}
}

func TestSinkSemantics(t *testing.T) {
	forEachSink(t, func(t *testing.T, db, kind string) {
		ctx := context.Background()
		s := createSink(t, sinkConfig(t, db, kind))
		advance := func(r string, want int64) {
			t.Helper()
			got, err := s.Advance(ctx, r)
			if err != nil || got != want {
				t.Fatalf("Advance(%s) = %d, %v; want %d", r, got, err, want)
			}
		}
		write := func(r string, token int64, id, payload string, want Outcome) {
			t.Helper()
			got, _, err := s.Write(ctx, r, token, id, payload, id)
			if err != nil || got != want {
				t.Fatalf("Write(%s, token %d, %s, %q) = %q, %v; want %q", r, token, id, payload, got, err, want)
			}
		}
		read := func(r, id, want string, wantOK bool) {
			t.Helper()
			got, ok, err := s.Read(ctx, r, id)
			if err != nil || got != want || ok != wantOK {
				t.Fatalf("Read(%s, %s) = %q, %v, %v; want %q, %v", r, id, got, ok, err, want, wantOK)
			}
		}
		write("a", 1, "t1", "x", history.Fenced) // the fence starts at 0
		read("a", "t1", "", false)
		advance("a", 1)
		advance("b", 1) // fences are per resource
		write("a", 1, "t1", "x", history.Written)
		read("a", "t1", "x", true)
		write("a", 1, "t1", "x", history.Replayed)
		write("a", 1, "t1", "y", history.Conflict)
		write("a", 2, "t2", "x", history.Fenced) // a bigger number of the worker's own
		advance("a", 2)
		write("a", 1, "t2", "x", history.Fenced) // the old holder, after takeover
		write("a", 2, "t2", "z", history.Written)
		write("b", 1, "t2", "w", history.Written) // b is untouched by a's takeover
		read("b", "t2", "w", true)
		read("a", "t2", "z", true)
		read("a", "t1", "x", true)
	})
}

// TestSinkWindow advances the fence inside the write's window, as a takeover
// between the check and the write would: check-then-write lets the stale
// write through, atomic (whose window comes before its transaction) fences
// it; both report the fence at their transaction.
func TestSinkWindow(t *testing.T) {
	forEachSink(t, func(t *testing.T, db, kind string) {
		ctx := context.Background()
		c := sinkConfig(t, db, kind)
		coord := createSink(t, c)
		if _, err := coord.Advance(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		c.Window = func(ctx context.Context) {
			if _, err := coord.Advance(ctx, "a"); err != nil {
				t.Error(err)
			}
		}
		w, err := Open(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		got, fence, err := w.Write(ctx, "a", 1, "t1", "stale", "t1")
		if err != nil {
			t.Fatal(err)
		}
		want := Outcome(history.Fenced)
		if kind == CheckThenWrite {
			want = history.Written
		}
		if got != want {
			t.Fatalf("write with token 1 and the fence advanced to 2 in the window: %q, want %q", got, want)
		}
		// Every kind reports the fence the write was decided or committed
		// under: 2. For check-then-write that is what exposes the stale
		// write (accepted with its token below the reported fence).
		if fence != 2 {
			t.Fatalf("%s write reported fence %d, want 2 (the fence it committed under)", kind, fence)
		}
	})
}

// TestSinkRaiseAndKinds: Raise (the holder's advance), the max-token and none
// sinks, and the fence every write reports, on both databases.
func TestSinkRaiseAndKinds(t *testing.T) {
	for _, db := range []string{SQLite, Postgres} {
		for _, kind := range SinkKinds {
			t.Run(db+"/"+kind, func(t *testing.T) {
				ctx := context.Background()
				s := createSink(t, sinkConfig(t, db, kind))
				raise := func(token, want int64, wantRaised bool) {
					t.Helper()
					got, raised, err := s.Raise(ctx, "a", token)
					if err != nil || got != want || raised != wantRaised {
						t.Fatalf("Raise(a, %d) = %d, %v, %v; want %d, %v", token, got, raised, err, want, wantRaised)
					}
				}
				write := func(token int64, id string, want Outcome, wantFence int64) {
					t.Helper()
					got, fence, err := s.Write(ctx, "a", token, id, "p", id)
					if err != nil || got != want || fence != wantFence {
						t.Fatalf("%s: Write(a, token %d, %s) = %q, fence %d, %v; want %q, fence %d", kind, token, id, got, fence, err, want, wantFence)
					}
				}
				raise(5, 5, true)
				raise(3, 5, false) // a stale holder: no-op
				raise(5, 5, false)
				switch kind {
				case Atomic, CheckThenWrite:
					write(4, "t1", history.Fenced, 5)
					write(7, "t1", history.Fenced, 5)
					write(5, "t1", history.Written, 5)
				case MaxToken:
					write(4, "t1", history.Fenced, 5)
					write(7, "t1", history.Written, 5) // raises the fence to 7
					write(5, "t2", history.Fenced, 7)
					write(7, "t3", history.Written, 7) // the fence itself passes
					raise(6, 7, false)
					// A bigger token with another payload for t1: a
					// conflict, which raises nothing.
					if got, fence, err := s.Write(ctx, "a", 9, "t1", "q", "t1"); err != nil || got != history.Conflict || fence != 7 {
						t.Fatalf("Write(a, token 9, t1, q) = %q, fence %d, %v; want conflict, fence 7", got, fence, err)
					}
					raise(8, 8, true)
				case None:
					write(4, "t1", history.Written, 5)
					write(7, "t2", history.Written, 5)
				}
			})
		}
	}
}

func TestSinkConfigErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []SinkConfig{
		{DB: "oracle", Kind: Atomic, DSN: "x"},
		{DB: SQLite, Kind: "optimistic", DSN: "x"},
		{DB: SQLite, Kind: Atomic},
	} {
		if _, err := Open(ctx, c); err == nil {
			t.Errorf("Open(%+v) succeeded", c)
		}
	}
}
