// Package real holds histories recorded on real systems by explore real, and
// checks them: a correct etcd + fenced-sink run shows nothing beyond what its
// header expects (absolute-validity at most).
package real

import (
	"slices"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// TestEtcdSample: etcd (3 members, the leader stopped and restarted mid-run)
// with the holders raising the fence to their lock key's create revision and
// an atomic SQLite sink. It follows the recording rule of docs/real-systems.md
// and spec.Check finds nothing.
func TestEtcdSample(t *testing.T) {
	h, err := history.ReadFile("etcd-atomic-leader-restart.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := spec.Check(h, spec.Options{})
	for _, v := range r.Violations {
		if !slices.Contains(h.Header.Expect, v.Invariant) {
			t.Errorf("unexpected %s on %s: %s", v.Invariant, v.Resource, v.Message)
		}
	}
	if len(r.Unknown) > 0 {
		t.Errorf("unknown: %v", r.Unknown)
	}
	// What the sample is for: the fault lines, the holders' own advances,
	// and a stale write fenced with the fence the sink saw.
	var crash, restart, advances, fenced bool
	tokens := map[string]int64{} // the token of each process's open write
	for _, e := range h.Events {
		switch {
		case e.F == history.Crash && e.Process == history.Nemesis:
			crash = true
		case e.F == history.Restart && e.Process == history.Nemesis:
			restart = true
		case e.F == history.Advance && e.Type == history.OK && strings.HasSuffix(e.Process, "/fence"):
			advances = true
		case e.F == history.Write && e.Type == history.Invoke:
			tokens[e.Process] = e.Value.Token
		case e.F == history.Write && e.Type == history.Fail && e.Value.Error == history.Fenced:
			fenced = fenced || (e.Value.HasFence && e.Value.Fence > tokens[e.Process])
		}
	}
	if !crash || !restart || !advances || !fenced {
		t.Errorf("crash %v, restart %v, holder advances %v, stale write fenced above its token %v", crash, restart, advances, fenced)
	}
}
