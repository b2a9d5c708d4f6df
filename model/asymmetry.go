package model

import (
	"fmt"
	"reflect"
	"strings"
)

// A design that does not declare Asymmetric must not tell workers or
// resources apart: its decisions must answer alike when the worker and
// resource numbers they read are renamed (an answer that holds numbers, a
// coordinator or a sink after a restart, renamed alike). The searches'
// symmetry reduction rests on it: it stores one state of each orbit and
// expands only that one, so a design whose decisions tell the renamings
// apart could hide its violations in the states the search never
// expands, and be proved safe when it is not. A declaration nobody checks
// is no ground for a proof, so every step that takes a decision the design
// sets itself, and that can read a number (identityReaders), takes it
// again on its inputs renamed by every renaming the design's symmetry
// allows under the config (Machine.renamings) and panics with a
// DesignFault naming Asymmetric if an answer differs. The framework
// renames its own data (Permute) but never a design's registers, keys or
// message bytes, so a design that keeps a worker's or a resource's number
// there must declare Asymmetric too, and the check sees it where the
// number is put there. The check is complete for the searches' reduction:
// the machine's own steps commute with renaming (TestPermuteIsAutomorphism),
// so a state the search expands has, under each renaming, the renamed
// successors exactly when every decision its steps take answers alike on
// renamed inputs, and a search that meets no such fault took the same
// steps in each renaming of every state it expanded as in that state.

// identityReaders are the decisions whose inputs can hold worker or
// resource numbers (Msg.Worker, Msg.Res, Msg.PW, Lease.Holder, a
// coordinator's or sink's tables): the others read registers, reply codes
// and clocks only.
const identityReaders = decAnswers | decValid | decDeadline | decRenew | decRelease | decCheck | decCommit |
	decPrepared | decAccepted | decOnReply | decRestart | decOnLease | decKey | decSinkRestart

// renamingsOf lists the renamings of the group sym generates under c,
// every one but the identity.
func renamingsOf(c *Config, sym Symmetry) []Perm {
	nw, nr := 1, 1
	if sym&SymWorkers != 0 {
		nw = c.Workers
	}
	if sym&SymResources != 0 {
		nr = c.Resources
	}
	var ps []Perm
	id := Identity()
	p := id
	for {
		for {
			if p != id {
				ps = append(ps, p)
			}
			if !nextPerm(p.W[:nw]) {
				break
			}
		}
		if !nextPerm(p.R[:nr]) {
			break
		}
	}
	return ps
}

// A decision must be a function of its inputs, as the searches take it:
// they store a state once for every path that reaches it, so a decision
// that keeps something between calls (a counter in a closure, a clock, a
// random number) would answer in one path's state as in another's, and a
// proof would cover steps no run takes and miss those a run does. Every
// step that takes a decision the design sets itself takes it again on the
// same inputs (Machine.pureChecked) and panics with a DesignFault if the
// two answers differ. That catches a decision that changes what it keeps
// at every call, not one that reads something that changes only between
// steps; NextToken, Advance, Hold, OnCrash, OnSend, FenceOf and CounterOf
// are not taken twice.

// pureFault panics with the DesignFault of decision k answering got, and
// then other on the same inputs.
func pureFault(k decisionSet, got, other any) {
	panic(&DesignFault{Decision: k.name(), Detail: fmt.Sprintf("is not a function of its inputs: it returned %s, "+
		"and then %s on the same inputs; a decision must keep nothing between calls and read no clock or random "+
		"number, since the searches store a state once for every path that reaches it",
		answerText(k, got), answerText(k, other))})
}

// nameFree checks that decision k, which answered got, answers the same
// again on the same inputs, when m checks k (Machine.pureChecked), and on
// its inputs renamed by every renaming m checks (f is the decision on the
// inputs renamed by p), when m checks k (Machine.nameChecked); it panics
// with a DesignFault otherwise.
func nameFree[R comparable](m *Machine, k decisionSet, got R, f func(p Perm) R) {
	if m.pureChecked&k == 0 {
		return
	}
	if r := f(m.identity); r != got {
		pureFault(k, got, r)
	}
	if m.nameChecked&k == 0 {
		return
	}
	for _, p := range m.renamings { // by value: a pointer into m would make the state a step works on escape
		if r := f(p); r != got {
			m.nameFault(k, p, fmt.Sprintf("it returned %s, where it returned %s on the inputs as they were",
				answerText(k, r), answerText(k, got)))
		}
	}
}

// decided checks decision k, which answered got on msg, as every step
// checks a decision that reads a message: that it answers the same again
// on the same inputs and on them renamed (nameFree), and at every other age
// a run can give msg (ageFree), in that order, so that a decision that is
// no function of its inputs is named so, not taken for one that reads
// ages. f is the decision on a message q, its other inputs renamed by p.
func decided[R comparable](m *Machine, k decisionSet, msg *Msg, got R, f func(q Msg, p Perm) R) {
	if m.pureChecked&k == 0 {
		return // the reference's decisions
	}
	nameFree(m, k, got, func(p Perm) R { return f(p.msg(*msg), p) }) // first: it asks again on the same inputs
	ageFree(m, k, msg, got, func(q Msg) R { return f(q, m.identity) })
}

// restartNameFree checks, when the machine checks Restart, that of the
// design's Restart of every renaming of coordinator in the framework keeps
// (restartKept) the renaming of what it keeps of got, Restart's answer for
// in; it panics with a DesignFault otherwise.
func (st *stepper) restartNameFree(in, got *Coordinator) {
	m := st.m
	if m.pureChecked&decRestart == 0 {
		return
	}
	kept := restartKept(in, *got)
	if again := restartKept(in, st.d.Restart(*in, m.Config.TTL)); again != kept {
		pureFault(decRestart, "a coordinator", "another "+firstDiff(again, kept, "the first"))
	}
	if m.nameChecked&decRestart == 0 {
		return
	}
	nw, nr := m.Config.Workers, m.Config.Resources
	for _, p := range m.renamings {
		q, want := *in, kept
		p.coordinator(in, &q, nw, nr)
		p.coordinator(&kept, &want, nw, nr)
		if other := restartKept(&q, st.d.Restart(q, m.Config.TTL)); other != want {
			m.nameFault(decRestart, p, "it returned a coordinator "+firstDiff(other, want, renamedAnswer))
		}
	}
}

// sinkRestartNameFree checks, when the machine checks SinkRestart, that of
// the design's SinkRestart of every renaming of sink in the framework keeps
// (sinkKept) the renaming of what it keeps of got, SinkRestart's answer for
// in; it panics with a DesignFault otherwise.
func (st *stepper) sinkRestartNameFree(in, got *Sink) {
	m := st.m
	if m.pureChecked&decSinkRestart == 0 {
		return
	}
	kept := sinkKept(in, *got)
	if again := sinkKept(in, st.d.SinkRestart(*in)); again != kept {
		pureFault(decSinkRestart, "a sink", "another "+firstDiff(again, kept, "the first"))
	}
	if m.nameChecked&decSinkRestart == 0 {
		return
	}
	nr := m.Config.Resources
	for _, p := range m.renamings {
		q, want := *in, kept
		p.sink(in, &q, nr)
		p.sink(&kept, &want, nr)
		other := st.d.SinkRestart(q)
		if int(other.NResults) > len(other.Results) {
			m.nameFault(decSinkRestart, p, fmt.Sprintf("it returned a sink of %d results", other.NResults))
		}
		if other = sinkKept(&q, other); other != want {
			m.nameFault(decSinkRestart, p, "it returned a sink "+firstDiff(other, want, renamedAnswer))
		}
	}
}

// renamedAnswer is what firstDiff calls a restart's answer renamed.
const renamedAnswer = "the renaming of the one it returned on the inputs as they were"

// firstDiff names the first field in which a, a restart's answer, differs
// from b, the answer it is held to (said by which: its answer first, or
// renamed), with its value in each.
func firstDiff(a, b any, which string) string {
	var walk func(x, y reflect.Value, path string) string
	walk = func(x, y reflect.Value, path string) string {
		switch x.Kind() {
		case reflect.Struct:
			for i := range x.NumField() {
				if d := walk(x.Field(i), y.Field(i), path+"."+x.Type().Field(i).Name); d != "" {
					return d
				}
			}
			return ""
		case reflect.Array:
			for i := range x.Len() {
				if d := walk(x.Index(i), y.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
			return ""
		}
		if x.Equal(y) {
			return ""
		}
		return fmt.Sprintf("whose %s is %v, where %s has %v", strings.TrimPrefix(path, "."), x, which, y)
	}
	return walk(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

// nameFault panics with the DesignFault of decision k answering otherwise
// (said by what) on its inputs renamed by p.
func (m *Machine) nameFault(k decisionSet, p Perm, what string) {
	panic(&DesignFault{Decision: k.name(), Detail: fmt.Sprintf("tells workers or resources apart: on %s %s; "+
		"a design whose decisions read worker or resource numbers (Msg.Worker, Msg.Res, Msg.PW, Lease.Holder), "+
		"or keep one in a register, a key or a message byte, must declare Asymmetric (model.Design.Asymmetric): "+
		"without it, the searches' symmetry reduction takes a state for its renamings, and could prove the design "+
		"safe when it is not", m.renamingText(p), what)})
}

// renamingText is renaming p for a person: the workers and resources it
// moves, numbered from 0.
func (m *Machine) renamingText(p Perm) string {
	var parts []string
	moved := func(of string, to []uint8) {
		var b strings.Builder
		for i, j := range to {
			if int(j) != i {
				if b.Len() > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d as %d", i, j)
			}
		}
		if b.Len() > 0 {
			parts = append(parts, of+" "+b.String())
		}
	}
	moved("worker", p.W[:m.Config.Workers])
	moved("resource", p.R[:m.Config.Resources])
	return "its inputs with " + strings.Join(parts, " and ")
}
