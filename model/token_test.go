package model_test

import (
	"math/rand/v2"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
)

// TestTokensWithinMaxToken checks Config.MaxToken on seeded random walks
// of every built-in design, under bounds rich in the faults that make a
// fence or a counter skip numbers (coordinator and sink restarts,
// duplicated messages, split brain): with no forgery, no fence, counter,
// lease or grant ever holds a token above MaxToken; with forgeries, no
// grant is ever given the forged token MaxToken+1, so that a forged write
// is never a guess of a token granted later (which no fence could tell
// from the holder's, and the judge would take for a stale write).
func TestTokensWithinMaxToken(t *testing.T) {
	bounds := []model.Config{
		{Workers: 2, Resources: 1, Replicas: 1, TTL: 2, Ops: 4, Grants: 3, InFlight: 3, Drops: 1, Dups: 2, Crashes: 1, Restarts: 3, SinkRestarts: 2},
		{Workers: 2, Resources: 2, Replicas: 2, TTL: 1, Ops: 4, Grants: 3, InFlight: 3, Drops: 2, Dups: 2, Restarts: 2, SinkRestarts: 1},
		{Workers: 3, Resources: 1, Replicas: 1, TTL: 2, Ops: 3, Grants: 4, InFlight: 3, Drops: 1, Dups: 1, Crashes: 1, Restarts: 2, Forgeries: 3},
	}
	highest := 0
	for _, c := range bounds {
		forged := uint8(c.MaxToken() + 1)
		for _, v := range designs.All() {
			m, err := v.Machine(c)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, 11))
			var acts []model.Action
			for walk := 0; walk < 300; walk++ {
				s := m.Init()
				for step := 0; step < 200; step++ {
					if acts = m.Enabled(&s, acts[:0]); len(acts) == 0 {
						break
					}
					a := acts[r.IntN(len(acts))]
					m.Next(&s, &a)
					for _, tok := range issued(&s, c) {
						if c.Forgeries == 0 && int(tok) > c.MaxToken() {
							t.Fatalf("%s %+v: a token %d above MaxToken %d, after %s", v.Name, c, tok, c.MaxToken(), a)
						}
						if c.Forgeries > 0 && tok == forged {
							t.Fatalf("%s %+v: a grant of the forged token %d, after %s", v.Name, c, tok, a)
						}
						highest = max(highest, int(tok))
					}
				}
			}
		}
	}
	if highest < 4 {
		t.Fatalf("the highest token seen is %d: the walks skip no number", highest)
	}
	t.Logf("highest token seen: %d", highest)
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
