package histories

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
)

// modelHistories reads every history under this folder whose header
// carries a model trace.
func modelHistories(t testing.TB) []*history.History {
	files, err := filepath.Glob("*/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no histories found (%v)", err)
	}
	var hs []*history.History
	for _, path := range files {
		h, err := history.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Header.Actions) > 0 {
			hs = append(hs, h)
		}
	}
	return hs
}

// checkMarks checks what CheckHistory's verdict v on h says of where the
// model's states violated an invariant: each mark names an invariant the
// re-execution judged violated, and only events the file records as the
// re-execution did; and a reproduced history has a mark for every
// invariant judged.
func checkMarks(t *testing.T, h *history.History, v checker.Verdict) {
	t.Helper()
	if v.Run == nil {
		t.Fatal("a history with a trace and no error has no run")
	}
	agree := history.Agree(h.Events, v.Run.Events)
	var marked spec.Set
	for _, x := range v.Marks {
		if !v.Judged.Has(x.Invariant) {
			t.Errorf("mark of %s, which the re-execution did not judge violated (%v); mismatch %q", x.Invariant, v.Judged.IDs(), v.Mismatch)
		}
		marked |= spec.SetOf(x.Invariant)
		for _, e := range x.Events {
			if e < 0 || e >= agree {
				t.Errorf("mark of %s names event %d; the file and the run agree on %d of %d events", x.Invariant, e, agree, len(h.Events))
			}
		}
	}
	if v.Reproduced && marked != v.Judged {
		t.Errorf("reproduced, judged %v, marked %v", v.Judged.IDs(), marked.IDs())
	}
}

// TestEditedTraceMarks replays every model history with one action of its
// trace left out, and with its last event left out: the model no longer
// reproduces the file, and what it marks must still be what it judged, on
// events the file has as the model does. (Before, the marks came from a
// second replay that skipped the actions not enabled, and named
// invariants the verdict did not and events of that replay, not of the
// file.)
func TestEditedTraceMarks(t *testing.T) {
	for _, h0 := range modelHistories(t) {
		t.Run(h0.Header.Variant, func(t *testing.T) {
			for i := range h0.Header.Actions {
				h := *h0
				h.Header.Actions = slices.Delete(slices.Clone(h0.Header.Actions), i, i+1)
				v, err := checker.CheckHistory(&h, spec.Options{}, designs.All())
				if err != nil {
					t.Fatal(err)
				}
				checkMarks(t, &h, v)
			}
			h := *h0
			h.Events = h0.Events[:len(h0.Events)-1]
			v, err := checker.CheckHistory(&h, spec.Options{}, designs.All())
			if err != nil {
				t.Fatal(err)
			}
			if v.Reproduced {
				t.Fatal("reproduced with its last event left out")
			}
			checkMarks(t, &h, v)
		})
	}
}

// FuzzCheckHistory feeds every input that reads as a history to
// CheckHistory, the check behind explore replay and viz: no input may
// panic it, its verdict must be the same twice, and its marks must hold to
// checkMarks. The seeds are the histories under this folder. A longer run,
// on one core:
//
//	go test ./histories -run XXX -fuzz FuzzCheckHistory -fuzztime 5m -parallel 1
func FuzzCheckHistory(f *testing.F) {
	files, err := filepath.Glob("*/*.jsonl")
	if err != nil || len(files) == 0 {
		f.Fatalf("no histories found (%v)", err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	cat := designs.All()
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := history.ReadAll("fuzz.jsonl", bytes.NewReader(data))
		if err != nil || len(h.Events) > 400 || len(h.Header.Actions) > 400 {
			return
		}
		v, err := checker.CheckHistory(h, spec.Options{}, cat)
		again, err2 := checker.CheckHistory(h, spec.Options{}, cat)
		if (v.Run == nil) != (again.Run == nil) || v.Run != nil && !reflect.DeepEqual(v.Run.Events, again.Run.Events) {
			t.Fatal("two re-executions differ")
		}
		run := v.Run
		v.Run, again.Run = nil, nil // its machine holds functions, never equal
		if !reflect.DeepEqual(v, again) || !reflect.DeepEqual(err, err2) {
			t.Fatalf("two verdicts differ:\n%+v %v\n%+v %v", v, err, again, err2)
		}
		if v.Run = run; err == nil && len(h.Header.Actions) > 0 {
			checkMarks(t, h, v)
		}
	})
}
