package realdb

import (
	"context"
	"flag"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TestReplayCounterexamples replays the model's counterexamples on the
// built-in coordinator and a real sink (SQLite, and PostgreSQL for
// ttl-only-lock), each twice: every answer the schedule states comes back
// the same, and the real history shows what the model found. Six are the
// campaign's (one per design the replay plays), as committed under histories/counterexamples; two are kept in
// testdata so that they stay when the campaign's change. ttl-only-lock.jsonl
// is an earlier campaign's (a worker crashes). In restart-mid-grant.jsonl
// the coordinator restarts while the advance of a grant it began is in
// flight, and the worker's retry makes a second advance: the history shows
// two advances and one open acquire, whose ok grants the second's token, so
// the first is played as an advance alone and the real acquire is driven at
// the second.
func TestReplayCounterexamples(t *testing.T) {
	committed := filepath.Join("..", "histories", "counterexamples")
	for _, tc := range []struct {
		name, path string
		want       []string // invariants the real history must violate
	}{
		// The stale write is let go at the model's apply line, after the
		// takeover's advance; the recorded apply event (written, having
		// seen fence 1, with the fence at 2) orders it after the advance.
		{"check-then-write", filepath.Join(committed, "check-then-write.jsonl"), []string{spec.Fencing}},
		{"grant-before-fence", filepath.Join(committed, "grant-before-fence.jsonl"), []string{spec.Fencing, spec.FenceBeforeGrant}},
		{"ttl-only-lock", filepath.Join(committed, "ttl-only-lock.jsonl"), []string{spec.Fencing}},
		// The write applied at the lease's deadline (tick 3 of ttl 3).
		{"reference", filepath.Join(committed, "reference.jsonl"), []string{spec.AbsoluteValidity}},
		// The forged token's write is accepted: by its number the newest,
		// so the history shows the sink out of its spec, not fencing.
		{"accept-higher-token", filepath.Join(committed, "accept-higher-token.jsonl"), []string{spec.LinearizableSink}},
		// The restarted coordinator grants at once: two valid leases.
		{"restart-no-grace", filepath.Join(committed, "restart-no-grace.jsonl"), []string{spec.ExclusiveLease}},
		{"ttl-only-lock-earlier", filepath.Join("testdata", "ttl-only-lock.jsonl"), []string{spec.Fencing}},
		{"restart-mid-grant", filepath.Join("testdata", "restart-mid-grant.jsonl"), []string{spec.Fencing}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var first []string
			for i := range 2 { // the second ttl-only-lock replay on PostgreSQL
				cfg := ReplayConfig{}
				if tc.name == "ttl-only-lock" && i == 1 {
					cfg.DB, cfg.DSN = Postgres, needPostgres(t)
				}
				res, err := Replay(context.Background(), h, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Reproduced() {
					t.Fatalf("not reproduced: %v", res.Mismatches)
				}
				got := map[string]bool{}
				var ids []string
				for _, v := range res.Report.Violations {
					if !got[v.Invariant] {
						ids = append(ids, v.Invariant)
					}
					got[v.Invariant] = true
				}
				for _, inv := range tc.want {
					if !got[inv] {
						t.Errorf("the real history does not violate %s: %v", inv, res.Report.Violations)
					}
				}
				if i == 0 {
					first = ids
					t.Logf("violates %v; notes %v", ids, res.Notes)
				} else if len(ids) != len(first) {
					t.Errorf("second replay violates %v, first %v: not deterministic", ids, first)
				}
			}
		})
	}
}

var (
	replayN    = flag.Int("replay.n", 60, "replay's differential test: runs per design and config")
	replaySeed = flag.Uint64("replay.seed", 1, "replay's differential test: the runs' seed")
	replayPG   = flag.Int("replay.pg", 2, "replay's differential test: runs per design on PostgreSQL (the rest on SQLite)")
)

// TestReplayAgreesWithTheModel is the replay's differential test: seeded
// random runs of every design it plays, at the default config (every fault)
// and at one with three workers, a lease of one tick and message delays,
// each replayed on the built-in coordinator and a real sink. Every answer
// the model gave comes back the same from the real system: the model and the
// real stack agree on each schedule, faults included. (Before the replay
// made its calls at the model's instants of decision, 65% of such runs at
// the default config did not reproduce.) A few are replayed on PostgreSQL.
func TestReplayAgreesWithTheModel(t *testing.T) {
	small := model.DefaultConfig()
	small.Workers, small.Ops, small.TTL, small.Delay = 3, 2, 1, 2
	runs := *replayN
	if testing.Short() {
		runs = min(runs, 10)
	}
	for _, d := range playables {
		name := d.name
		v, err := spec.LookupVariant(designs.All(), name)
		if err != nil {
			t.Fatal(err)
		}
		for c, cfg := range []model.Config{model.DefaultConfig(), small} {
			m, err := v.Machine(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range runs {
				seed := checker.RunSeed(*replaySeed+uint64(1000*c), i)
				run, _ := checker.RandomRun(m, seed, 60, 0)
				h := run.History(name, seed, nil, "")
				rc := ReplayConfig{Tick: time.Microsecond}
				if i < *replayPG && c == 0 {
					rc.DB, rc.DSN = Postgres, needPostgres(t)
				}
				res, err := Replay(context.Background(), h, rc)
				if err != nil {
					t.Fatalf("%s config %d run %d: %v", name, c, i, err)
				}
				if !res.Reproduced() {
					t.Errorf("%s config %d run %d (seed %d, %s): not reproduced: %v\nactions: %q", name, c, i, seed, rc.DB, res.Mismatches, h.Header.Actions)
				}
			}
		}
	}
}

// TestReplayRefusesWhatItCannotPlay: a schedule whose events are not what
// its trace gives on the model, that names no design, or with two
// coordinator replicas, is refused with an error that says which event (and
// its line) or which field.
func TestReplayRefusesWhatItCannotPlay(t *testing.T) {
	path := filepath.Join("testdata", "restart-mid-grant.jsonl")
	h, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := *h
	edited.Events = slices.Clone(h.Events)
	edited.Events[6].Value.Token = 3 // the second advance's
	if _, err := Replay(context.Background(), &edited, ReplayConfig{}); err == nil || !strings.Contains(err.Error(), "event 7 (line 8) differs") {
		t.Errorf("an edited event: %v", err)
	}
	anon := *h
	anon.Header.Variant = ""
	if _, err := Replay(context.Background(), &anon, ReplayConfig{}); err == nil || !strings.Contains(err.Error(), "names no design") {
		t.Errorf("no variant: %v", err)
	}
	split := *h
	split.Header.Config = []byte(strings.Replace(string(h.Header.Config), `"replicas":1`, `"replicas":2`, 1))
	if _, err := Replay(context.Background(), &split, ReplayConfig{}); err == nil || !strings.Contains(err.Error(), "replicas 2") {
		t.Errorf("two replicas: %v", err)
	}
}

// TestReplayNotesTheGrantedToken: an acquire the schedule left open is let
// go at its end, and its note names the token the real coordinator granted
// (it said "(token 0)", the acquire's invocation's, which names none).
func TestReplayNotesTheGrantedToken(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("..", "histories", "counterexamples", "check-then-write.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(context.Background(), h, ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	granted := regexp.MustCompile(`^w\d+'s acquire on \S+, left open by the schedule, completed ok, granted token [1-9]\d*$`)
	found := false
	for _, n := range res.Notes {
		if strings.Contains(n, "acquire") && strings.Contains(n, "left open") {
			found = true
			if !granted.MatchString(n) {
				t.Errorf("note %q does not name the granted token", n)
			}
		}
	}
	if !found {
		t.Fatalf("no note of an acquire left open: %q", res.Notes)
	}
}
