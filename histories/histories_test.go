// Package histories holds recorded histories — the source article's five
// checks (seed/) and the shrunk counterexample of every unsafe variant
// (counterexamples/) — and the tests that replay them.
package histories

import (
	"bytes"
	"flag"
	"github.com/fencecheck/fencecheck/designs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

var update = flag.Bool("update", false, "rewrite the seed histories from their scripts, and the counterexamples and docs/variants/ pages from the default campaign")

// scenario is one of the article's five checks, as a scripted run of the
// reference protocol.
type scenario struct {
	file, note string
	config     model.Config
	steps      []string
	expect     []string
}

func seedConfig() model.Config {
	return model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 6, Grants: 3, InFlight: 3}
}

// acquire is the script of worker w acquiring job-1 and getting the reply.
func acquire(w string) []string {
	return []string{"acquire w=" + w + " r=0", "deliver acquire-req w=" + w, "deliver advance-req", "deliver advance-rep",
		"deliver acquire-rep w=" + w}
}

func write(w string) []string {
	return []string{"write w=" + w, "deliver write-req w=" + w, "deliver write-rep w=" + w}
}

func ticks(n int) []string { return slices.Repeat([]string{"tick"}, n) }

var scenarios = []scenario{
	{
		file: "1-renew-at-deadline.jsonl",
		note: "check 1: a renew exactly at the TTL boundary is rejected",
		steps: slices.Concat(acquire("0"), ticks(3),
			[]string{"renew w=0", "deliver renew-req w=0", "deliver renew-rep w=0"}),
		expect: []string{},
	},
	{
		file: "2-expired-not-taken-over.jsonl",
		note: "check 2: the lease expired but nobody took over: the stale token=1 write still gets " +
			"through (absolute validity is not a guarantee of plain fencing)",
		steps:  slices.Concat(acquire("0"), []string{"pause w=0"}, ticks(4), []string{"resume w=0"}, write("0")),
		expect: []string{spec.AbsoluteValidity},
	},
	{
		file: "3-takeover-fences-stale-write.jsonl",
		note: "check 3: after takeover to token=2 the token=1 write is rejected",
		steps: slices.Concat(acquire("0"), []string{"pause w=0"}, ticks(3), acquire("1"),
			[]string{"resume w=0"}, write("0")),
		expect: []string{},
	},
	{
		file: "4-replay-and-conflict.jsonl",
		note: "check 4: replaying the same result succeeds; a conflicting payload fails",
		steps: slices.Concat(acquire("0"), write("0"), write("0"),
			[]string{"release w=0", "deliver release-req w=0", "deliver release-rep w=0"},
			acquire("1"), write("1")),
		expect: []string{},
	},
	{
		file: "5-coordinator-restart.jsonl",
		note: "check 5: after a coordinator restart the sink's generation is not reset: tokens keep " +
			"increasing and the old write stays rejected",
		config: model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 3, Ops: 6, Grants: 3, InFlight: 3,
			Restarts: 1},
		steps: slices.Concat(acquire("0"), []string{"pause w=0", "restart c=0"}, ticks(3), acquire("1"),
			[]string{"resume w=0"}, write("0")),
		expect: []string{},
	},
}

func (s scenario) record(t *testing.T) []byte {
	cfg := s.config
	if cfg.Workers == 0 {
		cfg = seedConfig()
	}
	m, err := model.New(cfg, model.Design{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := checker.Script(m, s.steps)
	if err != nil {
		t.Fatalf("%s: %v", s.file, err)
	}
	var b bytes.Buffer
	if err := history.Encode(&b, run.History("reference", 0, s.expect, s.note)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSeedHistoriesAreCurrent proves each committed seed history is what its
// script produces today; -update rewrites them.
func TestSeedHistoriesAreCurrent(t *testing.T) {
	for _, s := range scenarios {
		got := s.record(t)
		path := filepath.Join("seed", s.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./histories -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: its script now records\n%s", path, got)
		}
	}
}

// TestReplayEveryHistory replays every history under this folder and
// compares its verdicts with the header's expect: model histories are
// re-executed event for event and judged on states as well as checked as
// histories.
func TestReplayEveryHistory(t *testing.T) {
	files, err := filepath.Glob("*/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no histories found (%v)", err)
	}
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			h, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if h.Header.Expect == nil {
				t.Fatal("header has no expect")
			}
			v, err := checker.CheckHistory(h, spec.Options{}, designs.All())
			if err != nil {
				t.Fatal(err)
			}
			if v.Run != nil && !v.Reproduced {
				t.Fatalf("the model does not reproduce it: %s", v.Mismatch)
			}
			got, want := v.Violated(), spec.SetOf(h.Header.Expect...)
			if got != want {
				t.Errorf("violated %v, header expects %v", got.IDs(), want.IDs())
			}
			if hist := spec.SetOf(ids(v.Report)...); hist != want && strings.HasPrefix(path, "seed") {
				t.Errorf("the history check alone (explore check) finds %v, header expects %v", hist.IDs(), want.IDs())
			}
		})
	}
}

func ids(r spec.Report) []string {
	var ids []string
	for _, v := range r.Violations {
		ids = append(ids, v.Invariant)
	}
	return ids
}
