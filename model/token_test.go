package model_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
)

// TestTokensWithinMaxToken checks Machine.MaxToken on seeded random walks
// of every built-in design, under bounds rich in the faults that make a
// fence or a counter skip numbers (coordinator and sink restarts,
// duplicated messages, split brain), and of a design of its own whose
// counter counts in threes: with no forgery, no fence, counter, lease or
// grant ever holds a token above MaxToken; with forgeries, no grant is
// ever given the forged token MaxToken+1, so that a forged write is never
// a guess of a token granted later (which no fence could tell from the
// holder's, and the judge would take for a stale write).
func TestTokensWithinMaxToken(t *testing.T) {
	bounds := []model.Config{
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Drops: 1, Dups: 2, Crashes: 1, Restarts: 3, SinkRestarts: 2},
		{Workers: 2, Resources: 2, Replicas: 2, TTL: 1, Ops: 4, Grants: 3, InFlight: 3, Drops: 2, Dups: 2, Restarts: 2, SinkRestarts: 1},
		{Workers: 3, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 4, InFlight: 3, Drops: 1, Dups: 1, Crashes: 1, Restarts: 2, Forgeries: 3},
	}
	highest := 0
	for _, c := range bounds {
		for _, v := range designs.All() {
			m, err := v.Machine(c)
			if err != nil {
				t.Fatal(err)
			}
			if m.MaxToken() != c.MaxToken() {
				t.Fatalf("%s: MaxToken %d, want Config.MaxToken %d: a built-in design's rules raise a token by one", v.Name, m.MaxToken(), c.MaxToken())
			}
			highest = max(highest, walkTokens(t, v.Name, m, 300))
		}
	}
	if highest < 4 {
		t.Fatalf("the highest token seen is %d: the walks skip no number", highest)
	}
	t.Logf("highest token seen: %d", highest)

	// Counting in threes, grant 3's token is Config.MaxToken+1 here: the
	// forged token unless MaxToken counts the design's step.
	threes := model.Design{Tokens: model.CounterFirst, NextToken: func(c uint8) uint8 { return c + 3 }}
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 1, Ops: 2, Grants: 3, InFlight: 2, Dups: 1, Forgeries: 1}
	m, err := model.New(c, threes)
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxToken() != 3*c.MaxToken() || 3*c.Grants != c.MaxToken()+1 {
		t.Fatalf("MaxToken %d, want 3 × %d", m.MaxToken(), c.MaxToken())
	}
	if h := walkTokens(t, "threes", m, 2000); h != 3*c.Grants {
		t.Fatalf("the highest token seen is %d, want grant %d's %d", h, c.Grants, 3*c.Grants)
	}
}

// walkTokens runs seeded random walks of m and fails t if a token passes
// m.MaxToken (with no forgery) or a grant gets the forged token (the
// token of the forgeries m offers, which must be MaxToken+1); it returns
// the highest token seen.
func walkTokens(t *testing.T, name string, m *model.Machine, walks int) int {
	t.Helper()
	c := m.Config
	forged, highest := uint8(m.MaxToken()+1), 0
	r := rand.New(rand.NewPCG(7, 11))
	var acts []model.Action
	for range walks {
		s := m.Init()
		for range 200 {
			if acts = m.Enabled(&s, acts[:0]); len(acts) == 0 {
				break
			}
			for _, a := range acts {
				if a.Kind == model.Forge && a.Token > s.Workers[a.Worker].Token && a.Token != forged {
					t.Fatalf("%s %+v: a forgery of token %d, want MaxToken+1 = %d", name, c, a.Token, forged)
				}
			}
			a := acts[r.IntN(len(acts))]
			m.Next(&s, &a)
			for _, tok := range issued(&s, c) {
				if c.Forgeries == 0 && int(tok) > m.MaxToken() {
					t.Fatalf("%s %+v: a token %d above MaxToken %d, after %s", name, c, tok, m.MaxToken(), a)
				}
				if c.Forgeries > 0 && tok == forged {
					t.Fatalf("%s %+v: a grant of the forged token %d, after %s", name, c, tok, a)
				}
				highest = max(highest, int(tok))
			}
		}
	}
	return highest
}

// TestMaxTokenCountsTheDesignsStep: a design whose fence moves in twos
// doubles the bound, and one whose tokens could pass a byte is refused
// with the step named.
func TestMaxTokenCountsTheDesignsStep(t *testing.T) {
	c := model.Config{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 2, Grants: 2, InFlight: 2}
	twos := model.Design{Advance: func(f, to uint8) uint8 {
		if to == 0 {
			return f + 2
		}
		return max(f, to)
	}}
	if m, err := model.New(c, twos); err != nil || m.MaxToken() != 2*c.MaxToken() {
		t.Fatalf("fence in twos: %v, MaxToken %d, want %d", err, m.MaxToken(), 2*c.MaxToken())
	}
	c.Ops = 16 // Config.MaxToken 34: in tens, 340
	tens := model.Design{Tokens: model.CounterFirst, NextToken: func(c uint8) uint8 { return c + 10 }}
	if _, err := model.New(c, tens); err == nil || !strings.Contains(err.Error(), "raises a token by up to 10") {
		t.Fatalf("counter in tens: %v, want the step named", err)
	}
}

// issued lists the tokens of s's grants, leases, deduplication records and
// counters, and (with no forgery) its sink's fences.
func issued(s *model.State, c model.Config) []uint8 {
	var out []uint8
	for r := range c.Resources {
		for g := 1; g <= int(s.Ghost[r].Grants); g++ {
			out = append(out, s.Ghost[r].Grant[g].Token)
		}
		for rep := range c.Replicas {
			co := &s.Coord[rep]
			out = append(out, co.Lease[r].Token, co.Counter[r])
			for w := range c.Workers {
				out = append(out, co.Dedup[r][w].Token)
			}
		}
		if c.Forgeries == 0 {
			out = append(out, s.Sink.Fence[r])
		}
	}
	return out
}
