package explore

import (
	"fmt"
	"strings"

	"github.com/fencecheck/fencecheck/viz"
)

// fitRule states the boundary between the safe and the violated cells of
// one invariant's grid as the simplest rule of the form a·X + b·Y ≥ c
// (|a|, |b| ≤ 3) that separates them, or says the grid is all one verdict;
// "" when a cell is incomplete or missing (a sweep or a merge that
// stopped early), safe only within a random search's budget (not a proof),
// or no such rule fits. It is what was found on the whole grid, never a
// claim beyond it.
func fitRule(g viz.SweepGrid, inv string) string {
	var safe, bad [][2]int
	for _, c := range g.Cells {
		if c.Invariant != inv {
			continue
		}
		switch {
		case c.Verdict == viz.VerdictSafe && c.Proof:
			safe = append(safe, [2]int{c.X, c.Y})
		case c.Verdict == viz.VerdictViolated:
			bad = append(bad, [2]int{c.X, c.Y})
		default:
			return ""
		}
	}
	on := "on this grid"
	switch {
	case len(safe)+len(bad) != len(g.X.Values)*len(g.Y.Values) || len(safe)+len(bad) == 0: // a cell missing
		return ""
	case len(safe) == 0:
		return "violated at every point " + on
	case len(bad) == 0:
		return "safe at every point " + on
	}
	twoD := g.Y.Name != ""
	for size := 1; size <= 6; size++ {
		for a := -3; a <= 3; a++ {
			for b := -3; b <= 3; b++ {
				if abs(a)+abs(b) != size || !twoD && b != 0 {
					continue
				}
				lo, hi, ok := separate(safe, bad, a, b)
				if ok {
					return "safe iff " + ruleText(g.X.Name, g.Y.Name, a, b, lo, hi) + " " + on
				}
			}
		}
	}
	return ""
}

// separate reports whether a·x + b·y is above every violated cell's at
// every safe cell: lo-1 is the violated cells' highest value and hi the
// safe cells' lowest, so every threshold c in [lo, hi] separates them.
func separate(safe, bad [][2]int, a, b int) (lo, hi int, ok bool) {
	f := func(p [2]int) int { return a*p[0] + b*p[1] }
	hi = f(safe[0])
	for _, p := range safe {
		hi = min(hi, f(p))
	}
	lo = f(bad[0])
	for _, p := range bad {
		lo = max(lo, f(p))
	}
	return lo + 1, hi, lo < hi
}

// ruleText writes a·X + b·Y ≥ c for a person, solved for X where a is ±1,
// with the range of thresholds that fit when there is more than one.
func ruleText(x, y string, a, b, lo, hi int) string {
	term := func(k int, name string) string {
		switch k {
		case 1:
			return name
		case -1:
			return "-" + name
		}
		return fmt.Sprintf("%d·%s", k, name)
	}
	var lhs []string
	if a != 0 {
		lhs = append(lhs, term(a, x))
	}
	if b != 0 {
		lhs = append(lhs, term(b, y))
	}
	text := strings.ReplaceAll(strings.Join(lhs, " + "), "+ -", "- ") + fmt.Sprintf(" ≥ %d", lo)
	switch {
	case a == 1 && b != 0:
		text = fmt.Sprintf("%s ≥ %s", x, offset(term(-b, y), lo))
	case a == 0 && b == 1:
		text = fmt.Sprintf("%s ≥ %d", y, lo)
	case a == 1 && b == 0:
		text = fmt.Sprintf("%s ≥ %d", x, lo)
	case a == -1 && b == 0:
		text = fmt.Sprintf("%s ≤ %d", x, -lo)
	case a == 0 && b == -1:
		text = fmt.Sprintf("%s ≤ %d", y, -lo)
	}
	if hi > lo {
		text += fmt.Sprintf(" (any threshold %d..%d fits the grid)", lo, hi)
	}
	return text
}

func offset(t string, c int) string {
	switch {
	case c > 0:
		return fmt.Sprintf("%s + %d", t, c)
	case c < 0:
		return fmt.Sprintf("%s - %d", t, -c)
	}
	return t
}

func abs(a int) int { return max(a, -a) }
