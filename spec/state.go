package spec

import "github.com/fencecheck/fencecheck/model"

// Set is a set of invariants, one bit per entry of Invariants.
type Set uint16

// Has reports whether the set holds the invariant id.
func (s Set) Has(id string) bool { return s&bitOf(id) != 0 }

// IDs lists the set's invariant ids in the order of Invariants.
func (s Set) IDs() []string {
	var ids []string
	for i, inv := range Invariants {
		if s&(1<<i) != 0 {
			ids = append(ids, inv.ID)
		}
	}
	return ids
}

// SetOf returns the set of the given ids (unknown ids are ignored).
func SetOf(ids ...string) Set {
	var s Set
	for _, id := range ids {
		s |= bitOf(id)
	}
	return s
}

func bitOf(id string) Set {
	for i, inv := range Invariants {
		if inv.ID == id {
			return 1 << i
		}
	}
	return 0
}

// Judge returns the invariants that one step of the model violates, stated
// over grant identity (the model's ghost state), not only over token
// numbers: prev is the state before the step, f its fact, next the state
// after. It decides the invariants of OnTransitions and no other:
// linearizable-sink is judged on histories only (by porcupine; see
// Invariant.HistoryOnly).
//
// The rules, with g the grant the fact names and r its resource:
//   - fencing: the sink accepts a write from grant g after a newer grant of
//     r was observed by its holder (a coordinator that reissues a number
//     equal to the sink's fence still fails this, unlike a numeric check),
//     or a write whose token is below what a history shows of the fence:
//     the highest token an acquire's reply brought (model.Ghost.SeenToken),
//     the highest fence an advance of r set, the fence the sink compared
//     the write with, or a fence the sink reported or a token it accepted
//     before (model.Ghost.Shown: what the history checker's fencing reads,
//     so that a sink that keeps a fence and ignores it, a forged token
//     below the fence, or a fence or result a sink restart lowered or
//     changed, is judged here as it is there);
//   - exclusive-lease: a new grant of r that its worker waits for, or a
//     renew of one, while another grant of r is valid by its earliest
//     deadline (ttl after its request was sent), unreleased, and counted on
//     (model.Phase.Counts: its reply reached its worker, or its worker
//     still waits for it; not a grant still pending for the same
//     incarnation, an answer to the same request; a renew extends the
//     renewer's own grant, whoever holds the coordinator's lease), or an acquire
//     answered from a record with a token no grant gave that request (a
//     grant in all but name: model.Reanswered) while another holder's
//     grant is (the answer extends the earliest deadline of the holder's
//     own grant of the token, or is, in the ghost, a grant of its own
//     where its incarnation has none); a grant whose reply its worker stopped
//     waiting for before it came is no lease (it overlaps none, as in a
//     history, where only an ok shows a lease), and a grant is released
//     only by its holder's release;
//   - token-monotonic: a new grant's token is not above every earlier one,
//     nor is the token of such an answer from a record (a token granted
//     twice, even the same lease answered again to a new request, as the
//     history checker judges it);
//   - fence-before-grant: a holder receives token t while the fence the
//     last advance for r set (model.Ghost.LastAdvanced, what a history
//     reads: not a fence a write or a sink restart moved since) is below
//     t;
//   - idempotent-result: after a write, the sink holds two different
//     payloads for one task, or one besides a payload it lost in a restart;
//   - renew-validity: a renew is accepted at or after the deadline of the
//     grant it renews, the one its request names (ttl after the
//     coordinator received the request), for another owner, incarnation or
//     token (where the request names none, the coordinator's lease's
//     grant), or for a grant whose lease is not the one handed out last
//     (model.Ghost.Latest: a newer grant, or an answer from a record that
//     handed out another grant's token again, took the lease over; the
//     same holder's incarnation and token from another coordinator is the
//     same lease);
//   - acquire-idempotent: a new grant answers a request that already got one;
//   - resource-independence: the sink fences a write carrying the highest
//     token an acquire's reply has brought a worker for its resource
//     (model.Ghost.SeenToken: the newest token granted as a history shows
//     it so far; a grant whose reply is in flight may never show, and one
//     taken later makes this a flag the history does not raise, never a
//     miss), above which the last advance for that resource (for
//     its next grant, or a release) did not move the fence
//     (model.Ghost.LastAdvanced), or while the fence the sink reports is
//     that token (as a history reads the rejection);
//   - absolute-validity: the sink accepts a write from grant g at or after
//     g's deadline.
//
// A forged write (its token is not its grant's) whose token some grant of r
// carries is judged as that grant's write: no fence can tell a guessed
// token from the holder's, and the model promises nothing about guessing.
func Judge(m *model.Machine, prev *model.State, f model.Fact, next *model.State) Set {
	var v Set
	g := &prev.Ghost[f.Res]
	switch f.Kind {
	case model.Granted, model.Reanswered:
		// An answer from a record is as a new grant of the record's token
		// (so a token granted before, as the history checker has it:
		// granted twice).
		for i := 1; i <= int(g.Grants); i++ {
			if g.Grant[i].Token >= f.Token {
				v |= bitOf(TokenMonotonic)
			}
		}
		if f.Kind == model.Granted && g.Answered[f.Worker].Has(f.Req) {
			v |= bitOf(AcquireIdempotent)
		}
		// A grant whose worker no longer waits for it overlaps no lease:
		// nobody will take its reply. One it waits for does, even if its
		// earliest deadline has passed (a history has its lease valid
		// when it takes effect), and so does an answer from a record,
		// whatever grant the record names.
		if f.Kind == model.Reanswered || prev.Workers[f.Worker].WaitsFor(f.Inc, f.Req) {
			v |= overlaps(g, f.Grant, f.Worker+1, f.Inc, f.Token)
		}
	case model.GrantSeen:
		if g.LastAdvanced < f.Token {
			v |= bitOf(FenceBeforeGrant)
		}
	case model.Renewed:
		t := &g.Grant[f.Grant]
		if t.Late <= 0 || t.Worker != f.Worker+1 || t.Inc != f.Inc || t.Token != f.Token || !sameLease(&g.Grant[g.Latest], t) {
			v |= bitOf(RenewValidity)
		}
		if next.Ghost[f.Res].Grant[f.Grant].Phase.Counts() {
			v |= overlaps(g, f.Grant, t.Worker, t.Inc, t.Token)
		}
	case model.WriteAccepted:
		f.Grant = writtenGrant(g, f)
		if f.Grant < g.Observed || f.Token < max(g.SeenToken, g.Advanced, g.Shown, m.Fence(prev, f.Res)) {
			v |= bitOf(Fencing)
		}
		if g.Grant[f.Grant].Late <= 0 {
			v |= bitOf(AbsoluteValidity)
		}
		if mixedPayloads(next, f.Res) {
			v |= bitOf(IdempotentResult)
		}
	case model.WriteFenced:
		if f.Token != 0 && f.Token == g.SeenToken && (g.LastAdvanced <= f.Token || m.Fence(prev, f.Res) == f.Token) {
			v |= bitOf(ResourceIndependence)
		}
	}
	return v
}

// overlaps is exclusive-lease at a lease of token to holder (worker+1)
// incarnation inc, of grant gi (0: none), that starts or goes on (a
// grant, an answer from a record, a renew): another grant of
// the resource counts (model.Phase.Counts: valid by its earliest deadline,
// unreleased, and its holder counts on it or may yet), other than the same
// incarnation's grant of the same token, whose lease this one is, and
// than a grant still pending for the same incarnation, which answers the
// same request (a retry granted again): its worker takes one answer.
func overlaps(g *model.Ghost, gi, holder, inc, token uint8) Set {
	for i := 1; i <= int(g.Grants); i++ {
		o := &g.Grant[i]
		own := i == int(gi) || o.Worker == holder && o.Inc == inc && (o.Token == token || o.Phase == model.Pending)
		if o.Phase.Counts() && !own {
			return bitOf(ExclusiveLease)
		}
	}
	return 0
}

// sameLease reports whether grants a and b hand one holder's incarnation
// one token: one lease as a history has it (two coordinators that both
// answered a request with the same token, say).
func sameLease(a, b *model.GrantTruth) bool {
	return a.Worker == b.Worker && a.Inc == b.Inc && a.Token == b.Token
}

// writtenGrant is the grant a write from grant f.Grant with token f.Token
// is judged under: its own, unless the token is forged and is another
// grant's.
func writtenGrant(g *model.Ghost, f model.Fact) uint8 {
	if g.Grant[f.Grant].Token == f.Token {
		return f.Grant
	}
	for i := 1; i <= int(g.Grants); i++ {
		if g.Grant[i].Token == f.Token {
			return uint8(i)
		}
	}
	return f.Grant
}

// mixedPayloads reports whether the sink holds two different payloads for
// resource r's task, counting the payload of a result a sink restart lost
// (Ghost.LostWriter) as held.
func mixedPayloads(s *model.State, r uint8) bool {
	var first *model.Result
	if g := &s.Ghost[r]; g.LostWriter != 0 {
		first = &model.Result{Res: r, Writer: g.LostWriter, Token: g.LostToken}
	}
	for i := 0; i < int(s.Sink.NResults); i++ {
		x := &s.Sink.Results[i]
		if x.Res != r {
			continue
		}
		if first == nil {
			first = x
		} else if x.Writer != first.Writer || x.Token != first.Token {
			return true
		}
	}
	return false
}
