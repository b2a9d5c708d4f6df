package viz

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// SweepGrid is the result of a parameter sweep over two axes for one design:
// for every point of the grid and every invariant, the verdict found there.
type SweepGrid struct {
	// Variant names the design swept.
	Variant string `json:"variant"`
	// X gives the columns and Y the rows. A 1-D sweep has a Y with an empty
	// Name and a single value.
	X Axis `json:"x"`
	Y Axis `json:"y"`
	// Invariants lists the invariant IDs, one heat map each, in this order.
	Invariants []string `json:"invariants"`
	// Cells holds every (x, y, invariant) cell; a grid point with no cell
	// is drawn blank.
	Cells []SweepCell `json:"cells"`
	// Rules maps an invariant ID to the boundary rule found on the grid, ""
	// or absent for none; it is shown under that invariant's map.
	Rules map[string]string `json:"rules"`
}

// Axis is one swept integer parameter and its values, in display order.
type Axis struct {
	// Name is the parameter's name.
	Name string `json:"name"`
	// Values are the parameter values swept, distinct.
	Values []int `json:"values"`
}

// Verdicts a SweepCell may carry.
const (
	VerdictSafe       = "safe"
	VerdictViolated   = "violated"
	VerdictIncomplete = "incomplete"
)

// SweepCell is the verdict for one invariant at one point of a sweep.
type SweepCell struct {
	// X and Y are the parameter values (not indexes) of the point.
	X int `json:"x"`
	Y int `json:"y"`
	// Invariant is the invariant ID, one of SweepGrid.Invariants.
	Invariant string `json:"invariant"`
	// Verdict is VerdictSafe, VerdictViolated or VerdictIncomplete.
	Verdict string `json:"verdict"`
	// Proof, for a safe cell, is true if the search was exhaustive and false
	// if the verdict rests only on a search budget.
	Proof bool `json:"proof"`
	// Length, for a violated cell, is the shortest counterexample's length
	// in actions.
	Length int `json:"length,omitempty"`
	// Method is the search used: "bfs" or "random".
	Method string `json:"method"`
	// Link is the relative URL of the saved counterexample timeline
	// (.html), "" if none; only a violated cell is linked.
	Link string `json:"link,omitempty"`
	// Detail is one line shown on hover (states explored, runs, ...).
	Detail string `json:"detail"`
}

// Heatmap writes g as one self-contained HTML page (no external resources):
// one table per invariant, rows Y and columns X, each cell coloured by its
// verdict — violated red, darker for a shorter counterexample; safe with a
// proof green; safe within a budget lighter green; incomplete grey — with a
// short mark in the cell ("✗ 12", "✓", "✓?", "?") and a tooltip naming the
// verdict, proof or budget, method, counterexample length and Detail. A
// violated cell with a Link links to its timeline. Every cell element carries
// data-x, data-y, data-invariant and data-verdict; a small inline script sets
// data-cells-rendered on <body> to the number of cells laid out with a box.
//
// Heatmap returns Check's error, writing nothing, if the grid has one. The
// same grid gives the same bytes.
func Heatmap(w io.Writer, g SweepGrid) error {
	p, err := buildHeatmap(g)
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := heatmapTemplate.Execute(&b, p); err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

type heatPage struct {
	Variant string
	X, Y    string
	OneD    bool
	Maps    []heatMap
	Cells   int
	MinLen  int
	MaxLen  int
	HasLen  bool
}

type heatMap struct {
	Invariant string
	Rule      string
	Columns   []int
	Rows      []heatRow
	Counts    string
}

type heatRow struct {
	Label string
	Cells []heatCell
}

type heatCell struct {
	Present   bool
	X, Y      int
	Invariant string
	Verdict   string
	Class     string
	Text      string
	Title     string
	Link      string
}

type cellKey struct {
	x, y int
	inv  string
}

// shades is the number of red shades for violated cells, darkest for the
// shortest counterexample.
const shades = 5

func checkAxis(which string, a Axis) (map[int]bool, error) {
	if len(a.Values) == 0 {
		return nil, fmt.Errorf("viz: sweep axis %s %q has no values", which, a.Name)
	}
	seen := make(map[int]bool, len(a.Values))
	for _, v := range a.Values {
		if seen[v] {
			return nil, fmt.Errorf("viz: sweep axis %s %q repeats value %d", which, a.Name, v)
		}
		seen[v] = true
	}
	return seen, nil
}

// Check returns the error Heatmap would for g, or nil: an axis is empty or
// repeats a value, an invariant is listed twice, a cell lies off the axes,
// names an unlisted invariant, has an unknown verdict or repeats another
// cell, or a rule names an unlisted invariant.
func (g SweepGrid) Check() error {
	xs, err := checkAxis("X", g.X)
	if err != nil {
		return err
	}
	ys, err := checkAxis("Y", g.Y)
	if err != nil {
		return err
	}
	invs := make(map[string]bool, len(g.Invariants))
	for _, id := range g.Invariants {
		if invs[id] {
			return fmt.Errorf("viz: sweep lists invariant %q twice", id)
		}
		invs[id] = true
	}
	for _, id := range slices.Sorted(maps.Keys(g.Rules)) {
		if !invs[id] {
			return fmt.Errorf("viz: sweep has a rule for invariant %q, which it does not list", id)
		}
	}
	cells := make(map[cellKey]bool, len(g.Cells))
	for _, c := range g.Cells {
		switch {
		case !xs[c.X]:
			return fmt.Errorf("viz: sweep cell %s=%d is not on axis X", g.X.Name, c.X)
		case !ys[c.Y]:
			return fmt.Errorf("viz: sweep cell %s=%d is not on axis Y", g.Y.Name, c.Y)
		case !invs[c.Invariant]:
			return fmt.Errorf("viz: sweep cell (%d, %d) names invariant %q, which the sweep does not list", c.X, c.Y, c.Invariant)
		case c.Verdict != VerdictSafe && c.Verdict != VerdictViolated && c.Verdict != VerdictIncomplete:
			return fmt.Errorf("viz: sweep cell (%d, %d) %s has unknown verdict %q", c.X, c.Y, c.Invariant, c.Verdict)
		}
		k := cellKey{c.X, c.Y, c.Invariant}
		if cells[k] {
			return fmt.Errorf("viz: sweep has two cells for (%d, %d) %s", c.X, c.Y, c.Invariant)
		}
		cells[k] = true
	}
	return nil
}

func buildHeatmap(g SweepGrid) (heatPage, error) {
	if err := g.Check(); err != nil {
		return heatPage{}, err
	}
	cells := make(map[cellKey]SweepCell, len(g.Cells))
	minLen, maxLen, hasLen := 0, 0, false
	for _, c := range g.Cells {
		if c.Verdict == VerdictViolated && c.Length > 0 {
			if !hasLen || c.Length < minLen {
				minLen = c.Length
			}
			if !hasLen || c.Length > maxLen {
				maxLen = c.Length
			}
			hasLen = true
		}
		cells[cellKey{c.X, c.Y, c.Invariant}] = c
	}

	p := heatPage{Variant: g.Variant, X: g.X.Name, Y: g.Y.Name, OneD: g.Y.Name == "" && len(g.Y.Values) == 1,
		Cells: len(cells), MinLen: minLen, MaxLen: maxLen, HasLen: hasLen}
	for _, id := range g.Invariants {
		m := heatMap{Invariant: id, Rule: g.Rules[id], Columns: g.X.Values}
		var nv, ns, nb, ni int
		for _, y := range g.Y.Values {
			row := heatRow{Label: axisLabel(g.Y.Name, y)}
			if p.OneD {
				row.Label = ""
			}
			for _, x := range g.X.Values {
				c, ok := cells[cellKey{x, y, id}]
				if !ok {
					row.Cells = append(row.Cells, heatCell{})
					continue
				}
				switch {
				case c.Verdict == VerdictViolated:
					nv++
				case c.Verdict == VerdictSafe && c.Proof:
					ns++
				case c.Verdict == VerdictSafe:
					nb++
				default:
					ni++
				}
				row.Cells = append(row.Cells, p.cell(g, c))
			}
			m.Rows = append(m.Rows, row)
		}
		m.Counts = fmt.Sprintf("%d violated, %d safe (proof), %d safe (budget), %d incomplete", nv, ns, nb, ni)
		p.Maps = append(p.Maps, m)
	}
	return p, nil
}

func axisLabel(name string, v int) string {
	if name == "" {
		return strconv.Itoa(v)
	}
	return name + "=" + strconv.Itoa(v)
}

// shade buckets a counterexample length: 0 for the shortest in the grid,
// shades-1 for the longest.
func (p *heatPage) shade(length int) int {
	if length <= 0 || p.MaxLen == p.MinLen {
		return 0
	}
	return ((length-p.MinLen)*(shades-1)*2/(p.MaxLen-p.MinLen) + 1) / 2
}

func (p *heatPage) cell(g SweepGrid, c SweepCell) heatCell {
	h := heatCell{Present: true, X: c.X, Y: c.Y, Invariant: c.Invariant, Verdict: c.Verdict}
	where := axisLabel(g.X.Name, c.X)
	if !p.OneD {
		where += ", " + axisLabel(g.Y.Name, c.Y)
	}
	parts := []string{c.Invariant + " at " + where}
	switch c.Verdict {
	case VerdictViolated:
		h.Class = "viol s" + strconv.Itoa(p.shade(c.Length))
		h.Text = "✗"
		v := "violated"
		if c.Length > 0 {
			h.Text += " " + strconv.Itoa(c.Length)
			v += ": counterexample of " + plural(c.Length, "action")
		}
		parts = append(parts, v)
		h.Link = c.Link
	case VerdictSafe:
		if c.Proof {
			h.Class, h.Text = "proof", "✓"
			parts = append(parts, "safe: exhaustive proof")
		} else {
			h.Class, h.Text = "budget", "✓?"
			parts = append(parts, "safe within the search budget (no proof)")
		}
	default:
		h.Class, h.Text = "incomplete", "?"
		parts = append(parts, "incomplete")
	}
	if c.Method != "" {
		parts = append(parts, "method "+c.Method)
	}
	if c.Detail != "" {
		parts = append(parts, c.Detail)
	}
	if h.Link != "" {
		parts = append(parts, "click for the counterexample timeline")
	}
	h.Title = strings.Join(parts, " · ")
	return h
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

//go:embed heatmap.tmpl
var heatmapSource string

var heatmapTemplate = template.Must(template.New("heatmap").Parse(heatmapSource))
