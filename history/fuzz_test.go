package history

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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
	f.Add([]byte(sinkSample))
	f.Add([]byte("{ \"time\" : 1 , \"process\" : \"w\" , \"type\":\"info\",\"f\":\"pause\", \"value\" : { \"target\" : \"x\" } }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadAll("fuzz.jsonl", bytes.NewReader(data))
		// The fast path (scan.go) must read every line as the general path
		// does: the same events, or the same error.
		hg, errg := readAll("fuzz.jsonl", bytes.NewReader(data), 0, true)
		if (err == nil) != (errg == nil) || err != nil && err.Error() != errg.Error() {
			t.Fatalf("fast path: %v\ngeneral path: %v", err, errg)
		}
		if err == nil && !reflect.DeepEqual(h, hg) {
			t.Fatalf("the fast and the general path read different histories:\n%+v\n%+v", h, hg)
		}
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
		hd, hd2 := h.Header, h2.Header
		hd.Line, hd2.Line = 0, 0 // the line it was read from
		if !reflect.DeepEqual(hd, hd2) || h.HasHeader != h2.HasHeader {
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

// TestSeedCorpus checks that the seed corpus is what its names say: every
// valid-* input reads and every bad-* input is an input error. The other
// files are the fuzzer's findings.
func TestSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := f.Name()
		valid, bad := strings.HasPrefix(name, "valid-"), strings.HasPrefix(name, "bad-")
		if !valid && !bad {
			continue
		}
		data := readCorpusFile(t, filepath.Join(dir, name))
		_, err := ReadAll(name, bytes.NewReader(data))
		switch {
		case valid && err != nil:
			t.Errorf("%s: %v", name, err)
		case bad && err == nil:
			t.Errorf("%s: read without error", name)
		case bad:
			if testing.Verbose() {
				t.Logf("%v", err)
			}
			checkInputError(t, err, name)
		}
	}
}

// readCorpusFile returns the input in a corpus file of FuzzRead.
func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body, ok := strings.CutPrefix(string(b), "go test fuzz v1\n[]byte(")
	body, ok2 := strings.CutSuffix(strings.TrimSpace(body), ")")
	s, err := strconv.Unquote(body)
	if !ok || !ok2 || err != nil {
		t.Fatalf("%s: not a corpus file of one []byte: %v", path, err)
	}
	return []byte(s)
}

// endless is an io.Reader of one byte repeated forever.
type endless byte

func (c endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// TestPathological reads inputs that could hang a reader or blow its memory.
func TestPathological(t *testing.T) {
	t.Run("10 MB line", func(t *testing.T) {
		payload := strings.Repeat("x", 10<<20)
		in := `{"time":0,"process":"w","type":"invoke","f":"write","resource":"r","value":{"token":1,"resultId":"x","payload":"` + payload + `"}}`
		h, err := ReadAll("big", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Events) != 1 || h.Events[0].Value.Payload != payload {
			t.Fatalf("events = %d", len(h.Events))
		}
	})
	t.Run("endless line", func(t *testing.T) {
		_, err := ReadAll("endless", io.LimitReader(endless('a'), 2*MaxLine))
		he := checkInputError(t, err, "endless")
		if he.Line != 1 || !strings.Contains(he.Msg, "longer than") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a million blank lines", func(t *testing.T) {
		in := io.MultiReader(io.LimitReader(endless('\n'), 1_000_000), strings.NewReader(`{"time":0,"process":"w","type":"info","f":"pause"}`))
		h, err := ReadAll("blank", in)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Events) != 1 || h.Events[0].Line != 1_000_001 {
			t.Fatalf("events = %+v", h.Events)
		}
	})
	t.Run("deep nesting", func(t *testing.T) {
		deep := strings.Repeat(`{"a":`, 1_000_000) + "1" + strings.Repeat("}", 1_000_000)
		in := `{"time":0,"process":"w","type":"info","f":"pause","value":{"x":` + deep + `}}`
		he := checkInputError(t, func() error { _, err := ReadAll("deep", strings.NewReader(in)); return err }(), "deep")
		if !strings.Contains(he.Msg, "depth") {
			t.Fatalf("err = %v, want it to say the nesting is too deep", he)
		}
	})
}
