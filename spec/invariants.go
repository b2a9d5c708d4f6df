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
	// HistoryOnly, when not empty, says why the invariant has no state
	// form: Judge does not decide it on model transitions, so only the
	// checks of recorded histories (Check) judge it, and a breadth-first
	// search proves nothing of it. Empty: Judge decides it on every
	// transition (OnTransitions).
	HistoryOnly string
}

// Invariants lists every invariant, in the order reports and matrices use.
var Invariants = []Invariant{
	{ID: Fencing, Summary: "a write with token t is accepted after a newer grant (or a fence above t) was observed"},
	{ID: ExclusiveLease, Summary: "two grants of different tokens for one resource were certainly valid at the same instant"},
	{ID: TokenMonotonic, Summary: "a resource's tokens are not strictly increasing in grant order, or a token is granted twice"},
	{ID: FenceBeforeGrant, Summary: "a grant of token t was observed before the sink's fence reached t"},
	{ID: IdempotentResult, Summary: "one result id (or one task) was accepted with two different payloads"},
	{ID: RenewValidity, Summary: "a renew was accepted after the deadline, for a mismatched incarnation or token, or after takeover"},
	{ID: AcquireIdempotent, Summary: "two different grants answer the same requestId"},
	{ID: LinearizableSink, Summary: "the sink's operations have no linearization under the sequential fenced-sink spec",
		HistoryOnly: "linearizability is a property of a whole recorded history (some order of its sink operations " +
			"consistent with real time meets the sequential spec), not of one transition: a step that breaks the spec " +
			"in the model's order may be linearized in another (a read spans its interval, a two-step write takes two " +
			"sink steps), and paths with different histories meet in one state"},
	{ID: ResourceIndependence, Summary: "a write carrying the newest token granted for its resource was rejected as fenced"},
	{ID: AbsoluteValidity, Summary: "a write was accepted after its lease's deadline (plain fencing does not promise this)"},
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

// OnTransitions is the set of invariants Judge decides on every model
// transition: every invariant but those judged over recorded histories only
// (Invariant.HistoryOnly).
func OnTransitions() Set {
	var s Set
	for i, inv := range Invariants {
		if inv.HistoryOnly == "" {
			s |= 1 << i
		}
	}
	return s
}
