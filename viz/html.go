package viz

import (
	_ "embed"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fencecheck/fencecheck/history"
)

// HTML writes a self-contained page (HTML and inline SVG, no external
// resources) that draws h as a timeline: one lane per process plus the sink,
// time flowing down in event order with the time values on the left axis,
// each operation a bar from its invoke to its completion, faults as markers
// and shaded spans, lease validity as a strip ending at its deadline, and the
// events of opt.Violations highlighted under a banner that names each
// invariant. A short inline script only marks the page as rendered and
// scrolls the first violation into view; the picture needs no script.
func HTML(w io.Writer, h *history.History, opt Options) error {
	s := newScene(h, opt.Violations)
	return pageTemplate.Execute(w, buildPage(s, opt))
}

// Geometry of the timeline, in pixels.
const (
	axisMin  = 90 // the axis (event index and time), at least
	laneW    = 220
	tagMin   = 110 // the violated column, left of the lanes beside the axis (at least)
	headH    = 46
	rowH     = 30 // a label sits in the upper half, above its row's line
	padTop   = 10
	padBot   = 44 // room below the last row, where open operations end
	gapTick  = 8  // spacer when time advances by one unit
	gapJump  = 26 // spacer when it jumps further
	lifeX    = 34 // lifeline, from the lane's left edge
	above    = 5  // a label's baseline, above its row's line
	maxLabel = 30 // runes of a label before it is cut (the full text is in the tooltip)
)

// shape is one SVG element; K says which.
type shape struct {
	K      string // rect, line, circle, path, text, use
	X, Y   int    // rect, text, use: position; line: start; circle: centre
	W, H   int    // rect, use: size; circle: W is the radius
	X2, Y2 int    // line: end
	D      string // path data
	Href   string // use: symbol
	Class  string
	Text   string
	Title  string
	ID     string
	Event  string // data-event
	Viol   string // data-violation
}

type evRef struct {
	N            int
	Valid, Shown bool
}

type bannerItem struct {
	Invariant, Resource, Message string
	Events                       []evRef
}

// page is what the template draws. The timeline is four SVGs in a grid
// that scrolls both ways: the corner and the lanes' heads stay on top, and
// the side (the event index, the time and the violated column) stays on the
// left, so the violated column is readable however many lanes there are
// and however narrow the window.
type page struct {
	Title, Variant, Seed, Note, TimeUnit, Expect string
	Partial                                      bool
	Events, Ops, Processes                       int
	Violations                                   []bannerItem
	Links                                        []Link
	Notes                                        []string
	Width, SideW, Height, HeadH                  int
	Corner, Head, Side, Body                     []shape
}

// timeline lays out the shown events [lo, hi) and collects shapes in layers.
type timeline struct {
	s              *scene
	lo, hi         int
	axisW          int     // wide enough for the longest time label
	tagW           int     // the violated column: wide enough for its tags (0: no violations)
	side           []shape // the side SVG: axis and violated column
	top            []int   // top y of row i is top[i-lo]
	bottom, height int
	bg, mid, fg    []shape
	txt            []shape
}

func buildPage(s *scene, opt Options) page {
	h := s.h
	variant, seed, note := opt.meta(h)
	p := page{Title: opt.title(), Variant: variant, Note: note, TimeUnit: s.timeUnit(),
		Partial: h.Header.Partial, Events: len(h.Events), Ops: len(s.ops), Processes: s.processes, Links: opt.Links}
	if seed != 0 {
		p.Seed = strconv.FormatUint(seed, 10)
	}
	if h.Header.Expect != nil {
		p.Expect = "none"
		if len(h.Header.Expect) > 0 {
			p.Expect = strings.Join(h.Header.Expect, ", ")
		}
	}
	t := &timeline{s: s}
	t.window(opt.MaxEvents)
	if t.lo > 0 || t.hi < len(h.Events) {
		p.Notes = append(p.Notes, "The history has "+strconv.Itoa(len(h.Events))+" events: showing #"+
			strconv.Itoa(t.lo)+"–#"+strconv.Itoa(t.hi-1)+" only. Operations and spans that cross the cut are drawn open.")
	}
	if s.badRefs > 0 {
		p.Notes = append(p.Notes, strconv.Itoa(s.badRefs)+" violation event index(es) are outside the history and are not drawn.")
	}
	for _, v := range s.violations {
		b := bannerItem{Invariant: v.Invariant, Resource: v.Resource, Message: v.Message}
		for _, ev := range v.Events {
			valid := ev >= 0 && ev < len(h.Events)
			b.Events = append(b.Events, evRef{N: ev, Valid: valid, Shown: valid && ev >= t.lo && ev < t.hi})
		}
		p.Violations = append(p.Violations, b)
	}
	t.layout()
	t.drawRows()
	t.drawSpans()
	t.drawLeases()
	t.drawOps()
	t.drawFaults()
	p.Width = t.width()
	p.SideW = t.sideW()
	p.Height = t.height
	p.HeadH = headH
	p.Corner, p.Head = t.head()
	p.Side = t.side
	p.Body = append(append(append(t.bg, t.mid...), t.fg...), t.txt...)
	return p
}

// window picks the events to draw: all of them, or max of them starting at
// 0, or around the first violation when it lies beyond.
func (t *timeline) window(max int) {
	n := len(t.s.h.Events)
	if max <= 0 {
		max = DefaultMaxEvents
	}
	t.lo, t.hi = 0, n
	if n <= max {
		return
	}
	first := -1
	for _, v := range t.s.violations {
		for _, ev := range v.Events {
			if ev >= 0 && ev < n && (first < 0 || ev < first) {
				first = ev
			}
		}
		if first >= 0 {
			break
		}
	}
	if first >= max-max/4 {
		t.lo = min(first-max/4, n-max)
	}
	t.hi = t.lo + max
}

func (t *timeline) time(i int) int64 { return t.s.h.Events[i].Time }

func (t *timeline) layout() {
	t.axisW = axisMin
	if t.hi > t.lo {
		// "#index" on the left, "t=time" on the right, ~7px a character.
		t.axisW = max(axisMin, 7*(len(strconv.Itoa(t.hi-1))+len(t.s.at(t.time(t.hi-1))))+48)
	}
	if len(t.s.violations) > 0 {
		t.tagW = tagMin
		for i := t.lo; i < t.hi; i++ {
			if names := t.s.violationNames(i); len(names) > 0 {
				// ~7px a character of the bold tag, after its 20px mark.
				t.tagW = max(t.tagW, 7*len([]rune(cut(strings.Join(names, ", "))))+32)
			}
		}
	}
	y := padTop
	for i := t.lo; i < t.hi; i++ {
		if i > t.lo {
			switch d := t.time(i) - t.time(i-1); {
			case d == 1:
				y += gapTick
			case d > 1:
				y += gapJump
			}
		}
		t.top = append(t.top, y)
		y += rowH
	}
	t.bottom = y + padBot - 8
	t.height = y + padBot
}

// rowMid is the y of event i's row; events before the window map to its top
// and events after it (or -1, never) to its bottom.
func (t *timeline) rowMid(i int) int {
	switch {
	case i >= t.hi || i < 0:
		return t.bottom
	case i < t.lo:
		return 0
	}
	return t.top[i-t.lo] + rowH/2
}

// timeY is the y where time tm falls: the top of the first row at or after
// tm, interpolated inside the spacer before it; false when tm is after the
// last shown event.
func (t *timeline) timeY(tm int64) (int, bool) {
	k := sort.Search(t.hi-t.lo, func(j int) bool { return t.time(t.lo+j) >= tm })
	if k == t.hi-t.lo {
		return t.bottom, false
	}
	if k == 0 {
		return t.top[0], true
	}
	a, b := t.time(t.lo+k-1), t.time(t.lo+k)
	gapTop := t.top[k-1] + rowH
	frac := float64(tm-a) / float64(b-a)
	return gapTop + int(frac*float64(t.top[k]-gapTop)), true
}

func (t *timeline) laneX(l int) int    { return l * laneW }
func (t *timeline) lifeline(l int) int { return t.laneX(l) + lifeX }

// width is the width of the lanes' SVG.
func (t *timeline) width() int { return max(len(t.s.lanes)*laneW, laneW) }

// sideW is the width of the side: the axis and, when there are violations,
// the column that names them.
func (t *timeline) sideW() int { return t.axisW + t.tagW }

// cut shortens a label to maxLabel runes.
func cut(s string) string {
	r := []rune(s)
	if len(r) <= maxLabel {
		return s
	}
	return string(r[:maxLabel-1]) + "…"
}

// eventTitle is the tooltip of event i: its position, line and JSON.
func (t *timeline) eventTitle(i int) string {
	e := t.s.h.Events[i]
	title := "#" + strconv.Itoa(i)
	if e.Line > 0 {
		title += " (line " + strconv.Itoa(e.Line) + ")"
	}
	title += " " + strings.TrimSpace(string(history.AppendEvent(nil, e)))
	if names := t.s.violationNames(i); len(names) > 0 {
		title += "\nVIOLATION: " + strings.Join(names, ", ")
	}
	return title
}

// markClass is " viol" for an event a violation names.
func (t *timeline) markClass(i int) string {
	if i >= 0 && len(t.s.marks[i]) > 0 {
		return " viol"
	}
	return ""
}

// head returns the heads of the side (the corner) and of the lanes.
func (t *timeline) head() (corner, lanes []shape) {
	corner = []shape{
		{K: "rect", X: 0, Y: 0, W: t.sideW(), H: headH, Class: "headbg"},
		{K: "text", X: 8, Y: 20, Class: "hname", Text: "#"},
		{K: "text", X: t.axisW - 10, Y: 20, Class: "hname end", Text: "time"},
		{K: "text", X: t.axisW - 10, Y: 36, Class: "hkind end", Text: t.s.timeUnit()},
	}
	if t.tagW > 0 {
		corner = append(corner, shape{K: "text", X: t.axisW + 8, Y: 20, Class: "hname", Text: "violated"},
			shape{K: "line", X: t.sideW() - 1, Y: 0, X2: t.sideW() - 1, Y2: headH, Class: "sideedge"})
	}
	lanes = []shape{{K: "rect", X: 0, Y: 0, W: t.width(), H: headH, Class: "headbg"}}
	kinds := map[laneKind]string{coordinatorLane: "coordinator", workerLane: "process", sinkLane: "fenced sink", nemesisLane: "faults"}
	for i, l := range t.s.lanes {
		x := t.laneX(i)
		lanes = append(lanes,
			shape{K: "rect", X: x + 6, Y: 8, W: 6, H: 30, Class: "hacc k" + strconv.Itoa(int(l.kind))},
			shape{K: "text", X: x + 20, Y: 21, Class: "hname", Text: cut(l.name), Title: l.name},
			shape{K: "text", X: x + 20, Y: 36, Class: "hkind", Text: kinds[l.kind]})
	}
	return corner, lanes
}

func (t *timeline) drawRows() {
	w, sw := t.width(), t.sideW()
	t.side = append(t.side, shape{K: "rect", X: 0, Y: 0, W: sw, H: t.height, Class: "sidebg"})
	for i := range t.s.lanes {
		if i%2 == 1 {
			t.bg = append(t.bg, shape{K: "rect", X: t.laneX(i), Y: 0, W: laneW, H: t.height, Class: "lanealt"})
		}
		t.bg = append(t.bg, shape{K: "line", X: t.lifeline(i), Y: 0, X2: t.lifeline(i), Y2: t.height, Class: "life"})
	}
	var text []shape // the side's text, above its rows
	for i := t.lo; i < t.hi; i++ {
		y := t.top[i-t.lo]
		mid := y + rowH/2
		if i == t.lo || t.time(i) != t.time(i-1) {
			if i > t.lo {
				gy := (t.top[i-t.lo-1] + rowH + y) / 2
				t.bg = append(t.bg, shape{K: "line", X: 0, Y: gy, X2: w, Y2: gy, Class: "tgrid"})
				t.side = append(t.side, shape{K: "line", X: 0, Y: gy, X2: sw, Y2: gy, Class: "tgrid"})
				if d := t.time(i) - t.time(i-1); d > 1 {
					text = append(text, shape{K: "text", X: t.axisW / 2, Y: gy + 4, Class: "lbl gap mid", Text: "+" + t.s.at(d)})
				}
			}
			text = append(text, shape{K: "text", X: t.axisW - 10, Y: mid + 4, Class: "time end", Text: "t=" + t.s.at(t.time(i))})
		}
		text = append(text, shape{K: "text", X: 8, Y: mid + 4, Class: "idx", Text: "#" + strconv.Itoa(i)})
		if names := t.s.violationNames(i); len(names) > 0 {
			viol := strings.Join(names, " ")
			t.bg = append(t.bg, shape{K: "rect", X: 0, Y: y, W: w, H: rowH, Class: "hlrow", Viol: viol, Event: strconv.Itoa(i)})
			t.side = append(t.side, shape{K: "rect", X: 0, Y: y, W: sw, H: rowH, Class: "hlrow side"})
			tx := t.axisW
			text = append(text, shape{K: "path", D: "M" + strconv.Itoa(tx+4) + " " + strconv.Itoa(mid) + "l8 -6v12z", Class: "vtagmark"},
				shape{K: "text", X: tx + 16, Y: mid + 4, Class: "vtag", Text: cut(strings.Join(names, ", ")), Title: t.eventTitle(i)})
		}
	}
	if t.tagW > 0 {
		t.side = append(t.side, shape{K: "line", X: sw - 1, Y: 0, X2: sw - 1, Y2: t.height, Class: "sideedge"})
	}
	t.side = append(t.side, text...)
}

var spanNames = map[string]string{history.Pause: "paused", history.Crash: "crashed", history.Partition: "partitioned"}

func (t *timeline) drawSpans() {
	for _, sp := range t.s.spans {
		if sp.from >= t.hi || (sp.to >= 0 && sp.to < t.lo) {
			continue
		}
		y1, y2 := t.rowMid(sp.from), t.rowMid(sp.to)
		title := spanNames[sp.kind] + " from #" + strconv.Itoa(sp.from) + " (t=" + t.s.at(t.time(sp.from)) + ")"
		if sp.to >= 0 {
			title += " to #" + strconv.Itoa(sp.to) + " (t=" + t.s.at(t.time(sp.to)) + ")"
		} else {
			title += " to the end"
		}
		t.bg = append(t.bg, shape{K: "rect", X: t.laneX(sp.lane) + 4, Y: y1, W: laneW - 8, H: y2 - y1, Class: "span " + sp.kind, Title: title})
	}
}

func (t *timeline) drawLeases() {
	for _, ls := range t.s.leases {
		if ls.from >= t.hi || (ls.end >= 0 && ls.end < t.lo) {
			continue
		}
		y1 := t.rowMid(ls.from)
		x := t.lifeline(ls.lane) - 18
		name := "lease token=" + itoa(ls.token)
		if t.s.multiRes {
			name += " @" + ls.resource
		}
		title := name + ": from t=" + t.s.at(ls.fromTime) + " (#" + strconv.Itoa(ls.from) + "), ttl=" + t.s.at(ls.ttl) + ", deadline t=" + t.s.at(ls.deadline)
		if ls.end >= 0 {
			y2 := t.rowMid(ls.end)
			title += "; " + ls.endedBy + " at #" + strconv.Itoa(ls.end)
			t.mid = append(t.mid, shape{K: "rect", X: x, Y: y1, W: 6, H: y2 - y1, Class: "lease", Title: title})
			continue
		}
		y2, inside := t.timeY(ls.deadline)
		cls, label := "lease", "token="+itoa(ls.token)+" expires t="+t.s.at(ls.deadline)
		if !inside {
			cls, label = "lease open", "token="+itoa(ls.token)+" valid until t="+t.s.at(ls.deadline)
			title += " (after the last shown event)"
		}
		t.mid = append(t.mid,
			shape{K: "rect", X: x, Y: y1, W: 6, H: y2 - y1, Class: cls, Title: title},
			shape{K: "line", X: x - 6, Y: y2, X2: t.laneX(ls.lane) + laneW - 6, Y2: y2, Class: "deadline"})
		t.txt = append(t.txt, shape{K: "text", X: t.laneX(ls.lane) + laneW - 8, Y: y2 - 4, Class: "dl end", Text: label, Title: title})
	}
}

func (t *timeline) drawOps() {
	h := t.s.h
	for _, o := range t.s.ops {
		if o.inv >= t.hi || (o.comp >= 0 && o.comp < t.lo) {
			continue
		}
		inv := h.Events[o.inv]
		var comp *history.Event
		if o.comp >= 0 && o.comp < t.hi {
			comp = &h.Events[o.comp]
		}
		res := t.s.result(o)
		if comp == nil {
			res = "open"
		}
		y1, y2 := t.rowMid(o.inv), t.rowMid(o.comp)
		if comp == nil {
			y2 = t.bottom
		}
		x := t.lifeline(o.lane)
		title := t.s.invokeLabel(inv) + "  ⇒  " + t.s.resultLabel(inv, comp)
		viol := t.markClass(o.inv)
		if viol == "" && comp != nil {
			viol = t.markClass(o.comp)
		}
		t.fg = append(t.fg, shape{K: "rect", X: x - 4, Y: y1, W: 8, H: max(y2-y1, 2), Class: "bar " + res + viol, Title: title})
		if o.inv >= t.lo {
			t.fg = append(t.fg, shape{K: "circle", X: x, Y: y1, W: 4, Class: "dot inv" + t.markClass(o.inv),
				ID: "ev-" + strconv.Itoa(o.inv), Event: strconv.Itoa(o.inv), Title: t.eventTitle(o.inv)})
			label := t.s.invokeLabel(inv)
			if comp == nil {
				label = t.s.resultLabel(inv, nil)
			}
			t.txt = append(t.txt, shape{K: "text", X: x + 10, Y: y1 - above, Class: "lbl t-inv", Text: cut(label), Title: label})
			if o.server >= 0 {
				t.mid = append(t.mid, arrow(x, t.lifeline(o.server), y1, "req"))
			}
		}
		if comp == nil {
			t.fg = append(t.fg, shape{K: "path", D: "M" + strconv.Itoa(x-5) + " " + strconv.Itoa(y2-4) + "l5 6l5 -6", Class: "openend"})
			continue
		}
		t.fg = append(t.fg, shape{K: "circle", X: x, Y: y2, W: 4, Class: "dot " + res + t.markClass(o.comp),
			ID: "ev-" + strconv.Itoa(o.comp), Event: strconv.Itoa(o.comp), Title: t.eventTitle(o.comp)})
		label := t.s.resultLabel(inv, comp)
		t.txt = append(t.txt, shape{K: "text", X: x + 10, Y: y2 - above, Class: "lbl t-" + res, Text: cut(label), Title: label})
		if o.server >= 0 {
			sx := t.lifeline(o.server)
			t.mid = append(t.mid, arrow(sx, x, y2, res))
			t.fg = append(t.fg, shape{K: "rect", X: sx - 4, Y: y2 - 4, W: 8, H: 8, Class: "srv " + res + t.markClass(o.comp), Title: t.eventTitle(o.comp)})
			sl := t.s.serverLabel(inv, comp)
			t.txt = append(t.txt, shape{K: "text", X: sx + 10, Y: y2 - above, Class: "lbl t-" + res, Text: cut(sl), Title: sl})
		}
	}
}

// arrow is a horizontal message from x1 to x2 at y, stopping short of the
// lifelines' marks.
func arrow(x1, x2, y int, class string) shape {
	if x2 > x1 {
		x1, x2 = x1+6, x2-7
	} else {
		x1, x2 = x1-6, x2+7
	}
	return shape{K: "line", X: x1, Y: y, X2: x2, Y2: y, Class: "arr " + class}
}

// faultSymbols names the SVG symbol of each fault.
var faultSymbols = map[string]string{
	history.Pause: "f-pause", history.Resume: "f-resume", history.Crash: "f-crash", history.Restart: "f-restart",
	history.Partition: "f-partition", history.Heal: "f-heal", history.Drop: "f-drop", history.Duplicate: "f-duplicate",
	history.Clock: "f-clock",
}

func (t *timeline) drawFaults() {
	for _, m := range t.s.faults {
		if m.ev < t.lo || m.ev >= t.hi {
			continue
		}
		e := t.s.h.Events[m.ev]
		sym, ok := faultSymbols[e.F]
		if !ok {
			sym = "f-other"
		}
		y := t.rowMid(m.ev)
		title := t.eventTitle(m.ev)
		viol := t.markClass(m.ev)
		marker := func(l int, label string) {
			x := t.lifeline(l)
			if viol != "" {
				t.fg = append(t.fg, shape{K: "circle", X: x, Y: y, W: 11, Class: "vring viol"})
			}
			t.fg = append(t.fg, shape{K: "use", Href: "#" + sym, X: x - 8, Y: y - 8, W: 16, H: 16, Class: "fault"})
			t.txt = append(t.txt, shape{K: "text", X: x + 10, Y: y - above, Class: "lbl t-fault", Text: cut(label), Title: title})
		}
		marker(m.lane, t.s.faultLabel(e, true))
		// The event's anchor: an invisible hit area carrying its index.
		t.fg = append(t.fg, shape{K: "circle", X: t.lifeline(m.lane), Y: y, W: 8, Class: "hit", ID: "ev-" + strconv.Itoa(m.ev), Event: strconv.Itoa(m.ev), Title: title})
		if m.target >= 0 {
			t.mid = append(t.mid, arrow(t.lifeline(m.lane), t.lifeline(m.target), y, "nem"))
			marker(m.target, t.s.faultLabel(e, false))
		}
	}
}

//go:embed page.tmpl
var pageSource string

var pageTemplate = template.Must(template.New("page").Parse(pageSource))
