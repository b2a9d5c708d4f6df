package designs

import (
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// EtcdRevisions takes its tokens from one revision counter for all
// resources, so a resource's tokens skip numbers, as etcd's revisions do;
// the coordinator never talks to the sink, and the sink is a max-token
// sink whose fence the new holder raises with its first write (Kleppmann's
// design for a lock service whose tokens are trusted but that cannot
// advance the target).
var EtcdRevisions = variant(spec.Variant{
	Name:    "etcd-revisions",
	Summary: "tokens are one revision counter's values (they skip numbers); the holder's first write raises a max-token sink's fence",
	Design: model.Design{
		Tokens:    model.CounterOnly,
		CounterOf: func(uint8) uint8 { return 0 },
		Check:     maxToken,
		Accepted:  raiseFence,
	},
	Expect: spec.Expectation{Violates: spec.NonGuarantee | spec.SetOf(spec.Fencing, spec.FenceBeforeGrant),
		May: spec.SetOf(spec.LinearizableSink, spec.ResourceIndependence)},
	Why: "Skipping numbers is harmless: a max-token sink needs tokens that only grow. What remains is " +
		"the window between the grant and the new holder's first write: until that write raises the " +
		"fence, the old holder's stale write still passes, after the takeover. The window closes only " +
		"if the new holder raises the fence before it does anything else, and a stale write that lands " +
		"inside it is what the search finds.",
	Cite: "etcd: a lock's key carries the create revision of the holder's key (concurrency.Mutex, Header.Revision), a store-wide counter; M. Kleppmann, \"How to do distributed locking\" (2016): the storage server remembers the highest token it has seen and rejects lower ones.",
})
