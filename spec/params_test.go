package spec

import (
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/model"
)

// TestWith: a variant's parameters are set by name within their ranges,
// the result is named NAME@p=v so LookupVariant finds it again, and bad
// names, values and syntax are errors; NameWithout leaves out the values
// named.
func TestWith(t *testing.T) {
	var at []int
	v := Variant{Name: "d", Params: []Param{{Name: "a", Min: 0, Max: 4, Default: 1}, {Name: "b", Min: 2, Max: 3, Default: 2}},
		At: func(vals []int) Variant { at = vals; return Variant{Name: "ignored", Summary: "built"} }}
	w, err := v.With(map[string]int{"b": 3})
	if err != nil || w.Name != "d@a=1,b=3" || w.Summary != "built" || at[0] != 1 || at[1] != 3 || len(w.Params) != 2 {
		t.Fatalf("With: %+v, %v, at %v", w, err, at)
	}
	for drop, want := range map[string]string{"": "d@a=1,b=3", "a": "d@b=3", "b": "d@a=1", "a,b": "d", "c": "d@a=1,b=3"} {
		if got := w.NameWithout(strings.Split(drop, ",")...); got != want {
			t.Errorf("NameWithout(%s) = %q, want %q", drop, got, want)
		}
	}
	if got := v.NameWithout("a"); got != "d" {
		t.Errorf("NameWithout of a variant With has not set: %q, want d", got)
	}
	got, err := LookupVariant([]Variant{{Name: "x"}, v}, "d@b=2,a=4")
	if err != nil || got.Name != "d@a=4,b=2" {
		t.Fatalf("LookupVariant: %q, %v", got.Name, err)
	}
	for _, bad := range []string{"d@a=5", "d@c=1", "d@a", "d@a=1,a=2", "d@a=x", "x@a=1", "nope@a=1"} {
		if _, err := LookupVariant([]Variant{{Name: "x"}, v}, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := (Variant{Name: "x", Design: model.Design{}}).With(nil); err == nil || !strings.Contains(err.Error(), "no parameters") {
		t.Errorf("a variant without parameters: %v", err)
	}
}
