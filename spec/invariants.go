// Package spec says what must hold of a lease + fencing protocol: the
// invariants (checked over recorded histories and over model states), the
// porcupine models of the ideal objects, and the catalogue of protocol
// variants with the verdicts each is expected to get.
package spec

// Invariant ids, as named by the history format.
const (
	Fencing              = "fencing"
	ExclusiveLease       = "exclusive-lease"
	TokenMonotonic       = "token-monotonic"
	FenceBeforeGrant     = "fence-before-grant"
	IdempotentResult     = "idempotent-result"
	RenewValidity        = "renew-validity"
	AcquireIdempotent    = "acquire-idempotent"
	LinearizableSink     = "linearizable-sink"
	ResourceIndependence = "resource-independence"
	AbsoluteValidity     = "absolute-validity"
)

// Invariant describes one invariant.
type Invariant struct {
	ID string
	// Summary is one line on when a history violates it.
	Summary string
}

// Invariants lists every invariant, in the order reports and matrices use.
var Invariants = []Invariant{
	{Fencing, "a write with token t is accepted after a newer grant (or a fence above t) was observed"},
	{ExclusiveLease, "two grants of different tokens for one resource were certainly valid at the same instant"},
	{TokenMonotonic, "a resource's tokens are not strictly increasing in grant order, or a token is granted twice"},
	{FenceBeforeGrant, "a grant of token t was observed before the sink's fence reached t"},
	{IdempotentResult, "one result id (or one task) was accepted with two different payloads"},
	{RenewValidity, "a renew was accepted after the deadline, for a mismatched incarnation or token, or after takeover"},
	{AcquireIdempotent, "two different grants answer the same requestId"},
	{LinearizableSink, "the sink's operations have no linearization under the sequential fenced-sink spec"},
	{ResourceIndependence, "a write carrying the newest token granted for its resource was rejected as fenced"},
	{AbsoluteValidity, "a write was accepted after its lease's deadline (plain fencing does not promise this)"},
}

// IsInvariant reports whether id names an invariant.
func IsInvariant(id string) bool {
	for _, inv := range Invariants {
		if inv.ID == id {
			return true
		}
	}
	return false
}
