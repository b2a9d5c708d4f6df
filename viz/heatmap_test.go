package viz

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sweepGrid is a 3×2 sweep of two invariants with every kind of cell: linked
// and unlinked violations of lengths 7, 9, 10 and 12, safe with and without a
// proof (one safe cell carrying a Link that must not be drawn), incomplete.
func sweepGrid() SweepGrid {
	g := SweepGrid{
		Variant:    "ttl-only-lock",
		X:          Axis{Name: "workers", Values: []int{1, 2, 3}},
		Y:          Axis{Name: "ttl", Values: []int{10, 20}},
		Invariants: []string{"fencing", "mutual-exclusion"},
		Rules:      map[string]string{"fencing": "violated iff workers >= 2"},
	}
	for _, inv := range g.Invariants {
		for _, y := range g.Y.Values {
			for _, x := range g.X.Values {
				c := SweepCell{X: x, Y: y, Invariant: inv, Method: "bfs", Detail: fmt.Sprintf("%d states", 100*x+y)}
				switch {
				case inv == "fencing" && x >= 2:
					c.Verdict, c.Length = "violated", 3*x+y/5-1
					if y == 10 {
						c.Link = fmt.Sprintf("cex/fencing-%d-%d.html", x, y)
					}
				case inv == "fencing":
					c.Verdict, c.Proof = "safe", y == 10
					c.Link = "stale.html" // not violated: never linked
				case x == 3:
					c.Verdict, c.Method = "incomplete", "random"
				default:
					c.Verdict, c.Proof = "safe", true
				}
				g.Cells = append(g.Cells, c)
			}
		}
	}
	return g
}

func heatmapOf(t *testing.T, g SweepGrid) string {
	t.Helper()
	var b bytes.Buffer
	if err := Heatmap(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// heatTD matches one cell element as the template writes it.
var heatTD = regexp.MustCompile(`<td class="cell ([^"]*)" data-x="([^"]*)" data-y="([^"]*)" data-invariant="([^"]*)" data-verdict="([^"]*)" title="([^"]*)">(.*?)</td>`)

type drawnCell struct {
	class, x, y, inv, verdict, title, body string
}

func drawnCells(page string) []drawnCell {
	var out []drawnCell
	for _, m := range heatTD.FindAllStringSubmatch(page, -1) {
		out = append(out, drawnCell{m[1], m[2], m[3], html.UnescapeString(m[4]), m[5], html.UnescapeString(m[6]), m[7]})
	}
	return out
}

// TestHeatmapCells: every cell of the grid is drawn once, in its map, with
// its data attributes, mark, colour class and tooltip.
func TestHeatmapCells(t *testing.T) {
	g := sweepGrid()
	page := heatmapOf(t, g)
	got := drawnCells(page)
	if len(got) != len(g.Cells) || strings.Count(page, "data-verdict=") != len(g.Cells) {
		t.Fatalf("%d cells drawn (%d data-verdict), want %d", len(got), strings.Count(page, "data-verdict="), len(g.Cells))
	}
	byKey := map[string]drawnCell{}
	for _, d := range got {
		k := d.x + "/" + d.y + "/" + d.inv
		if _, dup := byKey[k]; dup {
			t.Errorf("cell %s drawn twice", k)
		}
		byKey[k] = d
	}
	for _, c := range g.Cells {
		k := fmt.Sprintf("%d/%d/%s", c.X, c.Y, c.Invariant)
		d, ok := byKey[k]
		if !ok {
			t.Errorf("cell %s not drawn", k)
			continue
		}
		if d.verdict != c.Verdict {
			t.Errorf("cell %s: data-verdict %q, want %q", k, d.verdict, c.Verdict)
		}
		text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(d.body, "")
		var wantText, wantClass string
		var wantTitle []string
		switch {
		case c.Verdict == "violated":
			wantText, wantClass = fmt.Sprintf("✗ %d", c.Length), "viol"
			wantTitle = []string{fmt.Sprintf("counterexample of %d actions", c.Length)}
		case c.Verdict == "safe" && c.Proof:
			wantText, wantClass, wantTitle = "✓", "proof", []string{"exhaustive proof"}
		case c.Verdict == "safe":
			wantText, wantClass, wantTitle = "✓?", "budget", []string{"search budget", "no proof"}
		default:
			wantText, wantClass, wantTitle = "?", "incomplete", []string{"incomplete"}
		}
		if text != wantText {
			t.Errorf("cell %s shows %q, want %q", k, text, wantText)
		}
		if !strings.HasPrefix(d.class, wantClass) {
			t.Errorf("cell %s has class %q, want %q", k, d.class, wantClass)
		}
		for _, w := range append(wantTitle, c.Detail, "method "+c.Method, c.Verdict, fmt.Sprintf("workers=%d, ttl=%d", c.X, c.Y)) {
			if !strings.Contains(d.title, w) {
				t.Errorf("cell %s tooltip %q lacks %q", k, d.title, w)
			}
		}
	}
	// Shortest counterexample (7) darkest, longest lightest.
	if d := byKey["2/10/fencing"]; d.class != "viol s0" {
		t.Errorf("shortest counterexample (7) has class %q, want viol s0", d.class)
	}
	if d := byKey["3/20/fencing"]; d.class != "viol s4" {
		t.Errorf("longest counterexample (12) has class %q, want viol s4", d.class)
	}
	// Maps in the order listed, rows and columns in axis order.
	if i, j := strings.Index(page, "<h2>fencing</h2>"), strings.Index(page, "<h2>mutual-exclusion</h2>"); i < 0 || j < i {
		t.Errorf("maps out of order: fencing at %d, mutual-exclusion at %d", i, j)
	}
	var order []string
	for _, d := range got[:6] {
		order = append(order, d.x+"/"+d.y)
	}
	if want := []string{"1/10", "2/10", "3/10", "1/20", "2/20", "3/20"}; !slices.Equal(order, want) {
		t.Errorf("first map's cells in order %v, want %v", order, want)
	}
	// The rule under its own map only; a legend.
	rule := strings.Index(page, `<div class="rule">boundary: violated iff workers &gt;= 2</div>`)
	if rule < strings.Index(page, "<h2>fencing</h2>") || rule > strings.Index(page, "<h2>mutual-exclusion</h2>") {
		t.Errorf("fencing's rule not under its map (at %d)", rule)
	}
	if strings.Count(page, `class="rule"`) != 1 {
		t.Errorf("%d rules drawn, want 1", strings.Count(page, `class="rule"`))
	}
	for _, w := range []string{`class="legend"`, "counterexample of 7 (darkest) to 12 actions", "safe: exhaustive proof", "no proof", "incomplete"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if strings.Contains(page, `src=`) || strings.Contains(page, `<link`) || strings.Contains(page, "http") {
		t.Error("page refers to an external resource")
	}
}

// TestHeatmapLinks: only a violated cell with a Link is an <a href> to it.
func TestHeatmapLinks(t *testing.T) {
	g := sweepGrid()
	page := heatmapOf(t, g)
	var links []string
	for _, d := range drawnCells(page) {
		m := regexp.MustCompile(`^<a href="([^"]*)">`).FindStringSubmatch(d.body)
		if m == nil {
			if strings.Contains(d.body, "<a") {
				t.Errorf("cell %s/%s/%s: malformed link %q", d.x, d.y, d.inv, d.body)
			}
			continue
		}
		if d.verdict != "violated" {
			t.Errorf("%s cell %s/%s/%s is linked to %s", d.verdict, d.x, d.y, d.inv, m[1])
		}
		links = append(links, m[1])
	}
	if want := []string{"cex/fencing-2-10.html", "cex/fencing-3-10.html"}; !slices.Equal(links, want) {
		t.Errorf("links %v, want %v", links, want)
	}
	if n := strings.Count(page, "<a "); n != 2 {
		t.Errorf("%d <a> in the page, want 2", n)
	}
	if strings.Contains(page, "stale.html") {
		t.Error("a safe cell's Link is drawn")
	}
}

// TestHeatmapEscaping: names, details, rules and links from the grid cannot
// inject markup or script.
func TestHeatmapEscaping(t *testing.T) {
	const evil = `<script>alert("x")</script>&"'`
	g := SweepGrid{
		Variant:    "v" + evil,
		X:          Axis{Name: "x" + evil, Values: []int{1}},
		Y:          Axis{Name: "y" + evil, Values: []int{2}},
		Invariants: []string{"inv" + evil},
		Rules:      map[string]string{"inv" + evil: "rule" + evil},
		Cells: []SweepCell{{X: 1, Y: 2, Invariant: "inv" + evil, Verdict: "violated", Length: 3,
			Method: "bfs" + evil, Detail: `"><img onerror=alert(1)>` + evil, Link: `javascript:alert(1)`}},
	}
	page := heatmapOf(t, g)
	if n := strings.Count(page, "<script>"); n != 1 {
		t.Errorf("%d <script> elements, want only the page's own", n)
	}
	for _, bad := range []string{"<img", "javascript:", `alert("x")`} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains unescaped %q", bad)
		}
	}
	for _, want := range []string{"<title>Sweep of v&lt;script&gt;", "<h2>inv&lt;script&gt;", "boundary: rule&lt;script&gt;", `href="#ZgotmplZ"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	d := drawnCells(page)
	if len(d) != 1 || d[0].inv != "inv"+evil || !strings.Contains(d[0].title, `"><img onerror=alert(1)>`) {
		t.Errorf("cell attributes do not round-trip: %+v", d)
	}
}

// TestHeatmapDeterministic: the same grid gives the same bytes, whatever
// the order of its cells and of its rules map.
func TestHeatmapDeterministic(t *testing.T) {
	g := sweepGrid()
	g.Rules["mutual-exclusion"] = "never violated"
	first := heatmapOf(t, g)
	for i := range 20 {
		h := sweepGrid()
		h.Rules = map[string]string{"mutual-exclusion": "never violated", "fencing": g.Rules["fencing"]}
		cells := slices.Clone(h.Cells)
		slices.Reverse(cells)
		if i%2 == 1 {
			cells = append(cells[i%len(cells):], cells[:i%len(cells)]...)
		}
		h.Cells = cells
		if got := heatmapOf(t, h); got != first {
			t.Fatalf("render %d differs from the first", i)
		}
	}
}

// TestHeatmap1D: a sweep with a single, unnamed Y value draws one row with
// no Y label.
func TestHeatmap1D(t *testing.T) {
	g := SweepGrid{Variant: "d", X: Axis{Name: "n", Values: []int{4, 8}}, Y: Axis{Values: []int{0}},
		Invariants: []string{"fencing"},
		Cells: []SweepCell{{X: 4, Invariant: "fencing", Verdict: "safe", Proof: true},
			{X: 8, Invariant: "fencing", Verdict: "violated", Length: 7}}}
	page := heatmapOf(t, g)
	if n := strings.Count(page, "<tr>"); n != 2 {
		t.Errorf("%d rows (header included), want 2", n)
	}
	if !strings.Contains(page, `<th class="row"></th>`) || strings.Contains(page, "rows <b>") {
		t.Error("a 1-D sweep labels its single row")
	}
	d := drawnCells(page)
	if len(d) != 2 || d[1].title != "fencing at n=8 · violated: counterexample of 7 actions" {
		t.Errorf("cells %+v", d)
	}
}

// TestHeatmapMissingCell: a grid point with no cell is drawn blank, without
// data attributes, and does not count as a cell.
func TestHeatmapMissingCell(t *testing.T) {
	g := sweepGrid()
	g.Cells = g.Cells[1:]
	page := heatmapOf(t, g)
	if n := len(drawnCells(page)); n != len(g.Cells) {
		t.Errorf("%d cells drawn, want %d", n, len(g.Cells))
	}
	if !strings.Contains(page, `<tr><th class="row">ttl=10</th><td class="none" title="not run"></td><td class="cell`) {
		t.Error("the missing cell is not drawn blank in its place")
	}
}

// TestHeatmapErrors: a malformed grid is an error and nothing is written.
func TestHeatmapErrors(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*SweepGrid)
	}{
		{"x off axis", "not on axis X", func(g *SweepGrid) { g.Cells[3].X = 7 }},
		{"y off axis", "not on axis Y", func(g *SweepGrid) { g.Cells[3].Y = 15 }},
		{"unlisted invariant", `invariant "liveness"`, func(g *SweepGrid) { g.Cells[0].Invariant = "liveness" }},
		{"unknown verdict", `unknown verdict "unsafe"`, func(g *SweepGrid) { g.Cells[0].Verdict = "unsafe" }},
		{"duplicate cell", "two cells", func(g *SweepGrid) { g.Cells[1].X = g.Cells[0].X }},
		{"repeated axis value", "repeats value 2", func(g *SweepGrid) { g.X.Values = []int{1, 2, 2, 3} }},
		{"empty axis", "no values", func(g *SweepGrid) { g.Y.Values = nil }},
		{"repeated invariant", "twice", func(g *SweepGrid) { g.Invariants = append(g.Invariants, "fencing") }},
		{"rule for unlisted invariant", `rule for invariant "liveness"`, func(g *SweepGrid) { g.Rules["liveness"] = "x" }},
	} {
		g := sweepGrid()
		tc.edit(&g)
		var b bytes.Buffer
		err := Heatmap(&b, g)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if b.Len() != 0 {
			t.Errorf("%s: %d bytes written on error", tc.name, b.Len())
		}
	}
}
