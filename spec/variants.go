package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fencecheck/fencecheck/model"
)

// Variant is a design registered by name: its decisions, the verdicts the
// searches are expected to reach on it, and what the docs say of it. The
// built-in catalogue is package designs; a user's own variants are values
// of this type too.
type Variant struct {
	// Name identifies the variant (explore --variant NAME, history headers).
	Name string
	// Summary is one line on what changes.
	Summary string
	// Design is the protocol's decisions (nil decisions are the reference's).
	Design model.Design
	// Expect is what the search must find and what it may find.
	Expect Expectation
	// SplitBrain is what two coordinator replicas that both believe they are
	// primary (Config.Replicas > 1) add to Expect: no single-coordinator
	// design survives split brain unscathed.
	SplitBrain Expectation
	// Unobservable says why a history alone cannot show the variant's
	// headline violation, when it cannot (explore check then sees only what
	// the history shows; the model's states show the rest): a lost reply
	// hides a second grant, say. Empty means a counterexample's history
	// must show it.
	Unobservable string
	// Needs are the scenes the verdict depends on: a search or proof that
	// reached none of one of them says so, and a proof is void without
	// them. Zero means the default, a takeover and a stale write after it.
	Needs model.Scene
	// Why explains what the change breaks (or buys), for the docs.
	Why string
	// Values are the parameter values With set, by name, every parameter's;
	// nil for a catalogue entry (whose are the defaults).
	Values map[string]int
	// Cite names the documented behaviour of real systems the variant
	// reproduces, for the docs ("" for the article's own variants).
	Cite string
	// Params are the design's integer parameters, and At builds the
	// variant at values for them (in Params' order, each within its
	// range); both nil for a design without parameters. With and
	// LookupVariant ("NAME@p=v") call At.
	Params []Param
	At     func(vals []int) Variant
}

// Expectation is the verdict a variant is expected to get. A target that
// checks no fence lets the history checker infer, from a stale write it
// accepted, a fence below a granted token (fence-before-grant). A variant whose
// sink departs from the sequential fenced-sink spec (a fence that moves down,
// is shared, is advanced late, or accepts bigger tokens) may also be caught by
// porcupine as linearizable-sink.
type Expectation struct {
	// Violates must each be found violated.
	Violates Set
	// May is collateral: violated in some runs, depending on what else the
	// search happened to do; either verdict is expected. Every invariant in
	// none of Violates, May and AnyOf must hold.
	May Set
	// AnyOf, when not empty, must have at least one of its invariants
	// found violated: a flaw that shows as one invariant or another,
	// depending on the run (check-then-write's stale write is a fencing
	// violation when the new grant was observed before the write's invoke,
	// and may show only as linearizable-sink when they overlap). Each alone
	// is allowed, not demanded, as May's are (Allowed is every invariant
	// an expectation lets be violated).
	AnyOf Set
}

// DefaultNeeds are the scenes a verdict depends on unless a variant says
// otherwise: a takeover, and a stale write reaching the sink after it.
const DefaultNeeds = model.SceneTakeover | model.SceneStaleWrite

// ExpectAt is the variant's expectation under config c: with two replicas
// that both believe they are primary, SplitBrain's too; with one resource,
// resource-independence is allowed but no longer demanded, since a design
// breaks it through a second resource (its lease, its fence).
func (v Variant) ExpectAt(c model.Config) Expectation {
	e := v.Expect
	if c.Replicas > 1 {
		e.Violates |= v.SplitBrain.Violates
		e.May |= v.SplitBrain.May
		if e.AnyOf == 0 {
			e.AnyOf = v.SplitBrain.AnyOf
		} else {
			e.May |= v.SplitBrain.AnyOf // one demand of at least one is the variant's own
		}
	}
	if c.Resources < 2 && e.Violates.Has(ResourceIndependence) {
		e.Violates &^= SetOf(ResourceIndependence)
		e.May |= SetOf(ResourceIndependence)
	}
	if c.Resources < 2 && e.AnyOf.Has(ResourceIndependence) {
		e.May |= e.AnyOf // no longer demanded: the others alone may not show the flaw
		e.AnyOf = 0
	}
	return e
}

// Scenes is the set of scenes the verdict depends on.
func (v Variant) Scenes() model.Scene {
	if v.Needs == 0 {
		return DefaultNeeds
	}
	return v.Needs
}

// Machine returns the variant's machine under config c.
func (v Variant) Machine(c model.Config) (*model.Machine, error) { return model.New(c, v.Design) }

// Allowed is every invariant the expectation lets be violated: Violates,
// May and AnyOf.
func (e Expectation) Allowed() Set { return e.Violates | e.May | e.AnyOf }

// Missing is what the expectation demands that violated lacks: the
// invariants of Violates not in it, and all of AnyOf when none of AnyOf
// is in it.
func (e Expectation) Missing(violated Set) Set {
	m := e.Violates &^ violated
	if e.AnyOf != 0 && violated&e.AnyOf == 0 {
		m |= e.AnyOf
	}
	return m
}

// Matches reports whether the violated set is the expected verdict: every
// invariant of Violates and at least one of AnyOf (when it has any) are
// in it, and nothing Allowed leaves out.
func (e Expectation) Matches(violated Set) bool {
	return e.Missing(violated) == 0 && violated&^e.Allowed() == 0
}

// Verdict says, for one invariant, what was found and whether it was
// expected. An invariant of AnyOf found holding is expected when another
// of AnyOf was found violated.
func (e Expectation) Verdict(id string, violated Set) (found, expected bool) {
	b := bitOf(id)
	found = violated&b != 0
	switch {
	case e.AnyOf&b != 0:
		return found, violated&e.AnyOf != 0
	case e.May&b != 0:
		return found, true
	case e.Violates&b != 0:
		return found, found
	default:
		return found, !found
	}
}

// Unexpected describes every verdict that differs from the expectation, or
// "" when violated matches it: Missed, then Extra.
func (e Expectation) Unexpected(violated Set) string {
	return JoinProblems(e.Missed(violated), e.Extra(violated))
}

// Missed describes the violations the expectation demands that violated
// lacks, or "".
func (e Expectation) Missed(violated Set) string {
	var parts []string
	if missing := e.Violates &^ violated; missing != 0 {
		parts = append(parts, fmt.Sprintf("expected violations not found: %s", strings.Join(missing.IDs(), ", ")))
	}
	if e.AnyOf != 0 && violated&e.AnyOf == 0 {
		parts = append(parts, fmt.Sprintf("expected at least one of these violations, none found: %s", strings.Join(e.AnyOf.IDs(), ", ")))
	}
	return JoinProblems(parts...)
}

// Extra describes the violations in violated the expectation does not
// allow, or "".
func (e Expectation) Extra(violated Set) string {
	if extra := violated &^ e.Allowed(); extra != 0 {
		return fmt.Sprintf("unexpected violations: %s", strings.Join(extra.IDs(), ", "))
	}
	return ""
}

// JoinProblems joins the non-empty descriptions of problems with "; ".
func JoinProblems(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "; ")
}

// Describe says what the expectation demands, for a person: the
// invariants of Violates, and "at least one of" AnyOf's ("absolute-validity,
// and at least one of fencing, linearizable-sink"); "nothing" when it
// demands nothing.
func (e Expectation) Describe() string {
	var parts []string
	if ids := e.Violates.IDs(); len(ids) > 0 {
		parts = append(parts, strings.Join(ids, ", "))
	}
	switch ids := e.AnyOf.IDs(); len(ids) {
	case 0:
	case 1:
		parts = append(parts, ids[0])
	default:
		parts = append(parts, "at least one of "+strings.Join(ids, ", "))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", and ")
}

// NonGuarantee is what plain fencing does not promise (the source article
// says so): every design whose sink ignores deadlines inherits it from the
// reference.
var NonGuarantee = SetOf(AbsoluteValidity)

// LookupVariant returns the variant with the given name among vs; NAME@p=v,...
// is variant NAME at those parameter values (Variant.With).
func LookupVariant(vs []Variant, name string) (Variant, error) {
	base, vals, err := ParseName(name)
	for _, v := range vs {
		if v.Name == name {
			return v, nil
		}
		if base != name && v.Name == base {
			if err != nil {
				return Variant{}, fmt.Errorf("variant %q: %v", name, err)
			}
			return v.With(vals)
		}
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return Variant{}, fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(names, ", "))
}

// Headline is the invariant a variant's counterexample is about: the first
// it must violate beyond plain fencing's non-guarantee, else the first of
// those of which it must violate at least one (Expectation.AnyOf), or that
// non-guarantee itself for the reference; "" for a variant expected to hold
// everything.
func (v Variant) Headline() string {
	if ids := (v.Expect.Violates &^ NonGuarantee).IDs(); len(ids) > 0 {
		return ids[0]
	}
	if ids := v.Expect.AnyOf.IDs(); len(ids) > 0 {
		return ids[0]
	}
	if ids := v.Expect.Violates.IDs(); len(ids) > 0 {
		return ids[0]
	}
	return ""
}
