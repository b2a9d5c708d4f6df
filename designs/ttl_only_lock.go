package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// TTLOnlyLock is a lock service with no fencing token at the target.
var TTLOnlyLock = variant(spec.Variant{
	Name:    "ttl-only-lock",
	Summary: "a lock service with no fencing token at all, only a TTL (Redlock)",
	Design:  model.Design{Check: ok},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing),
		May: spec.SetOf(spec.LinearizableSink, spec.IdempotentResult, spec.FenceBeforeGrant)},
	Why: "When the holder pauses past the TTL, the lock goes to another client and the paused " +
		"client's write still lands: a TTL alone cannot fence.",
	Cite: "Redis, \"Distributed Locks with Redis\" (Redlock): a lock is a key with a TTL and a random value; nothing the lock service returns is checked by the resource. M. Kleppmann, \"How to do distributed locking\" (2016), shows the paused-client counterexample and the missing fencing token.",
})
