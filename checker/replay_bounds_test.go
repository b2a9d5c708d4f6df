package checker

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/model"
)

// TestEnabledActionsInBounds: every action any built-in design enables,
// on random runs at the default config and at two replicas, names only
// workers, resources and replicas its config has, so inBounds refuses no
// trace a machine can record; and it refuses each number one past them.
func TestEnabledActionsInBounds(t *testing.T) {
	walked := 0
	for _, c := range []model.Config{model.DefaultConfig(), func() model.Config {
		c := model.DefaultConfig()
		c.Replicas, c.Workers, c.Resources = 2, 3, 1
		return c
	}()} {
		for _, v := range designs.All() {
			m, err := v.Machine(c)
			if err != nil {
				continue // a design that does not take this config
			}
			walked++
			rng := rand.New(rand.NewPCG(uint64(len(v.Name)), 7))
			var buf []model.Action
			for range 40 {
				s := m.Init()
				for range 80 {
					buf = m.Enabled(&s, buf[:0])
					if len(buf) == 0 {
						break
					}
					for _, a := range buf {
						if err := inBounds(c, a); err != nil {
							t.Fatalf("%s: enabled, but %v", v.Name, err)
						}
					}
					a := buf[rng.IntN(len(buf))]
					m.Next(&s, &a)
				}
			}
		}
	}
	if walked < len(designs.All()) {
		t.Fatalf("only %d runs of designs", walked)
	}
	c := model.DefaultConfig()
	for _, text := range []string{"acquire w=2 r=0 c=0", "acquire w=0 r=2 c=0", "acquire w=0 r=0 c=1",
		"deliver acquire-rep w=2 r=0", "deliver advance-req w=0 r=2", "deliver acquire-req w=0 r=0 c=1"} {
		a, err := model.ParseAction(text)
		if err != nil {
			t.Fatal(err)
		}
		if err := inBounds(c, a); err == nil || !strings.Contains(err.Error(), "but the config has") {
			t.Errorf("%s: %v", text, err)
		}
	}
}
