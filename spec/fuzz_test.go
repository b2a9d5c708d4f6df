package spec

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
)

// FuzzCheck feeds every input that reads as a history to Check. No history
// may panic it; its report must be the same twice (it checks resources on
// goroutines); and resources must be independent, as docs/invariants.md
// says: what Check reports on one resource is what it reports on the
// history of that resource's events and the events that name none (the
// faults), positions mapped back. The brute force relies on that split, so
// this property is checked here on inputs of any size and shape.
//
// The seeds (the examples of docs/invariants.md and histories of the
// differential test's generators) run with the normal tests. A longer run,
// on one core:
//
//	go test ./spec -run XXX -fuzz FuzzCheck -fuzztime 5m -parallel 1
func FuzzCheck(f *testing.F) {
	// A message names events by position too: "event 9", "events 3-5",
	// "between events 2 and 7".
	eventRefs, number := regexp.MustCompile(`events? \d+(?:(?: and |-)\d+)?`), regexp.MustCompile(`\d+`)
	doc, err := os.ReadFile("../docs/invariants.md")
	if err != nil {
		f.Fatal(err)
	}
	for _, blk := range strings.Split(string(doc), "```jsonl\n")[1:] {
		f.Add([]byte(blk[:strings.Index(blk, "```")]))
	}
	for seed := range uint64(20) {
		for _, gen := range []func(*rand.Rand, int) *history.History{simHistory2, randomHistory2} {
			var buf bytes.Buffer
			if err := history.Encode(&buf, gen(rand.New(rand.NewPCG(seed, 0xf022)), 7)); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := history.ReadAll("fuzz.jsonl", bytes.NewReader(data))
		if err != nil || len(h.Events) > 400 {
			return
		}
		rep := Check(h, Options{})
		if again := Check(h, Options{}); !reflect.DeepEqual(rep, again) {
			t.Fatalf("two reports differ:\n%+v\n%+v", rep, again)
		}
		omitted := 0
		for _, r := range resourcesOf(h) {
			sub, pos := aloneOn(h, r)
			alone := Check(sub, Options{})
			omitted += alone.Omitted
			if slices.Contains(rep.Unknown, LinearizableSink) || slices.Contains(alone.Unknown, LinearizableSink) {
				continue // a porcupine search ran out of time: nothing to compare
			}
			want := []Violation{}
			for _, v := range alone.Violations {
				v.Events = slices.Clone(v.Events)
				for k, p := range v.Events {
					v.Events[k] = pos[p]
				}
				v.Message = eventRefs.ReplaceAllStringFunc(v.Message, func(ref string) string {
					return number.ReplaceAllStringFunc(ref, func(n string) string {
						p, _ := strconv.Atoi(n)
						return strconv.Itoa(pos[p])
					})
				})
				want = append(want, v)
			}
			got := []Violation{}
			for _, v := range rep.Violations {
				if v.Resource == r {
					got = append(got, v)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("resource %s: in the whole history\n%+v\nalone\n%+v", r, got, want)
			}
		}
		if omitted != rep.Omitted {
			t.Fatalf("%d violations omitted from the whole history's report, %d from the resources' alone", rep.Omitted, omitted)
		}
	})
}
