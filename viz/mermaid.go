package viz

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/fencecheck/fencecheck/history"
)

// Mermaid writes h as a Mermaid sequenceDiagram: one participant per lane
// (the coordinator, each process, the sink, the nemesis), a message for each
// request (invoke) and reply (completion) between a caller and the
// coordinator or the sink, notes for faults, lease expiries and operations
// with no server, each event a violation names inside a red rect, and after
// the last event of each violation a note "VIOLATION invariant: message".
// Identifiers and labels are sanitized for Mermaid's grammar.
func Mermaid(w io.Writer, h *history.History, opt Options) error {
	s := newScene(h, opt.Violations)
	m := &mermaid{s: s, w: bufio.NewWriter(w)}
	m.ids()
	m.line("sequenceDiagram")
	m.line("    title " + mermaidText(opt.title()))
	if variant, seed, note := opt.meta(h); variant != "" || seed != 0 || note != "" {
		var parts []string
		if variant != "" {
			parts = append(parts, "variant "+variant)
		}
		if seed != 0 {
			parts = append(parts, "seed "+strconv.FormatUint(seed, 10))
		}
		if note != "" {
			parts = append(parts, note)
		}
		m.line("    %% " + mermaidText(strings.Join(parts, ", ")))
	}
	for i, l := range s.lanes {
		if m.id[i] == l.name {
			m.line("    participant " + m.id[i])
		} else {
			m.line("    participant " + m.id[i] + " as " + mermaidText(l.name))
		}
	}
	m.body()
	return m.w.Flush()
}

type mermaid struct {
	s  *scene
	w  *bufio.Writer
	id []string // participant id of each lane
}

func (m *mermaid) line(s string) {
	m.w.WriteString(s)
	m.w.WriteByte('\n')
}

// mermaidKeywords are the words Mermaid's sequence lexer reads as keywords
// where a participant id is expected; it matches them case-insensitively and
// as prefixes, so an id must not start with one.
var mermaidKeywords = []string{
	"participant", "actor", "create", "destroy", "box", "loop", "rect", "opt", "alt", "else", "par",
	"and", "critical", "option", "break", "end", "left of", "right of", "links", "link", "properties",
	"details", "over", "note", "activate", "deactivate", "title", "acctitle", "accdescr",
	"sequencediagram", "autonumber", "off",
}

// ids gives every lane a participant id: its name when that is a plain
// identifier Mermaid cannot misread, else a sanitized, unique one.
func (m *mermaid) ids() {
	used := map[string]bool{}
	for _, l := range m.s.lanes {
		var b strings.Builder
		for _, r := range l.name {
			if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		id := b.String()
		lower := strings.ToLower(id)
		if id == "" || !unicode.IsLetter(rune(id[0])) || slices.ContainsFunc(mermaidKeywords, func(k string) bool { return strings.HasPrefix(lower, k) }) {
			id = "p_" + id
		}
		for base, n := id, 2; used[id]; n++ {
			id = base + "_" + strconv.Itoa(n)
		}
		used[id] = true
		m.id = append(m.id, id)
	}
}

// mermaidText makes s safe as Mermaid label text: one line, with every
// character the grammar or the renderer would read (#, ;, <, >, &, quotes,
// %, braces, backslash, backquote) written as a Mermaid entity code (#35;).
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' || strings.ContainsRune(".,:=()[]/_+-*'!?@→…", r):
			b.WriteRune(r)
		default:
			b.WriteString("#" + strconv.Itoa(int(r)) + ";")
		}
	}
	return b.String()
}

func (m *mermaid) body() {
	s := m.s
	h := s.h
	expiries := m.expiries()
	pending := map[int][]int{} // last event of a violation -> the violations
	var loose []int            // violations naming no event of the history
	for vi, v := range s.violations {
		last := -1
		for _, ev := range v.Events {
			if ev >= 0 && ev < len(h.Events) {
				last = max(last, ev)
			}
		}
		if last < 0 {
			loose = append(loose, vi)
		} else {
			pending[last] = append(pending[last], vi)
		}
	}
	for i, e := range h.Events {
		for len(expiries) > 0 && s.leases[expiries[0]].deadline <= e.Time {
			m.expiry(expiries[0])
			expiries = expiries[1:]
		}
		stmt := m.statement(i)
		if len(s.marks[i]) > 0 {
			m.line("    rect rgb(255, 215, 215)")
			m.line("    " + stmt)
			m.line("    end")
		} else {
			m.line(stmt)
		}
		for _, vi := range pending[i] {
			m.violation(vi)
		}
	}
	for _, o := range s.ops {
		if o.comp < 0 {
			inv := h.Events[o.inv]
			m.line("    Note over " + m.id[o.lane] + ": " + mermaidText(s.invokeLabel(inv)+" still open at the end (counts as info)"))
		}
	}
	for _, vi := range loose {
		m.violation(vi)
	}
}

// expiries lists the lease segments that run to a deadline inside the
// history, in deadline order.
func (m *mermaid) expiries() []int {
	var ex []int
	last := int64(-1)
	if n := len(m.s.h.Events); n > 0 {
		last = m.s.h.Events[n-1].Time
	}
	for i, ls := range m.s.leases {
		if ls.end < 0 && ls.deadline <= last {
			ex = append(ex, i)
		}
	}
	slices.SortStableFunc(ex, func(a, b int) int {
		da, db := m.s.leases[a].deadline, m.s.leases[b].deadline
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
	return ex
}

func (m *mermaid) expiry(i int) {
	ls := m.s.leases[i]
	text := "t=" + m.s.at(ls.deadline) + " lease token=" + itoa(ls.token)
	if m.s.multiRes {
		text += " @" + ls.resource
	}
	m.line("    Note over " + m.id[ls.lane] + ": " + mermaidText(text+" expires"))
}

// statement is the line that draws event i, indented.
func (m *mermaid) statement(i int) string {
	s := m.s
	e := s.h.Events[i]
	at := "t=" + s.at(e.Time) + " "
	if j := s.faultOf[i]; j >= 0 {
		if f := s.faults[j]; f.target >= 0 {
			return "    Note over " + m.id[f.target] + ": " + mermaidText(at+s.faultLabel(e, false)+" (by "+e.Process+")")
		}
		return "    Note over " + m.id[s.faults[j].lane] + ": " + mermaidText(at+s.faultLabel(e, true))
	}
	o := s.ops[s.opOf[i]]
	inv := s.h.Events[o.inv]
	if e.Type == history.Invoke {
		if o.server < 0 {
			return "    Note over " + m.id[o.lane] + ": " + mermaidText(at+s.invokeLabel(e))
		}
		return "    " + m.id[o.lane] + "->>" + m.id[o.server] + ": " + mermaidText(at+s.invokeLabel(e))
	}
	label := mermaidText(at + s.resultLabel(inv, &e))
	if o.server < 0 {
		return "    Note over " + m.id[o.lane] + ": " + label
	}
	arrow := "-->>"
	switch e.Type {
	case history.Fail:
		arrow = "--x"
	case history.Info:
		arrow = "--)"
	}
	return "    " + m.id[o.server] + arrow + m.id[o.lane] + ": " + label
}

// violation writes the note of violation vi over the lanes of its events.
func (m *mermaid) violation(vi int) {
	s := m.s
	v := s.violations[vi]
	lo, hi := len(s.lanes), -1
	for _, ev := range v.Events {
		if ev < 0 || ev >= len(s.h.Events) {
			continue
		}
		for _, l := range m.eventLanes(ev) {
			lo, hi = min(lo, l), max(hi, l)
		}
	}
	if hi < 0 {
		lo, hi = 0, len(s.lanes)-1
	}
	over := m.id[lo]
	if hi > lo {
		over += "," + m.id[hi]
	}
	text := "VIOLATION " + v.Invariant
	if v.Resource != "" {
		text += " @" + v.Resource
	}
	m.line("    Note over " + over + ": " + mermaidText(text+": "+v.Message))
}

// eventLanes are the lanes that event i is drawn on.
func (m *mermaid) eventLanes(i int) []int {
	s := m.s
	if j := s.opOf[i]; j >= 0 {
		if o := s.ops[j]; o.server >= 0 {
			return []int{o.lane, o.server}
		}
		return []int{s.ops[j].lane}
	}
	if j := s.faultOf[i]; j >= 0 {
		if f := s.faults[j]; f.target >= 0 {
			return []int{f.lane, f.target}
		}
		return []int{s.faults[j].lane}
	}
	return nil
}
