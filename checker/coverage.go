package checker

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/fencecheck/fencecheck/model"
)

// Coverage counts how often a search reached each scene (runs for a random
// search, transitions for a breadth-first one): the "sometimes" half of a
// verdict. A design is shown safe only where the scenes its verdict
// depends on were reached.
type Coverage [model.NumScenes]uint64

// Add counts one run or transition that reached the scenes sc.
func (c *Coverage) Add(sc model.Scene) {
	for i := range c {
		if sc&(1<<i) != 0 {
			c[i]++
		}
	}
}

// Merge adds another count.
func (c *Coverage) Merge(o Coverage) {
	for i := range c {
		c[i] += o[i]
	}
}

// Missing returns the scenes of want that were never reached.
func (c *Coverage) Missing(want model.Scene) model.Scene {
	var miss model.Scene
	for i := range c {
		if want&(1<<i) != 0 && c[i] == 0 {
			miss |= 1 << i
		}
	}
	return miss
}

// String lists every scene with its count.
func (c Coverage) String() string {
	parts := make([]string, len(c))
	for i, n := range c {
		parts[i] = fmt.Sprintf("%s %d", model.Scene(1<<i), n)
	}
	return strings.Join(parts, ", ")
}

// MarshalJSON writes the counts as an object keyed by scene name.
func (c Coverage) MarshalJSON() ([]byte, error) {
	m := make(map[string]uint64, len(c))
	for i, n := range c {
		m[model.Scene(1<<i).String()] = n
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *Coverage) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = Coverage{}
	for _, name := range slices.Sorted(maps.Keys(m)) { // the first bad name, whatever the map's order
		n := m[name]
		sc, err := model.ParseScene(name)
		if err != nil {
			return err
		}
		c[bits.TrailingZeros16(uint16(sc))] = n
	}
	return nil
}
