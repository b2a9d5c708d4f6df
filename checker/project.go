package checker

import (
	"fmt"
	"math"
)

// Projection is an estimate of how many states a search that stopped early
// would store in all, extrapolated from the sizes of its last complete
// levels. It is a fit, not a bound: a state space's levels can stop
// shrinking their growth for a while (a feature of the model becomes
// reachable) after they seemed to settle, and no fit of the levels seen
// can know. Project gives one only late enough in a search that, on the
// completed searches it was tested on (docs/exhaustive.md), the total lay
// within ProjectionSlack of the range it gave.
//
// A projection fits a parabola to the logarithm of the sizes of the last
// 4, 6 and 8 complete levels (the levels of a breadth-first search grow,
// peak and shrink much as a bell curve does) and sums each fit's levels
// past the last; States and StatesHigh are the least and the greatest of
// the three totals, Depth and DepthHigh the least and the greatest of the
// last depths at which their levels hold half a state.
type Projection struct {
	// Made tells whether the levels allowed a projection; Why says why
	// not when they did not.
	Made bool   `json:"made"`
	Why  string `json:"why,omitempty"`
	// States and StatesHigh bound the projected totals, the states of
	// the levels seen included; Depth and DepthHigh the projected depths.
	States     uint64 `json:"states,omitempty"`
	StatesHigh uint64 `json:"statesHigh,omitempty"`
	Depth      int    `json:"depth,omitempty"`
	DepthHigh  int    `json:"depthHigh,omitempty"`
}

// ProjectionSlack is the factor by which the total of a completed search
// may lie outside the range Project gave at any point of it
// (TestProjectionBracketsCompletedSearches): on the 22 searches the rule
// was chosen on and checked against, the most was 1.56×.
const ProjectionSlack = 2.0

// projectionWindows are the numbers of last levels each fit is of.
var projectionWindows = [...]int{4, 6, 8}

const (
	// projectionAgree is how far apart the fits' totals may be.
	projectionAgree = 1.5
	// projectionSeen is the least share of the greatest fit's total that
	// the levels seen must hold: earlier, fits were off by factors up to 10⁹.
	projectionSeen = 0.15
	// projectionReach is how many levels past the last a fit is summed
	// over at most: one that has not ended by then is not made.
	projectionReach = 10000
)

// Project extrapolates the total of a search from levels, the number of
// states first found at each depth, every level complete (the levels of a
// BFSResult: a level is listed once all of it is found).
func Project(levels []uint64) Projection {
	last := projectionWindows[len(projectionWindows)-1]
	if len(levels) < last+1 {
		return Projection{Why: fmt.Sprintf("fewer than %d levels", last+1)}
	}
	var seen float64
	for _, n := range levels {
		seen += float64(n)
	}
	p := Projection{Made: true}
	for i, w := range projectionWindows {
		total, depth, why := projectFit(levels, w, seen)
		if why != "" {
			return Projection{Why: why}
		}
		if i == 0 {
			p.States, p.StatesHigh, p.Depth, p.DepthHigh = uint64(total), uint64(total), depth, depth
		}
		p.States, p.StatesHigh = min(p.States, uint64(total)), max(p.StatesHigh, uint64(total))
		p.Depth, p.DepthHigh = min(p.Depth, depth), max(p.DepthHigh, depth)
	}
	if float64(p.StatesHigh) > projectionAgree*float64(p.States) {
		return Projection{Why: fmt.Sprintf("fits of the last 4 to 8 levels disagree (%s to %s states)", FormatCount(float64(p.States)),
			FormatCount(float64(p.StatesHigh)))}
	}
	if seen < projectionSeen*float64(p.StatesHigh) {
		return Projection{Why: fmt.Sprintf("too early: the levels seen hold less than %.0f%% of what their fits project", 100*projectionSeen)}
	}
	return p
}

// projectFit fits ln(level) = a + b·x + c·x² by least squares over the
// last w levels, x counted from the last level, and returns the states seen
// plus the fit's levels past the last, and the depth at which those fall
// below half a state; or why it cannot: a level is empty, the fit does not
// curve down, or it has not ended within projectionReach levels.
func projectFit(levels []uint64, w int, seen float64) (total float64, depth int, why string) {
	// The normal equations of the fit: m·(a, b, c) = v, m[i][j] = Σ x^(i+j).
	var m [3][4]float64
	for d := len(levels) - w; d < len(levels); d++ {
		if levels[d] == 0 {
			return 0, 0, fmt.Sprintf("level %d is empty", d)
		}
		x, y := float64(d-len(levels)+1), math.Log(float64(levels[d]))
		pow := [5]float64{1, x, x * x, x * x * x, x * x * x * x}
		for i := range 3 {
			for j := range 3 {
				m[i][j] += pow[i+j]
			}
			m[i][3] += pow[i] * y
		}
	}
	for i := range 3 { // Gaussian elimination: m is positive definite
		for r := i + 1; r < 3; r++ {
			f := m[r][i] / m[i][i]
			for j := i; j < 4; j++ {
				m[r][j] -= f * m[i][j]
			}
		}
	}
	var coef [3]float64
	for i := 2; i >= 0; i-- {
		s := m[i][3]
		for j := i + 1; j < 3; j++ {
			s -= m[i][j] * coef[j]
		}
		coef[i] = s / m[i][i]
	}
	a, b, c := coef[0], coef[1], coef[2]
	if !(c < 0) {
		return 0, 0, fmt.Sprintf("the sizes of the last %d levels are not growing ever more slowly", w)
	}
	peak := -b / (2 * c)
	total = seen
	for x := 1; x <= projectionReach; x++ {
		n := math.Exp(a + b*float64(x) + c*float64(x*x))
		if n < 0.5 && float64(x) > peak {
			return total, len(levels) - 1 + x - 1, ""
		}
		total += n
	}
	return 0, 0, fmt.Sprintf("the fit of the last %d levels does not end within %d levels", w, projectionReach)
}

// FormatCount writes a count of states for a person: whole below a
// million, else 3 digits and a word ("1.23 billion"), and in powers of
// ten from 10^15 on.
func FormatCount(n float64) string {
	switch {
	case n >= 1e15:
		return fmt.Sprintf("%.3g", n)
	case n >= 1e12:
		return fmt.Sprintf("%.3g trillion", n/1e12)
	case n >= 1e9:
		return fmt.Sprintf("%.3g billion", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3g million", n/1e6)
	}
	return fmt.Sprintf("%.0f", n)
}
