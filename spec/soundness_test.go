package spec

import (
	"fmt"
	"strings"
	"testing"
)

// Regression tests for the classes of issue 9 §1 where Check broke the
// contract (a violation is reported only where every timing consistent with
// the observations violates the invariant): for each class a history that
// violates, one that is clean or ambiguous and was a false alarm, or one that
// is certain and was missed.

// hist builds a history of resource "job" from lines "time process type f
// value", value being the inside of the JSON object; a first line "partial"
// makes it partial.
func hist(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		if l == "partial" {
			b.WriteString(`{"format":"fencecheck-history","version":1,"partial":true}` + "\n")
			continue
		}
		f := strings.SplitN(l, " ", 5)
		v := ""
		if len(f) == 5 {
			v = f[4]
		}
		res := `,"resource":"job"`
		if f[3] == "duplicate" || f[3] == "crash" || f[3] == "restart" {
			res = ""
		}
		fmt.Fprintf(&b, `{"time":%s,"process":%q,"type":%q,"f":%q%s,"value":{%s}}`+"\n", f[0], f[1], f[2], f[3], res, v)
	}
	return b.String()
}

// acq is w's acquire of request req with ttl, invoked at time t.
func acq(t int, w, req string, ttl int) string {
	return fmt.Sprintf(`%d %s invoke acquire "owner":%q,"incarnation":1,"requestId":%q,"ttl":%d`, t, w, w, req, ttl)
}
func okTok(t int, w, f string, tok int) string {
	return fmt.Sprintf(`%d %s ok %s "token":%d`, t, w, f, tok)
}
func adv(t, tok int) []string {
	return []string{fmt.Sprintf("%d coordinator invoke advance", t), okTok(t, "coordinator", "advance", tok)}
}
func renew(t int, w string, tok, ttl int) string {
	return fmt.Sprintf(`%d %s invoke renew "owner":%q,"incarnation":1,"token":%d,"ttl":%d`, t, w, w, tok, ttl)
}
func release(t int, w string, tok int) string {
	return fmt.Sprintf(`%d %s invoke release "owner":%q,"incarnation":1,"token":%d`, t, w, w, tok)
}
func write(t int, w string, tok int, id, payload string) string {
	return fmt.Sprintf(`%d %s invoke write "token":%d,"resultId":%q,"payload":%q`, t, w, tok, id, payload)
}
func done(t int, w, typ, f string) string { return fmt.Sprintf("%d %s %s %s", t, w, typ, f) }
func outcome(t int, w, o string) string   { return fmt.Sprintf(`%d %s ok write "outcome":%q`, t, w, o) }
func failed(t int, w, f, e string) string { return fmt.Sprintf(`%d %s fail %s "error":%q`, t, w, f, e) }

// grantAt is w's acquire req, granted token tok (fence advanced first) at t.
func grantAt(t int, w, req string, ttl, tok int) []string {
	return append(append([]string{acq(t, w, req, ttl)}, adv(t, tok)...), okTok(t, w, "acquire", tok))
}

func cat(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

func TestRenewMayShortenLease(t *testing.T) {
	// A renew's ttl sets the deadline to (its instant + ttl): the ok renew
	// with ttl 2 at time 1 ended token 1 by 3, before w2's grant at 5.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), renew(1, "w1", 1, 2), done(1, "w1", "ok", "renew"),
		grantAt(5, "w2", "b1", 10, 2))...))
	// An open renew with a short ttl may have cut it as well.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), renew(1, "w1", 1, 2), grantAt(5, "w2", "b1", 10, 2))...))
	// A retried acquire whose first (info) attempt asked ttl 2 may have been
	// granted then, for 2.
	expect(t, hist(cat(acq(0, "w1", "a1", 2), adv(0, 1), done(0, "w1", "info", "acquire"),
		acq(1, "w1", "a1", 10), okTok(1, "w1", "acquire", 1), grantAt(5, "w2", "b1", 10, 2))...))
	// Violating: the short renew still leaves token 1 certainly valid
	// during [2, 3), when w2 holds token 2.
	rep := expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), renew(1, "w1", 1, 2), done(1, "w1", "ok", "renew"),
		grantAt(2, "w2", "b1", 10, 2))...), ExclusiveLease)
	if got := rep.Violations[0].Message; !strings.Contains(got, "during [2, 3)") {
		t.Errorf("message %q", got)
	}
}

func TestFenceBeforeGrantNotFromStaleWrites(t *testing.T) {
	// A stale write with token 1 accepted after the grant of token 2 is a
	// fencing violation; the advance still open before the grant may have
	// raised the fence to 2 before it.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), release(1, "w1", 1), done(1, "w1", "ok", "release"),
		"2 coordinator invoke advance", acq(2, "w2", "b1", 100), okTok(2, "w2", "acquire", 2),
		write(3, "w1", 1, "r", "a"), outcome(3, "w1", "written"))...), Fencing)
	// Partial: an advance returned 2 before the grant of 2; a later write
	// with token 1 accepted shows no late fence.
	expect(t, hist(cat("partial", adv(0, 2), acq(1, "w2", "b1", 100), okTok(1, "w2", "acquire", 2),
		write(2, "w1", 1, "r", "a"), outcome(2, "w1", "written"))...), Fencing, LinearizableSink)
	// Partial: an advance returned 3 before the grant of 3; a later advance
	// returning 2 is a sink anomaly (linearizable-sink), not a late fence.
	expect(t, hist(cat("partial", adv(0, 3), acq(1, "w2", "b1", 100), okTok(1, "w2", "acquire", 3), adv(2, 2))...),
		LinearizableSink)
	// Violating (partial): nothing before the grant of 2, and the first
	// advance, after it, returns 2.
	expect(t, hist(cat("partial", acq(1, "w2", "b1", 100), okTok(1, "w2", "acquire", 2), adv(2, 2))...), FenceBeforeGrant)
}

func TestExclusiveLeaseNeedsTwoGrants(t *testing.T) {
	// An ok renew of token 5, never granted, in a history that is not
	// partial: renew-validity, but only one grant.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), renew(1, "w9", 5, 100), done(1, "w9", "ok", "renew"))...),
		RenewValidity)
	// Partial: tokens 5 and 6 were granted before the first event (or 6
	// in the window, by a request under way at its first event); the
	// renews show both held during [2, 101).
	expect(t, hist(cat("partial", renew(1, "w9", 5, 100), done(1, "w9", "ok", "renew"),
		renew(2, "w1", 6, 100), done(2, "w1", "ok", "renew"))...), ExclusiveLease)
	// But a grant in a partial history may have taken effect before the
	// first event (request a1 attempted then, its attempt at 2 a replay),
	// and expired before the renew of 5.
	expect(t, hist(cat("partial", renew(1, "w9", 5, 100), done(1, "w9", "ok", "renew"),
		grantAt(2, "w1", "a1", 100, 6))...))
}

func TestDeadlineKnownDespiteRetry(t *testing.T) {
	// Request a1's first attempt is info, its retry ok with token 1: the
	// grant took effect during one of them, by time 1, for ttl 10, so the
	// deadline is 11 at the latest; a late copy is a replay.
	base := cat(acq(0, "w1", "a1", 10), adv(0, 1), done(0, "w1", "info", "acquire"),
		acq(1, "w1", "a1", 10), okTok(1, "w1", "acquire", 1))
	expect(t, hist(cat(base, write(20, "w1", 1, "r", "a"), outcome(20, "w1", "written"))...), AbsoluteValidity)
	expect(t, hist(cat(base, renew(20, "w1", 1, 10), done(20, "w1", "ok", "renew"))...), RenewValidity)
	// Ambiguous: invoked at 10, before the latest deadline.
	expect(t, hist(cat(base, write(10, "w1", 1, "r", "a"), outcome(10, "w1", "written"),
		renew(10, "w1", 1, 10), done(10, "w1", "ok", "renew"))...))
	// A request with no ok at all may have granted token 1 late: nothing.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), acq(1, "w2", "b1", 10), done(1, "w2", "info", "acquire"),
		write(20, "w1", 1, "r", "a"), outcome(20, "w1", "written"))...))
}

func TestExclusiveLeaseSameTimeTie(t *testing.T) {
	// w2's grant of token 2 is ok at time 5, and w1's release of token 1
	// is invoked after it at the same time: both were valid in between.
	rep := expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), grantAt(5, "w2", "b1", 10, 2),
		release(5, "w1", 1), done(5, "w1", "ok", "release"))...), ExclusiveLease)
	if got := rep.Violations[0].Message; !strings.Contains(got, "at time 5") {
		t.Errorf("message %q", got)
	}
	// Clean: the release is invoked before the grant's ok line.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), acq(5, "w2", "b1", 10), adv(5, 2),
		release(5, "w1", 1), done(5, "w1", "ok", "release"), okTok(5, "w2", "acquire", 2))...))
}

func TestSinkRejectionsAreOutcomes(t *testing.T) {
	g := grantAt(0, "w1", "a1", 100, 1)
	// A conflict on an empty sink has no linearization.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), failed(1, "w1", "write", "conflict"))...), LinearizableSink)
	// fenced while the token equals the fence.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), failed(1, "w1", "write", "fenced"))...),
		LinearizableSink, ResourceIndependence)
	// Clean: a conflict after another payload was stored, a stale token
	// fenced, and expired, which the spec does not judge (any state allows
	// it; it changes nothing).
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), outcome(1, "w1", "written"),
		write(2, "w1", 1, "r", "b"), failed(2, "w1", "write", "conflict"),
		write(3, "w1", 1, "s", "c"), failed(3, "w1", "write", "expired"),
		release(4, "w1", 1), done(4, "w1", "ok", "release"), grantAt(5, "w2", "b1", 100, 2),
		write(6, "w1", 1, "s", "c"), failed(6, "w1", "write", "fenced"))...))
	// Ambiguous: a conflict concurrent with the write that stored the
	// other payload.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), write(1, "w2", 1, "r", "b"),
		failed(1, "w2", "write", "conflict"), outcome(1, "w1", "written"))...))
}

func TestWrittenAndReplayedToldApart(t *testing.T) {
	g := grantAt(0, "w1", "a1", 100, 1)
	// replayed with no earlier write; written twice.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), outcome(1, "w1", "replayed"))...), LinearizableSink)
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), outcome(1, "w1", "written"),
		write(2, "w1", 1, "r", "a"), outcome(2, "w1", "written"))...), LinearizableSink)
	// Clean: a duplicate fault hit w1, whose client may have seen the
	// second copy's answer; and an ordinary replay.
	expect(t, hist(cat(g, `1 nemesis info duplicate "target":"w1"`, write(1, "w1", 1, "r", "a"),
		outcome(1, "w1", "replayed"))...))
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), outcome(1, "w1", "written"),
		write(2, "w1", 1, "r", "a"), outcome(2, "w1", "replayed"))...))
	// Ambiguous: an info write may have stored it first.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), done(1, "w1", "info", "write"),
		write(2, "w1", 1, "r", "a"), outcome(2, "w1", "replayed"))...))
}

func TestResourceIndependenceNotHiddenByHigherWrite(t *testing.T) {
	// The sink accepted a write with token 5, never granted (a sink
	// anomaly); only advances move the fence, which is still 1, so w1's
	// write with the newest token 1 rejected as fenced is a violation.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), write(1, "w9", 5, "q", "x"), outcome(1, "w9", "written"),
		write(2, "w1", 1, "r", "a"), failed(2, "w1", "write", "fenced"))...), LinearizableSink, ResourceIndependence)
	// Ambiguous: an advance to 5 may have taken effect.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), "1 coordinator invoke advance",
		write(2, "w1", 1, "r", "a"), failed(2, "w1", "write", "fenced"))...))
}

func TestGrantDatedFromItsOwnAttempt(t *testing.T) {
	// Request a1's first attempt is ok with token 4; its retry, invoked at
	// 8, is ok with token 1: a second grant, which took effect during the
	// retry — after token 4 was granted (and released), and valid during
	// [8, 18) while token 5 is granted at 12.
	story := cat(acq(0, "w1", "a1", 10), adv(0, 4), okTok(0, "w1", "acquire", 4),
		release(1, "w1", 4), done(1, "w1", "ok", "release"), acq(8, "w1", "a1", 10), okTok(8, "w1", "acquire", 1),
		acq(12, "w2", "b1", 10), adv(12, 5), okTok(12, "w2", "acquire", 5))
	expect(t, hist(story...), ExclusiveLease, TokenMonotonic, AcquireIdempotent)
	// Partial: request a1 may also have been attempted before the first
	// event, and granted token 1 then, before token 4; only the two tokens
	// for one request are certain.
	expect(t, hist(cat("partial", story)...), AcquireIdempotent)
	// Ambiguous: the first attempt is info; token 1 may have been granted
	// at 0 and expired at 10.
	expect(t, hist(cat(acq(0, "w1", "a1", 10), adv(0, 1), done(0, "w1", "info", "acquire"),
		acq(8, "w1", "a1", 10), okTok(8, "w1", "acquire", 1), acq(12, "w2", "b1", 10), adv(12, 5), okTok(12, "w2", "acquire", 5))...))
}

func TestRenewAfterRegrantToAnother(t *testing.T) {
	// Token 1 is granted to w1 (deadline 10), then again to w2 at 11 (a
	// takeover, though of the same token), who renews it; w1's renew at 15
	// is of a lease taken over.
	rep := expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), acq(11, "w2", "b1", 10), okTok(11, "w2", "acquire", 1),
		renew(12, "w2", 1, 10), done(12, "w2", "ok", "renew"), renew(15, "w1", 1, 10), done(15, "w1", "ok", "renew"))...),
		TokenMonotonic, RenewValidity)
	if got := rep.Violations[1].Message; !strings.Contains(got, "taken over by grant token=1 (to w2/1)") {
		t.Errorf("message %q", got)
	}
}

// applyLine is the sink's apply event for w's write (token, id, payload);
// rest is the outcome or error and optional fence, e.g. `"outcome":"written"`.
func applyLine(t int, w string, tok int, id, payload, rest string) string {
	return fmt.Sprintf(`%d sink info apply "writer":%q,"token":%d,"resultId":%q,"payload":%q,%s`, t, w, tok, id, payload, rest)
}

func TestApplyPinsTheWrite(t *testing.T) {
	// w1's write with token 1 is invoked before w2's grant of token 2 and
	// never completes; the apply after the grant shows it accepted then:
	// a certain fencing violation.
	pre := cat(grantAt(0, "w1", "a1", 100, 1), release(1, "w1", 1), done(1, "w1", "ok", "release"),
		write(2, "w1", 1, "r", "a"), grantAt(3, "w2", "b1", 100, 2))
	expect(t, hist(cat(pre, applyLine(4, "w1", 1, "r", "a", `"outcome":"written"`))...), Fencing, LinearizableSink)
	// Without the apply (or with the apply before the grant) it may have
	// taken effect first, or never.
	expect(t, hist(pre...))
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), release(1, "w1", 1), done(1, "w1", "ok", "release"),
		write(2, "w1", 1, "r", "a"), applyLine(2, "w1", 1, "r", "a", `"outcome":"written"`),
		grantAt(3, "w2", "b1", 100, 2))...))
	// absolute-validity at the apply instant: invoked at 5, before the
	// deadline 10, applied at 12.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 10, 1), write(5, "w1", 1, "r", "a"),
		applyLine(12, "w1", 1, "r", "a", `"outcome":"written"`), outcome(13, "w1", "written"))...), AbsoluteValidity)
	// linearizable-sink: a read after the apply of an open write misses it.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), write(1, "w1", 1, "r", "a"),
		applyLine(2, "w1", 1, "r", "a", `"outcome":"written"`), `3 w2 invoke read "resultId":"r"`,
		`3 w2 ok read "payload":null`)...), LinearizableSink)
	// idempotent-result: an open write applied with another payload.
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), write(1, "w1", 1, "r", "a"), outcome(1, "w1", "written"),
		write(2, "w2", 1, "r", "b"), applyLine(3, "w2", 1, "r", "b", `"outcome":"written"`))...),
		IdempotentResult, LinearizableSink)
}

func TestApplyWithNoWrite(t *testing.T) {
	// An apply that decides a write nobody invoked: a sink anomaly in a
	// history that is not partial; in a partial one, a write from before
	// the first event.
	a := applyLine(1, "w1", 1, "r", "a", `"outcome":"written"`)
	expect(t, hist(cat(grantAt(0, "w1", "a1", 100, 1), a)...), LinearizableSink)
	expect(t, hist(cat("partial", grantAt(0, "w1", "a1", 100, 1), a)...))
}

func TestReportedFence(t *testing.T) {
	g := grantAt(0, "w1", "a1", 100, 1)
	// Accepted although the sink reported its fence at 2.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), `1 w1 ok write "outcome":"written","fence":2`)...),
		Fencing, LinearizableSink)
	// A later write accepted after the sink reported fence 2 to another.
	expect(t, hist(cat("partial", g, write(1, "w2", 2, "q", "x"), `1 w2 fail write "error":"fenced","fence":3`,
		write(2, "w1", 1, "r", "a"), outcome(2, "w1", "written"))...), Fencing, LinearizableSink)
	// fenced while the sink reports a fence equal to the token: no
	// advance moved it, so also resource-independence.
	expect(t, hist(cat(g, write(1, "w1", 1, "r", "a"), `1 w1 fail write "error":"fenced","fence":1`)...),
		LinearizableSink, ResourceIndependence)
	// Clean: fenced with a reported fence above the token, in a partial
	// history where the fence may have been moved before the first event.
	expect(t, hist(cat("partial", acq(0, "w1", "a1", 100), okTok(0, "w1", "acquire", 1), write(1, "w1", 1, "r", "a"),
		`1 w1 fail write "error":"fenced","fence":3`)...))
	// But where an advance set it to 1 and nothing moved it since, a
	// reported fence 3 has no linearization, and the newest grant was
	// fenced by a fence no advance of its resource set (another resource's
	// grant, with a shared fence): resource-independence.
	expect(t, hist(cat("partial", g, write(1, "w1", 1, "r", "a"), `1 w1 fail write "error":"fenced","fence":3`)...),
		LinearizableSink, ResourceIndependence)
}
