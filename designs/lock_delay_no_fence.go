package designs

import (
	"fmt"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// defaultLockDelay is the catalogue's lock-delay: how long a resource stays
// ungranted after its holder's lease expired without a release.
const defaultLockDelay = 2

// LockDelayNoFence is Chubby's and Consul's lock-delay, on a target that
// checks no token: after a holder's lease expires (not on a clean
// release), the lock cannot be granted for defaultLockDelay ticks.
var LockDelayNoFence = LockDelay(defaultLockDelay)

// LockDelay is lock-delay-no-fence with a lock-delay of lockDelay ticks.
func LockDelay(lockDelay int) spec.Variant {
	return swept(spec.Variant{
		Name:    "lock-delay-no-fence",
		Summary: fmt.Sprintf("after a holder's failure the lock stays ungranted for a lock-delay of %d tick(s) (Chubby, Consul); the target checks no token", lockDelay),
		Design: model.Design{
			OnLease: func(e model.LeaseEvent, ru model.Regs, l model.Lease, _ int) model.Regs {
				if e == model.LeaseReleased {
					ru.T = 0 // a clean release has no delay
				} else {
					ru.T = model.Clamp(int(l.Left) + lockDelay)
				}
				return ru
			},
			Hold:  func(u, ru model.Regs) bool { return u.T > 0 || ru.T > 0 },
			Check: ok,
		},
		Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
			May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant)},
		Why: "A lock-delay gives a failed holder's in-flight writes time to drain, which helps a target " +
			"that cannot check a token; but a pause longer than ttl plus the delay, or a slower network, " +
			"still lets the stale write land after the next holder took over. It narrows the window; only " +
			"a fence closes it.",
		Cite: "Chubby (Burrows, OSDI 2006, §2.4): \"if a lock becomes free because the holder has failed or become inaccessible, the lock server will prevent other clients from claiming the lock for a period called the lock-delay\" — offered for servers that do not check sequencers. Consul sessions: lock-delay, default 15 s.",
		Params: []spec.Param{{Name: "delay", Min: 0, Max: 60, Default: defaultLockDelay,
			Doc: "ticks a resource stays ungranted after its holder's lease expired"}},
		At: func(vals []int) spec.Variant { return LockDelay(vals[0]) },
	}, lockDelay == defaultLockDelay)
}
