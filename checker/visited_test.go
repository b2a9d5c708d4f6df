package checker

import (
	"fmt"
	"testing"
)

// BenchmarkCompact turns an exact set of n states hash-compact (the switch
// at the memory budget): linear in n. Inserting the hashes in table order,
// sorted by home slot, into a table that grows from its smallest size
// piled them up in its first slots and made it quadratic (1M states: 5.4 s
// before, 0.17 s after, on 2 busy cores).
func BenchmarkCompact(b *testing.B) {
	for _, n := range []int{250_000, 1_000_000} {
		keys := benchKeys(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := newStateSet(false)
				for _, k := range keys {
					s.insert(k, hashKey(k))
				}
				b.StartTimer()
				s.compact()
			}
			b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "states/s")
		})
	}
}
