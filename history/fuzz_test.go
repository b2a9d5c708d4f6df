package history

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzRead feeds arbitrary bytes to ReadAll. No input may panic or hang;
// every error must be an *Error naming the file and a line; every history
// that reads must survive Encode and a second read unchanged.
//
// The seed corpus (testdata/fuzz/FuzzRead) runs with the normal tests. A
// longer run, on one core:
//
//	go test ./history -run XXX -fuzz FuzzRead -fuzztime 5m -parallel 1
//
// Add what it finds to testdata/fuzz/FuzzRead (go test copies each failing
// input to testdata/fuzz/FuzzRead/ under the module's history folder).
func FuzzRead(f *testing.F) {
	f.Add([]byte(sample))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadAll("fuzz.jsonl", bytes.NewReader(data))
		if err != nil {
			checkInputError(t, err, "fuzz.jsonl")
			return
		}
		var out bytes.Buffer
		if err := Encode(&out, h); err != nil {
			t.Fatalf("Encode: %v", err)
		}
		h2, err := ReadAll("again.jsonl", bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-read of the encoding fails: %v\n%s", err, out.Bytes())
		}
		if !reflect.DeepEqual(h.Header, h2.Header) || h.HasHeader != h2.HasHeader {
			t.Fatalf("header changed by the round trip:\n%+v\n%+v\n%s", h.Header, h2.Header, out.Bytes())
		}
		if len(h.Events) != len(h2.Events) {
			t.Fatalf("%d events became %d:\n%s", len(h.Events), len(h2.Events), out.Bytes())
		}
		for i := range h.Events {
			a, b := h.Events[i], h2.Events[i]
			a.Line, b.Line = 0, 0 // blank lines and the header shift lines
			if a != b {
				t.Fatalf("event %d changed by the round trip:\n%+v\n%+v\n%s", i, a, b, out.Bytes())
			}
		}
	})
}

// checkInputError fails the test unless err is an *Error for file that names
// a line and says something.
func checkInputError(t *testing.T, err error, file string) *Error {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if he.File != file || he.Line < 1 || he.Msg == "" {
		t.Fatalf("error %q: file %q, line %d, message %q", err, he.File, he.Line, he.Msg)
	}
	return he
}
