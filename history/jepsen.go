package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Jepsen histories
//
// Jepsen keeps a history as EDN (history.edn): a vector of operation maps
// with :type (:invoke, :ok, :fail, :info), :f, :value, :process (an integer,
// or :nemesis), :time (nanoseconds since the test began) and :index. Tools
// around Jepsen (Elle's and Knossos' command-line front ends, exporters)
// exchange the same maps as JSON, keywords becoming strings. ReadJepsen
// accepts that JSON form where it maps onto this format without guessing;
// docs/jepsen.md documents the mapping. EDN itself is not read: the standard
// library has no EDN parser, and one dependency for one input format is not
// worth it; convert EDN to JSON first (for example with jet).

// Dialect names a syntax of history files that ReadAny tells apart.
type Dialect string

// The dialects ReadAny reads.
const (
	// Native is this package's JSON Lines format.
	Native Dialect = "fencecheck"
	// Jepsen is a Jepsen history in JSON: an array of operation objects, or
	// one operation object a line.
	Jepsen Dialect = "jepsen"
)

// Sniff tells the dialect of a history from its first bytes (at least its
// first non-blank line, when there is one):
//
//   - first non-blank byte '[': a JSON array, so Jepsen;
//   - a first line that is an object with a "format" key: Native's header;
//   - a first object with Jepsen's traits: an integer "process", a key or a
//     "type" or "f" string starting with ':' (a Clojure keyword), or a
//     "value" that is neither an object nor null: Jepsen;
//   - anything else: Native (whose reader then reports what is wrong).
func Sniff(head []byte) Dialect {
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 {
		return Native
	}
	if head[0] == '[' {
		return Jepsen
	}
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	obj, _, err := splitObject(bytes.TrimRight(head, " \t\r"))
	if err != nil || obj["format"] != nil {
		return Native
	}
	for k := range obj {
		if strings.HasPrefix(k, ":") {
			return Jepsen
		}
	}
	if p := obj["process"]; len(p) > 0 && (p[0] == '-' || p[0] >= '0' && p[0] <= '9') {
		return Jepsen
	}
	for _, k := range []string{"type", "f"} {
		if v := obj[k]; bytes.HasPrefix(v, []byte(`":`)) {
			return Jepsen
		}
	}
	if v := obj["value"]; !absent(v) && v[0] != '{' {
		return Jepsen
	}
	return Native
}

// ReadAny reads a history in either dialect, choosing it with Sniff on the
// input's first non-blank line.
func ReadAny(name string, r io.Reader) (*History, error) {
	br := bufio.NewReader(r)
	var head []byte
	for len(head) < MaxLine {
		b, err := br.ReadSlice('\n')
		head = append(head, b...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, &Error{File: name, Line: 1, Msg: err.Error()}
		}
		if err == io.EOF || len(bytes.Trim(head, " \t\r\n")) > 0 {
			break
		}
	}
	in := io.MultiReader(bytes.NewReader(head), br)
	if Sniff(head) == Jepsen {
		return ReadJepsen(name, in)
	}
	return readAll(name, in, sizeHint(r), false)
}

// ReadJepsen reads a Jepsen history in JSON (a JSON array of operations, or
// a stream of operation objects such as JSON Lines) and checks it as Read
// does. Time is in nanoseconds: the history's header says timeUnit "ns".
// Every operation that does not map unambiguously is an *Error naming the
// line where the operation starts and the field at fault. See docs/jepsen.md.
func ReadJepsen(name string, r io.Reader) (*History, error) {
	in := &offsetReader{r: r, limit: MaxLine}
	first, prefix := in.skipSpace()
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(prefix), in))
	j := &jepsenReader{
		Reader: Reader{name: name, open: map[string]openOp{}, lastIndex: -1},
		in:     in,
		kinds:  map[string]bool{},
	}
	h := &History{HasHeader: true, Header: Header{Format: Format, Version: Version, TimeUnit: "ns"}}
	array := first == '['
	if array {
		if _, err := dec.Token(); err != nil {
			return nil, j.syntaxErr(dec, err)
		}
	}
	for {
		in.limit = dec.InputOffset() + MaxLine
		if array && !dec.More() {
			break
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if !array && err == io.EOF {
				if len(h.Events) == 0 {
					return nil, noEvents(name, in.line(dec.InputOffset()), "no operations")
				}
				return h, nil
			}
			return nil, j.syntaxErr(dec, err)
		}
		n := in.line(dec.InputOffset() - int64(len(raw)))
		e, err := j.op(raw, n)
		if err != nil {
			return nil, err
		}
		j.events++
		h.Events = append(h.Events, e)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, j.syntaxErr(dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, j.errf(in.line(dec.InputOffset()), "", "unexpected data after the JSON array of operations")
	}
	if len(h.Events) == 0 {
		return nil, noEvents(name, in.line(dec.InputOffset()), "no operations")
	}
	return h, nil
}

// errTooLong stops an offsetReader at its limit.
var errTooLong = fmt.Errorf("an operation longer than %d bytes", MaxLine)

// offsetReader reads r, remembering where lines end, so that byte offsets can
// be turned into lines, and refusing to read past limit (so that one
// operation cannot take more than about MaxLine bytes of memory).
type offsetReader struct {
	r     io.Reader
	read  int64   // bytes read so far
	nl    []int64 // offsets of the newlines that line has not counted yet
	lines int     // newlines counted
	limit int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	if o.read >= o.limit {
		return 0, errTooLong
	}
	if room := o.limit - o.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := o.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			o.nl = append(o.nl, o.read+int64(i))
		}
	}
	o.read += int64(n)
	return n, err
}

// line returns the 1-based line of the byte at offset off. Offsets must not
// decrease from one call to the next.
func (o *offsetReader) line(off int64) int {
	k := 0
	for k < len(o.nl) && o.nl[k] < off {
		k++
	}
	o.lines += k
	o.nl = o.nl[k:]
	return o.lines + 1
}

// skipSpace reads up to the first byte that is not JSON whitespace and
// returns it (0 at the end of the input) with all the bytes read.
func (o *offsetReader) skipSpace() (byte, []byte) {
	var read []byte
	var b [1]byte
	for {
		n, err := o.Read(b[:])
		read = append(read, b[:n]...)
		if n == 1 && b[0] != ' ' && b[0] != '\t' && b[0] != '\r' && b[0] != '\n' {
			return b[0], read
		}
		if err != nil {
			return 0, read
		}
	}
}

// jepsenReader converts Jepsen operations into events and checks them with
// the embedded Reader's rules.
type jepsenReader struct {
	Reader
	in *offsetReader
	// kinds remembers, for each process and resource name, whether it was
	// written as an integer, so that 3 and "3" are not silently merged.
	kinds map[string]bool
}

func (j *jepsenReader) syntaxErr(dec *json.Decoder, err error) error {
	if errors.Is(err, errTooLong) {
		return j.errf(j.in.line(dec.InputOffset()), "", "%v", err)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return j.errf(j.in.line(se.Offset), "", "not valid JSON: %v", se)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return j.errf(j.in.line(j.in.read), "", "the input ends in the middle of the history (an object or array is not closed)")
	}
	return j.errf(j.in.line(j.in.read), "", "%v", err) // an error reading the input
}

// source is where an operation names its resource.
type source struct {
	field string
	raw   json.RawMessage
}

// keyword drops the leading colon of a Clojure keyword.
func keyword(s string) string { return strings.TrimPrefix(s, ":") }

// jepsenAliases maps Clojure-style value keys to this format's.
var jepsenAliases = map[string]string{"request-id": "requestId", "result-id": "resultId"}

// normalize splits the object raw (the operation, or its value, as prefix
// says) and renames its keys: a leading colon is dropped and, in a value,
// Clojure-style names are replaced. Two keys that become one are an error.
func (j *jepsenReader) normalize(raw json.RawMessage, n int, prefix string) (members, error) {
	if raw[0] != '{' && prefix == "" {
		return nil, j.errf(n, "", "an operation must be a JSON object, got %s", kind(raw))
	}
	if raw[0] != '{' {
		return nil, j.errf(n, prefix, "must be an object, got %s", kind(raw))
	}
	obj, key, err := splitObject(raw)
	if err != nil {
		return nil, j.objectErr(n, prefix, raw, key, err)
	}
	out := make(members, len(obj))
	for k, v := range obj {
		out[normalKey(k, prefix)] = v
	}
	if len(out) < len(obj) { // two keys became one
		return nil, j.givenTwice(n, prefix, obj)
	}
	return out, nil
}

// givenTwice is the error for an object (the operation, or its value, as
// prefix says) two of whose keys normalize renames alike: it names the
// least such pair in key order, whatever order the map gives them in.
func (j *jepsenReader) givenTwice(n int, prefix string, obj members) error {
	was := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		nk := normalKey(k, prefix)
		if old, dup := was[nk]; dup {
			return j.errf(n, join(prefix, nk), "given twice, as %q and %q", old, k)
		}
		was[nk] = k
	}
	panic("history: no two keys of the object are renamed alike")
}

// normalKey is the key k of an object (the operation, or its value, as
// prefix says) as normalize renames it.
func normalKey(k, prefix string) string {
	nk := keyword(k)
	if a, ok := jepsenAliases[nk]; ok && prefix == "value" {
		nk = a
	}
	return nk
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// name converts a process, target or resource given as an integer or a
// string into a string, checking that no name is given both ways.
func (j *jepsenReader) name(n int, field, space string, raw json.RawMessage) (json.RawMessage, error) {
	if absent(raw) {
		return raw, nil
	}
	var s string
	isInt := raw[0] != '"'
	if isInt {
		i, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, j.errf(n, field, "must be a string or an integer that fits in int64, got %s", kind(raw))
		}
		s = strconv.FormatInt(i, 10)
	} else if json.Unmarshal(raw, &s) != nil {
		return nil, j.errf(n, field, "must be a string or an integer, got %s", kind(raw))
	}
	if space == "process" {
		s = keyword(s)
	}
	k := space + "\x00" + s
	if was, seen := j.kinds[k]; seen && was != isInt {
		return nil, j.errf(n, field, "%s %q is written both as an integer and as a string: they would be taken for one", space, s)
	}
	j.kinds[k] = isInt
	return appendString(nil, s), nil
}

// op converts one Jepsen operation that starts on line n into an event.
func (j *jepsenReader) op(raw json.RawMessage, n int) (Event, error) {
	if !utf8.Valid(raw) {
		return Event{}, j.errf(n, "", "not valid UTF-8")
	}
	o, err := j.normalize(raw, n, "")
	if err != nil {
		return Event{}, err
	}
	ev := members{"time": o["time"], "index": o["index"]}
	if ev["process"], err = j.name(n, "process", "process", o["process"]); err != nil {
		return Event{}, err
	}
	for _, k := range []string{"type", "f"} {
		if ev[k], err = keywordString(o[k]); err != nil {
			return Event{}, j.errf(n, k, "must be a string, got %s", kind(o[k]))
		}
	}
	// The resource may be named at the top, in the value, or as the key of
	// a jepsen.independent [key, value] pair; the names must agree.
	var resources []source
	add := func(field string, raw json.RawMessage) {
		if !absent(raw) {
			resources = append(resources, source{field, raw})
		}
	}
	add("resource", o["resource"])
	val := o["value"]
	if !absent(val) && val[0] == '[' {
		var pair []json.RawMessage
		if json.Unmarshal(val, &pair) != nil || len(pair) != 2 || absent(pair[0]) || pair[0][0] == '{' || pair[0][0] == '[' {
			return Event{}, j.errf(n, "value", "must be an object, or a [key, value] pair as jepsen.independent writes it")
		}
		add("value[0]", pair[0])
		val = pair[1]
	}
	v := members{}
	if !absent(val) {
		if v, err = j.normalize(val, n, "value"); err != nil {
			return Event{}, err
		}
	}
	add("value.resource", v["resource"])
	add("value.key", v["key"])
	delete(v, "resource")
	delete(v, "key")
	for i, r := range resources {
		name, err := j.name(n, r.field, "resource", r.raw)
		if err != nil {
			return Event{}, err
		}
		if i == 0 {
			ev["resource"] = name
		} else if !bytes.Equal(name, ev["resource"]) {
			return Event{}, j.errf(n, r.field, "names resource %s, but %s names %s", name, resources[0].field, ev["resource"])
		}
	}
	if t := v["target"]; !absent(t) {
		if v["target"], err = j.name(n, "value.target", "process", t); err != nil {
			return Event{}, err
		}
	}
	for _, k := range []string{"outcome", "error"} {
		if s, err := keywordString(v[k]); err == nil {
			v[k] = s
		}
	}
	// Jepsen puts a failure's reason in the op's :error.
	if e := o["error"]; !absent(e) && absent(v["error"]) {
		if s, err := keywordString(e); err == nil {
			v["error"] = s
		} else if string(ev["type"]) == `"fail"` {
			return Event{}, j.errf(n, "error", "a failure's reason must be a string (or keyword) to be this format's value.error, got %s", kind(e))
		}
	}
	if ev["value"], err = json.Marshal(v); err != nil {
		return Event{}, j.errf(n, "value", "%v", err)
	}
	var f fields
	f.fromMembers(ev)
	return j.parseEvent(&f, n)
}

// keywordString returns the JSON string raw with a leading colon dropped; raw
// may be absent (it is returned as it is).
func keywordString(raw json.RawMessage) (json.RawMessage, error) {
	if absent(raw) {
		return raw, nil
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return nil, errors.New("not a string")
	}
	return appendString(nil, keyword(s)), nil
}
