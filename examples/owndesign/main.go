// Command owndesign is fencecheck's explore with one design of its own
// registered beside the built-in catalogue: a lock-delay after a holder's
// failure, on a target that checks no token. It is the example of
// docs/your-own-variant.md.
package main

import (
	"os"

	"github.com/fencecheck/fencecheck/explore"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// delay is how many ticks a resource stays ungranted after its holder's
// lease expired without a release.
const delay = 2

// lockDelay is the design: three decisions changed, every other one the
// reference's.
var lockDelay = spec.Variant{
	Name:    "my-lock-delay",
	Summary: "after a holder's lease expires, its lock stays ungranted for 2 ticks; the target checks no token",
	Design: model.Design{
		// Each grant and renew arms the resource's timer for the deadline
		// plus the delay; a clean release disarms it.
		OnLease: func(e model.LeaseEvent, ru model.Regs, l model.Lease, _ int) model.Regs {
			if e == model.LeaseReleased {
				ru.T = 0
			} else {
				ru.T = model.Clamp(int(l.Left) + delay)
			}
			return ru
		},
		// No grant while the timer runs (nor during the reference's grace
		// period after a restart).
		Hold: func(u, ru model.Regs) bool { return model.RefHold(u, ru) || ru.T > 0 },
		// The target writes whatever it is sent.
		Check: func(model.SinkView, model.Msg) uint8 { return model.RepOK },
	},
	// The hope: the delay drains a failed holder's writes, so no stale
	// write lands (only the reference's non-guarantee remains).
	Expect: spec.Expectation{Violates: spec.NonGuarantee},
	Why:    "a lock-delay instead of a fencing token",
}

func main() { os.Exit(explore.Main(os.Args, lockDelay)) }
