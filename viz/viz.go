// Package viz draws pictures of a history: a self-contained HTML timeline
// (HTML) and a Mermaid sequence diagram for docs and reviews (Mermaid).
//
// Both read the same scene: one lane per process (the coordinator first, then
// the workers in natural order), a lane for the fenced sink that serves
// advance, write and read, and a lane for the nemesis when it appears; every
// operation paired from its invoke to its completion; fault spans (paused,
// crashed, partitioned); and each lease's validity, derived from the ttl of
// its grant and renewals by the history's own clock. Output depends on the
// input only: the same history and options give the same bytes.
package viz

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// DefaultMaxEvents is how many events HTML draws when Options.MaxEvents is 0.
const DefaultMaxEvents = 3000

// Options say what to put around the picture of a history.
type Options struct {
	// Title heads the page; empty means "fencecheck history".
	Title string
	// Variant, Seed and Note describe the run; empty (zero) values are taken
	// from the history's header.
	Variant string
	Seed    uint64
	Note    string
	// Violations are highlighted: their Events (positions in the history's
	// events, 0-based) are marked, and a banner names each invariant and its
	// message.
	Violations []spec.Violation
	// Links are extra references shown with the header, e.g. a porcupine
	// linearizability visualization written beside the page.
	Links []Link
	// MaxEvents bounds how many events HTML draws (0 means
	// DefaultMaxEvents); a longer history is cut to a window of that many
	// events, around the first violation when there is one, with a note.
	MaxEvents int
}

// Link is an extra reference shown on the HTML page.
type Link struct {
	// Text is what the link says; Href where it leads (a relative path, or
	// an http(s) URL; html/template neutralizes unsafe schemes).
	Text string
	Href string
}

func (o Options) title() string {
	if o.Title == "" {
		return "fencecheck history"
	}
	return o.Title
}

// meta returns the run's description: the options' values, else the header's.
func (o Options) meta(h *history.History) (variant string, seed uint64, note string) {
	variant, seed, note = o.Variant, o.Seed, o.Note
	if variant == "" {
		variant = h.Header.Variant
	}
	if seed == 0 {
		seed = h.Header.Seed
	}
	if note == "" {
		note = h.Header.Note
	}
	return variant, seed, note
}

type laneKind int

const (
	coordinatorLane laneKind = iota
	workerLane
	sinkLane
	nemesisLane
)

// lane is one column (HTML) or participant (Mermaid).
type lane struct {
	name string
	kind laneKind
}

// op is one operation: an invocation and its completion.
type op struct {
	inv, comp int // positions in Events; comp is -1 while open
	lane      int // the caller's lane
	server    int // the lane that serves it, or -1 when the caller does
}

// lease is one validity segment of a lease: from a grant or renewal (the
// event at from, at time fromTime) until its deadline, unless a renewal or
// a release at end cut it short.
type lease struct {
	lane     int
	resource string
	token    int64
	ttl      int64
	from     int
	fromTime int64
	deadline int64
	end      int    // -1 when the segment runs to its deadline
	endedBy  string // "renewed" or "released" when end >= 0
}

// span is a stretch of a lane under a fault: paused, crashed or partitioned.
type span struct {
	lane     int
	kind     string // history.Pause, history.Crash or history.Partition
	from, to int    // to is -1 when the history ends inside the span
}

// faultMark is a fault event drawn on a lane.
type faultMark struct {
	ev     int
	lane   int // where the fault is recorded (the nemesis, or the process)
	target int // the lane it hits when that differs from lane, else -1
}

// scene is what both pictures draw.
type scene struct {
	h      *history.History
	lanes  []lane
	byProc map[string]int
	sink   int // the sink's lane, or -1
	coord  int // the coordinator's lane, or -1
	ops    []op
	opOf   []int // event position -> index in ops, or -1
	// faultOf maps an event position to its index in faults, or -1.
	faultOf []int
	leases  []lease
	spans   []span
	faults  []faultMark
	// marks maps an event position to the violations (indexes into
	// violations) that name it.
	marks      map[int][]int
	violations []spec.Violation
	// badRefs counts violation event indexes outside the history.
	badRefs int
	// multiRes is true when operations touch more than one resource.
	multiRes bool
	// processes counts the distinct processes of the history.
	processes int
}

func isSinkOp(f string) bool {
	return f == history.Advance || f == history.Write || f == history.Read
}

func isLeaseOp(f string) bool {
	return f == history.Acquire || f == history.Renew || f == history.Release
}

func newScene(h *history.History, violations []spec.Violation) *scene {
	violations = ReadableViolations(violations) // what a person reads: no model action text
	s := &scene{h: h, byProc: map[string]int{}, sink: -1, coord: -1, marks: map[int][]int{}, violations: violations}
	s.layoutLanes()
	s.opOf = make([]int, len(h.Events))
	s.faultOf = make([]int, len(h.Events))
	for i := range s.opOf {
		s.opOf[i], s.faultOf[i] = -1, -1
	}
	for _, o := range h.Ops() {
		e := h.Events[o.Invoke]
		p := op{inv: o.Invoke, comp: o.Complete, lane: s.byProc[e.Process], server: -1}
		switch {
		case isSinkOp(e.F):
			p.server = s.sink
		case isLeaseOp(e.F):
			p.server = s.coord
		}
		if p.server == p.lane {
			p.server = -1
		}
		s.opOf[o.Invoke] = len(s.ops)
		if o.Complete >= 0 {
			s.opOf[o.Complete] = len(s.ops)
		}
		s.ops = append(s.ops, p)
	}
	s.deriveLeases()
	s.deriveFaults()
	for vi, v := range violations {
		for _, ev := range v.Events {
			if ev < 0 || ev >= len(h.Events) {
				s.badRefs++
				continue
			}
			if !slices.Contains(s.marks[ev], vi) {
				s.marks[ev] = append(s.marks[ev], vi)
			}
		}
	}
	return s
}

// layoutLanes orders the lanes: coordinator, workers (natural order), sink,
// nemesis. The coordinator and sink lanes exist when an operation needs them;
// a process the nemesis hits has a lane even with no event of its own.
func (s *scene) layoutLanes() {
	var procs []string
	isProc := map[string]bool{}
	addProc := func(p string) {
		if p != history.Coordinator && p != history.Nemesis && p != history.Sink && !isProc[p] {
			isProc[p] = true
			procs = append(procs, p)
		}
	}
	seen := map[string]bool{}
	resources := map[string]bool{}
	needCoord, needSink, hasNemesis := false, false, false
	for _, e := range s.h.Events {
		seen[e.Process] = true
		if e.Resource != "" {
			resources[e.Resource] = true
		}
		needSink = needSink || isSinkOp(e.F) || e.Process == history.Sink
		needCoord = needCoord || isLeaseOp(e.F) || e.Process == history.Coordinator
		hasNemesis = hasNemesis || e.Process == history.Nemesis
		addProc(e.Process)
	}
	for _, e := range s.h.Events {
		switch t := e.Value.Target; {
		case e.Process != history.Nemesis || t == "" || (t == "sink" && needSink):
		case t == history.Coordinator:
			needCoord = true
		default:
			addProc(t)
		}
	}
	s.processes = len(seen)
	s.multiRes = len(resources) > 1
	slices.SortFunc(procs, naturalCompare)
	if needCoord {
		s.coord = len(s.lanes)
		s.byProc[history.Coordinator] = s.coord
		s.lanes = append(s.lanes, lane{history.Coordinator, coordinatorLane})
	}
	for _, p := range procs {
		s.byProc[p] = len(s.lanes)
		s.lanes = append(s.lanes, lane{p, workerLane})
	}
	if needSink {
		s.sink = len(s.lanes)
		s.byProc[history.Sink] = s.sink // the sink's own events: its faults and apply
		s.lanes = append(s.lanes, lane{"sink", sinkLane})
	}
	if hasNemesis {
		s.byProc[history.Nemesis] = len(s.lanes)
		s.lanes = append(s.lanes, lane{history.Nemesis, nemesisLane})
	}
}

// naturalCompare orders strings with their digit runs compared as numbers:
// w2 before w10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na := strings.TrimLeft(a[:da], "0")
			nb := strings.TrimLeft(b[:db], "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			if c := da - db; c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// addSat adds two non-negative times, saturating at the largest int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// deriveLeases follows grants, renewals and releases in the order of their
// ok completions: a grant ok at time t with ttl d is valid until t+d; an ok
// renewal at t' starts a new segment until t'+d; an ok release ends it.
func (s *scene) deriveLeases() {
	type key struct {
		resource string
		token    int64
	}
	current := map[key]int{} // latest segment of a lease, index into s.leases
	var done []op
	for _, o := range s.ops {
		if o.comp >= 0 && s.h.Events[o.comp].Type == history.OK && isLeaseOp(s.h.Events[o.inv].F) {
			done = append(done, o)
		}
	}
	slices.SortFunc(done, func(a, b op) int { return a.comp - b.comp })
	for _, o := range done {
		inv, comp := s.h.Events[o.inv], s.h.Events[o.comp]
		switch inv.F {
		case history.Acquire:
			ttl := comp.Value.TTL
			if ttl == 0 {
				ttl = inv.Value.TTL
			}
			k := key{inv.Resource, comp.Value.Token}
			current[k] = len(s.leases)
			s.leases = append(s.leases, lease{lane: o.lane, resource: inv.Resource, token: k.token, ttl: ttl,
				from: o.comp, fromTime: comp.Time, deadline: addSat(comp.Time, ttl), end: -1})
		case history.Renew:
			k := key{inv.Resource, inv.Value.Token}
			ttl := inv.Value.TTL
			if ttl == 0 {
				ttl = comp.Value.TTL
			}
			i, ok := current[k]
			if ok {
				if ttl == 0 {
					ttl = s.leases[i].ttl
				}
				if s.leases[i].end < 0 && s.leases[i].deadline > comp.Time {
					s.leases[i].end, s.leases[i].endedBy = o.comp, "renewed"
				}
			}
			if ttl == 0 {
				continue // a renewal of an unknown lease, with no ttl: nothing to draw
			}
			current[k] = len(s.leases)
			s.leases = append(s.leases, lease{lane: o.lane, resource: inv.Resource, token: k.token, ttl: ttl,
				from: o.comp, fromTime: comp.Time, deadline: addSat(comp.Time, ttl), end: -1})
		case history.Release:
			k := key{inv.Resource, inv.Value.Token}
			if i, ok := current[k]; ok {
				if s.leases[i].end < 0 && s.leases[i].deadline > comp.Time {
					s.leases[i].end, s.leases[i].endedBy = o.comp, "released"
				}
				delete(current, k)
			}
		}
	}
	slices.SortStableFunc(s.leases, func(a, b lease) int { return a.from - b.from })
}

// faultLane returns the lane a fault event hits: its process, or for the
// nemesis the lane its target names (-1 when none does).
func (s *scene) faultLane(e history.Event) int {
	if e.Process != history.Nemesis {
		return s.byProc[e.Process]
	}
	if l, ok := s.byProc[e.Value.Target]; ok && e.Value.Target != history.Nemesis {
		return l
	}
	if e.Value.Target == "sink" && s.sink >= 0 {
		return s.sink
	}
	return -1
}

// deriveFaults places the fault markers and the paused, crashed and
// partitioned spans they open and close.
func (s *scene) deriveFaults() {
	opens := map[string]string{history.Resume: history.Pause, history.Restart: history.Crash, history.Heal: history.Partition}
	for i, e := range s.h.Events {
		if !history.IsFault(e.F) && !history.IsSinkEvent(e.F) {
			continue // a sink event is drawn as a marker on the sink's lane, like a fault
		}
		at := s.byProc[e.Process]
		hit := s.faultLane(e)
		m := faultMark{ev: i, lane: at, target: -1}
		if hit >= 0 && hit != at {
			m.target = hit
		}
		s.faultOf[i] = len(s.faults)
		s.faults = append(s.faults, m)
		if hit < 0 {
			hit = at // a fault on no known lane is drawn on the nemesis
		}
		switch e.F {
		case history.Pause, history.Crash, history.Partition:
			if s.openSpan(hit, e.F) < 0 {
				s.spans = append(s.spans, span{lane: hit, kind: e.F, from: i, to: -1})
			}
		case history.Resume, history.Restart, history.Heal:
			kind := opens[e.F]
			if e.F == history.Heal && e.Process == history.Nemesis && e.Value.Target == "" {
				for j := range s.spans { // a heal with no target heals every partition
					if s.spans[j].kind == kind && s.spans[j].to < 0 {
						s.spans[j].to = i
					}
				}
			} else if j := s.openSpan(hit, kind); j >= 0 {
				s.spans[j].to = i
			}
		}
	}
}

func (s *scene) openSpan(l int, kind string) int {
	for j := range s.spans {
		if sp := s.spans[j]; sp.lane == l && sp.kind == kind && sp.to < 0 {
			return j
		}
	}
	return -1
}

// result is the outcome class of an op: "ok", "fail", "info" or "open".
func (s *scene) result(o op) string {
	if o.comp < 0 {
		return "open"
	}
	return string(s.h.Events[o.comp].Type)
}

// violationNames lists the invariants that name event i, in violation order.
func (s *scene) violationNames(i int) []string {
	var names []string
	for _, vi := range s.marks[i] {
		if n := s.violations[vi].Invariant; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// timeUnit is the unit the pictures show times and durations in: a
// history in nanoseconds (explore real, Jepsen) is shown in milliseconds.
func (s *scene) timeUnit() string {
	if s.h.Header.TimeUnit == "ns" {
		return "ms"
	}
	return s.h.Header.TimeUnit
}

// at is a time or a duration of the history in the pictures' unit
// (timeUnit): nanoseconds become milliseconds with up to three decimals
// ("12.5" for 12500000 ns); other units are shown as they are.
func (s *scene) at(n int64) string {
	if s.h.Header.TimeUnit != "ns" {
		return itoa(n)
	}
	sign := ""
	if n < 0 {
		sign, n = "-", -n // a clock offset may be negative
	}
	ms, us := n/1e6, n%1e6/1e3
	if us == 0 {
		return sign + itoa(ms)
	}
	return sign + itoa(ms) + "." + strings.TrimRight(fmt.Sprintf("%03d", us), "0")
}
