package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is an input error: the file, line and field at fault. Field is a
// dotted path such as "value.token", or empty when the line as a whole is at
// fault (it is not a JSON object, or it is too long).
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
	err   error // what the error wraps, if anything
}

// ErrNoEvents is what an input error for a history with no events (an empty
// file, or a header alone) wraps: errors.Is(err, ErrNoEvents).
var ErrNoEvents = errors.New("the history has no events")

// noEvents is the input error for a history with no events; line is the last
// line of the input (1 for an empty input), what says what the input holds.
func noEvents(file string, line int, what string) *Error {
	return &Error{File: file, Line: max(line, 1), Msg: ErrNoEvents.Error() + ": " + what + " (a history needs at least one event)", err: ErrNoEvents}
}

// Unwrap returns ErrNoEvents for a history with no events, nil otherwise.
func (e *Error) Unwrap() error { return e.err }

// Error gives the file, the line, the field (when one is named) and the
// message: "FILE:LINE: field "F": MSG".
func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: field %q: %s", e.File, e.Line, e.Field, e.Msg)
}

// MaxLine is the longest line a Reader accepts, in bytes. It bounds the
// memory a Reader uses for one line.
const MaxLine = 16 << 20

// Reader reads a history one event at a time, checking that it is well
// formed: every malformed line is reported as an *Error.
//
// Beyond the format's list of malformed input, a Reader is strict where JSON
// leaves room for doubt: keys match exactly (not ignoring case); a key given
// twice in one object is an error; the input must be valid UTF-8; only the
// first line may be a header; an event's index, when given, must be greater
// than the previous event's. Keys it does not know are ignored.
//
// Reading is fast and lean on large histories: most lines are read by a
// scanner of the common subset of JSON that allocates nothing (scan.go), the
// rest by encoding/json; strings that recur (process, resource and operation
// names, result ids, payloads) are shared, not allocated per event.
type Reader struct {
	name      string
	sc        *bufio.Scanner
	line      int
	events    int64
	lastTime  int64
	lastIndex int64 // index of the previous event; -1 before the first
	open      map[string]openOp
	header    Header
	hasHeader bool
	pending   members // first event line, read while looking for the header
	pendLine  int
	pendErr   error
	fl        fields            // the current line's members
	names     map[string]string // strings to share (see intern)
	general   bool              // read every line with the general path (for tests)
}

type openOp struct {
	f, resource string
}

// NewReader starts reading the history in r; name is used in errors. It reads
// the header, if there is one, at once.
func NewReader(name string, r io.Reader) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	rd := &Reader{name: name, sc: sc, open: map[string]openOp{}, lastIndex: -1}
	line, err := rd.nextLine()
	if err != nil {
		if err == io.EOF {
			return rd, nil
		}
		return nil, err
	}
	obj, err := rd.parseObject(line, rd.line)
	if err == nil {
		if _, ok := obj["format"]; ok {
			if err := rd.parseHeader(obj); err != nil {
				return nil, err
			}
			return rd, nil
		}
	}
	rd.pending, rd.pendLine, rd.pendErr = obj, rd.line, err
	return rd, nil
}

// Header returns the header and whether the history had one.
func (r *Reader) Header() (Header, bool) { return r.header, r.hasHeader }

// nextLine returns the next line that is not blank, without its surrounding
// JSON whitespace.
func (r *Reader) nextLine() ([]byte, error) {
	for r.sc.Scan() {
		r.line++
		b := trimSpace(r.sc.Bytes())
		if len(b) > 0 {
			return b, nil
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, r.errf(r.line+1, "", "line longer than %d bytes", MaxLine)
		}
		return nil, &Error{File: r.name, Line: r.line + 1, Msg: err.Error()}
	}
	return nil, io.EOF
}

// trimSpace cuts JSON whitespace from both ends of b.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (r *Reader) errf(line int, field, format string, args ...any) *Error {
	return &Error{File: r.name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next event, or io.EOF after the last. A history with no
// events at all is an input error: at the end of such an input Next returns
// an *Error that wraps ErrNoEvents instead of io.EOF.
func (r *Reader) Next() (Event, error) {
	obj, n, err := r.pending, r.pendLine, r.pendErr
	r.pending, r.pendErr = nil, nil
	switch {
	case err != nil:
		return Event{}, err
	case obj != nil:
		r.fl.fromMembers(obj)
	default:
		line, err := r.nextLine()
		if err == io.EOF && r.events == 0 {
			what := "the file is empty"
			switch {
			case r.hasHeader:
				what = "the file has a header and nothing else"
			case r.line > 0:
				what = "the file has only blank lines"
			}
			return Event{}, noEvents(r.name, r.line, what)
		}
		if err != nil {
			return Event{}, err
		}
		n = r.line
		if r.general || line[0] != '{' || !scanEvent(line, &r.fl) {
			if obj, err = r.parseObject(line, n); err != nil {
				return Event{}, err
			}
			r.fl.fromMembers(obj)
		}
	}
	e, err := r.parseEvent(&r.fl, n)
	if err != nil {
		return Event{}, err
	}
	r.events++
	return e, nil
}

// ReadAll reads a whole history.
func ReadAll(name string, rd io.Reader) (*History, error) {
	return readAll(name, rd, sizeHint(rd), false)
}

// sizeHint returns how many events a regular file may hold, so that a large
// history's events are allocated once, at their size, instead of copied at
// every growth (on million-event histories a third of the reading time went
// to that) or allocated for a guess that may be twice too large; 0 when rd is
// not a regular file. It counts the lines that start with '{' (an event line
// written with leading spaces is not counted: the slice then grows), and
// never more than one event per 48 bytes (no event line is shorter). Counting
// reads the file once more, from the page cache that reading it fills
// anyway: tens of milliseconds for 100 MB.
func sizeHint(rd io.Reader) int {
	f, ok := rd.(interface {
		Stat() (os.FileInfo, error)
		io.ReaderAt
	})
	if !ok {
		return 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 64<<10 {
		return 0
	}
	buf := make([]byte, 1<<20)
	n, prev := 0, byte('\n')
	for off := int64(0); ; {
		k, err := f.ReadAt(buf, off)
		if k > 0 {
			if prev == '\n' && buf[0] == '{' {
				n++
			}
			n += bytes.Count(buf[:k], []byte("\n{"))
			prev = buf[k-1]
		}
		off += int64(k)
		if err != nil || k == 0 {
			break
		}
	}
	return int(min(int64(n), st.Size()/48+1))
}

// readAll reads a whole history; general reads every line with the general
// path (for tests that compare the two).
func readAll(name string, rd io.Reader, hint int, general bool) (*History, error) {
	r, err := NewReader(name, rd)
	if err != nil {
		return nil, err
	}
	r.general = general
	h := &History{Events: make([]Event, 0, hint)}
	h.Header, h.HasHeader = r.Header()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return nil, err
		}
		if len(h.Events) == cap(h.Events) {
			// Double: append's gentler growth on large slices copies the
			// (large) events several times over on million-event histories.
			h.Events = slices.Grow(h.Events, max(len(h.Events), 1024))
		}
		h.Events = append(h.Events, e)
	}
}

// ReadFile reads the history in the named file; "-" is standard input.
func ReadFile(path string) (*History, error) {
	if path == "-" {
		return ReadAll("<stdin>", os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(path, f)
}

// members is a JSON object's members by key, each value still encoded.
type members map[string]json.RawMessage

var (
	errDuplicate = errors.New("duplicate key")
	errUTF8      = errors.New("not valid UTF-8")
)

// splitObject splits the JSON object in raw into its members. Keys match
// exactly (not ignoring case, as encoding/json's struct decoding would), and a
// key that occurs twice is an error: which of the two values was meant is
// ambiguous. On error, key names the member at fault, if any.
func splitObject(raw []byte) (obj members, key string, err error) {
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, "", err
	}
	if !utf8.Valid(raw) { // name the first member at fault, as the line has them
		found := false
		eachKey(raw, func(q []byte) {
			var k string
			json.Unmarshal(q, &k) // a valid JSON string
			switch {
			case found:
			case !utf8.Valid(q):
				found = true // in the key: no name to print
			case !utf8.Valid(obj[k]):
				key, found = k, true
			}
		})
		return nil, key, errUTF8
	}
	n := 0
	eachKey(raw, func([]byte) { n++ })
	if n != len(obj) {
		seen := map[string]bool{}
		eachKey(raw, func(q []byte) {
			var k string
			json.Unmarshal(q, &k) // a valid JSON string
			if seen[k] && key == "" {
				key = k
			}
			seen[k] = true
		})
		return nil, key, errDuplicate
	}
	return obj, "", nil
}

// eachKey calls f with each key of the valid JSON object raw, as it is
// written (quoted, with its escapes).
func eachKey(raw []byte, f func(quoted []byte)) {
	depth, isKey := 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{', '[':
			depth++
			isKey = depth == 1 && c == '{'
		case '}', ']':
			depth--
		case ',':
			isKey = depth == 1
		case '"':
			j := i + 1
			for raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			if isKey {
				f(raw[i : j+1])
				isKey = false
			}
			i = j
		}
	}
}

// parseObject splits line n, which must be one JSON object.
func (r *Reader) parseObject(line []byte, n int) (members, error) {
	if line[0] != '{' {
		return nil, r.errf(n, "", "not a JSON object (each line must be one object: the header or an event), starts with %q", firstRune(line))
	}
	obj, key, err := splitObject(line)
	return obj, r.objectErr(n, "", line, key, err)
}

// objectErr turns an error of splitObject on raw into an *Error; prefix is
// the path of the object ("" for the line itself).
func (r *Reader) objectErr(n int, prefix string, raw []byte, key string, err error) error {
	if err == nil {
		return nil
	}
	field := key
	if prefix != "" && key != "" {
		field = prefix + "." + key
	} else if prefix != "" {
		field = prefix
	}
	switch err {
	case errDuplicate:
		return r.errf(n, field, "the key occurs twice")
	case errUTF8:
		return r.errf(n, field, "not valid UTF-8")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Offset >= int64(len(raw)) {
			dec := json.NewDecoder(bytes.NewReader(raw))
			var first json.RawMessage
			if dec.Decode(&first) == nil { // the error is what follows a whole object
				return r.errf(n, field, "more after the object, from byte %d of the line (one object per line)", dec.InputOffset()+1)
			}
			return r.errf(n, field, "the line ends before the object is closed (an event must be on one line)")
		}
		return r.errf(n, field, "not valid JSON: %v (at byte %d of the line)", se, se.Offset)
	}
	return r.errf(n, field, "not a valid JSON object: %v", err)
}

func firstRune(b []byte) string {
	c, _ := utf8.DecodeRune(b)
	return string(c)
}

func (r *Reader) parseHeader(h members) error {
	n := r.line
	p := fieldParser{r: r, line: n}
	if f := p.str("format", h["format"], false); p.err == nil && f != Format {
		return r.errf(n, "format", "header of another format %q (want %q)", f, Format)
	}
	if p.err != nil {
		return p.err
	}
	v := p.int("version", h["version"], true, 0)
	if p.err == nil && v != Version {
		return r.errf(n, "version", "unsupported version %d (this reader knows version %d)", v, Version)
	}
	out := Header{Format: Format, Version: Version, Line: n}
	out.Variant = p.str("variant", h["variant"], false)
	out.Seed = p.uint("seed", h["seed"])
	if c := h["config"]; !absent(c) {
		if c[0] != '{' {
			p.fail("config", "must be an object, got "+kind(c))
		} else {
			var b bytes.Buffer
			if err := json.Compact(&b, c); err != nil { // c was decoded: cannot fail
				p.fail("config", err.Error())
			}
			out.Config = b.Bytes()
		}
	}
	out.Expect = p.strings("expect", h["expect"])
	if out.Actions = p.strings("actions", h["actions"]); len(out.Actions) == 0 {
		out.Actions = nil
	}
	out.TimeUnit = p.str("timeUnit", h["timeUnit"], false)
	out.Partial = p.bool("partial", h["partial"])
	out.Note = p.str("note", h["note"], false)
	if p.err != nil {
		return p.err
	}
	r.header, r.hasHeader = out, true
	return nil
}

func (r *Reader) parseEvent(f *fields, n int) (Event, error) {
	w := &f.ev
	if w[kFormat] != nil {
		return Event{}, r.errf(n, "format", "a header is only allowed on the first line")
	}
	p := fieldParser{r: r, line: n}
	e := Event{Line: n, Index: r.events}
	e.Time = p.int("time", w[kTime], true, 0)
	e.Process = p.str("process", w[kProcess], true)
	e.Type = Type(p.str("type", w[kType], true))
	e.F = p.str("f", w[kF], true)
	if p.err != nil {
		return Event{}, p.err
	}
	switch e.Type {
	case Invoke, OK, Fail, Info:
	default:
		return Event{}, r.errf(n, "type", "unknown type %q (want invoke, ok, fail or info)", e.Type)
	}
	fault, sink := IsFault(e.F), IsSinkEvent(e.F)
	if !fault && !sink && !IsOperation(e.F) {
		return Event{}, r.errf(n, "f", "unknown operation %q (want acquire, renew, release, advance, write, read, the sink event apply, or a fault: pause, resume, crash, restart, partition, heal, drop, duplicate, clock)", e.F)
	}
	if fault && e.Type != Info {
		return Event{}, r.errf(n, "type", "fault %q must be an info event, got %s", e.F, e.Type)
	}
	if sink && e.Type != Info {
		return Event{}, r.errf(n, "type", "sink event %q must be an info event (it has no invocation), got %s", e.F, e.Type)
	}
	e.Resource = p.str("resource", w[kResource], !fault)
	if raw := w[kIndex]; !absent(raw) {
		e.Index = p.int("index", raw, false, 0)
	}
	if p.err != nil {
		return Event{}, p.err
	}
	if e.Index <= r.lastIndex && absent(w[kIndex]) {
		return Event{}, r.errf(n, "index", "missing: the event's index would be its position %d, which does not follow the previous event's index %d (give every event an index, or none)", e.Index, r.lastIndex)
	}
	if e.Index <= r.lastIndex {
		return Event{}, r.errf(n, "index", "index %d does not follow the previous event's index %d (indexes must increase down the file)", e.Index, r.lastIndex)
	}
	if e.Time < r.lastTime {
		return Event{}, r.errf(n, "time", "time %d goes backwards (previous event at %d)", e.Time, r.lastTime)
	}
	if err := r.parseValue(&p, f, &e); err != nil {
		return Event{}, err
	}
	if !fault && !sink {
		if err := r.pair(e, n); err != nil {
			return Event{}, err
		}
	}
	r.lastTime, r.lastIndex = e.Time, e.Index
	return e, nil
}

func (r *Reader) pair(e Event, n int) error {
	o, isOpen := r.open[e.Process]
	if e.Type == Invoke {
		if isOpen {
			return r.errf(n, "type", "process %q invokes %s while its %s on %q is still open", e.Process, e.F, o.f, o.resource)
		}
		r.open[e.Process] = openOp{e.F, e.Resource}
		return nil
	}
	if !isOpen {
		return r.errf(n, "type", "%s %s on %q by process %q completes no open invocation (the process has none open)", e.Type, e.F, e.Resource, e.Process)
	}
	if o.f != e.F || o.resource != e.Resource {
		return r.errf(n, "type", "%s %s on %q by process %q completes no open invocation (the process's open invocation is %s on %q)", e.Type, e.F, e.Resource, e.Process, o.f, o.resource)
	}
	delete(r.open, e.Process)
	return nil
}

// parseValue checks the value fields that the operation and type require.
func (r *Reader) parseValue(p *fieldParser, f *fields, e *Event) error {
	if raw := f.ev[kValue]; !f.split && !absent(raw) {
		if raw[0] != '{' {
			return r.errf(p.line, "value", "must be an object, got %s", kind(raw))
		}
		m, key, err := splitObject(raw)
		if err != nil {
			return r.objectErr(p.line, "value", raw, key, err)
		}
		for i, k := range valueKeys {
			f.v[i] = m[k]
		}
	}
	w := &f.v
	v := &e.Value
	need := func(string) bool { return false }
	switch e.Type {
	case Invoke:
		switch e.F {
		case Acquire:
			need = is("owner", "incarnation", "requestId", "ttl")
		case Renew, Release:
			need = is("owner", "incarnation", "token")
		case Write:
			need = is("token", "resultId", "payload")
		case Read:
			need = is("resultId")
		}
	case OK:
		switch e.F {
		case Acquire, Advance:
			need = is("token")
		case Write:
			need = is("outcome")
		}
	case Fail:
		need = is("error")
	case Info:
		if e.F == Apply {
			need = is("writer", "token", "resultId")
		}
	}
	v.Owner = p.str("value.owner", w[vOwner], need("owner"))
	v.Incarnation = p.ident("value.incarnation", w[vIncarnation], need("incarnation"), true)
	v.RequestID = p.ident("value.requestId", w[vRequestID], need("requestId"), false) // most are new
	v.TTL = p.int("value.ttl", w[vTTL], need("ttl"), 1)
	apply := e.F == Apply
	if apply {
		v.Writer = p.str("value.writer", w[vWriter], true)
	}
	v.Token = p.int("value.token", w[vToken], need("token"), 1)
	v.ResultID = p.str("value.resultId", w[vResultID], need("resultId"))
	if pl := w[vPayload]; !absent(pl) {
		v.Payload, v.HasPayload = p.str("value.payload", pl, false), true
	} else if need("payload") {
		p.fail("value.payload", "required string is missing")
	} else if e.F == Read && e.Type == OK && len(pl) == 0 {
		p.fail("value.payload", "required on an ok read: the payload read, a string, or null when the result is absent; the key is missing")
	}
	v.Task = p.str("value.task", w[vTask], false)
	v.Outcome = p.str("value.outcome", w[vOutcome], need("outcome"))
	v.Error = p.str("value.error", w[vError], need("error"))
	v.Target = p.str("value.target", w[vTarget], false)
	v.Offset = p.int("value.offset", w[vOffset], false, math.MinInt64)
	if apply || e.F == Write && (e.Type == OK || e.Type == Fail) {
		if raw := w[vFence]; !absent(raw) {
			v.Fence, v.HasFence = p.int("value.fence", raw, false, 0), true
		}
	}
	if p.err != nil {
		return p.err
	}
	if (e.F == Write && e.Type == OK || apply && v.Outcome != "") && v.Outcome != Written && v.Outcome != Replayed {
		p.fail("value.outcome", fmt.Sprintf("unknown write outcome %q (want written or replayed)", v.Outcome))
	}
	if allowed := failErrors[e.F]; e.Type == Fail && allowed != nil && !slices.Contains(allowed, v.Error) {
		p.fail("value.error", fmt.Sprintf("unknown %s error %q (want %s)", e.F, v.Error, strings.Join(allowed, " or ")))
	}
	if apply {
		switch {
		case v.Outcome == "" && v.Error == "":
			p.fail("value.outcome", "an apply event needs value.outcome (the write was applied) or value.error (it was rejected); both are missing")
		case v.Outcome != "" && v.Error != "":
			p.fail("value.error", "an apply event has value.outcome or value.error, not both")
		case v.Error != "" && v.Error != Fenced && v.Error != Conflict && v.Error != Expired:
			p.fail("value.error", fmt.Sprintf("unknown apply error %q (want fenced, conflict or expired)", v.Error))
		}
	}
	return p.err
}

// failErrors are the errors a fail of each operation may carry (a read's
// are free): a misspelt one ("FENCED") would otherwise pass for a failure
// of no consequence.
var failErrors = map[string][]string{
	Acquire: {Held},
	Renew:   {Expired, NotHolder},
	Release: {NotHolder},
	Advance: {Fenced},
	Write:   {Fenced, Conflict, Expired},
}

func is(fields ...string) func(string) bool {
	return func(f string) bool {
		for _, g := range fields {
			if f == g {
				return true
			}
		}
		return false
	}
}

// fieldParser parses typed fields, keeping the first error.
type fieldParser struct {
	r    *Reader
	line int
	err  error
}

func (p *fieldParser) fail(field, msg string) {
	if p.err == nil {
		p.err = p.r.errf(p.line, field, "%s", msg)
	}
}

// absent reports whether a member is missing or null.
func absent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// kind names the kind of a JSON value, for error messages.
func kind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "a number with a fraction or exponent"
	}
	return "a number"
}

func (p *fieldParser) str(field string, raw json.RawMessage, required bool) string {
	return p.strOf(field, raw, required, true)
}

// strOf parses a string; share says whether to share it with equal strings
// (see intern): not for strings that rarely recur, such as request ids.
func (p *fieldParser) strOf(field string, raw json.RawMessage, required, share bool) string {
	if absent(raw) {
		if required {
			p.fail(field, "required string is missing")
		}
		return ""
	}
	var s string
	ok := raw[0] == '"'
	switch {
	case !ok:
	case bytes.IndexByte(raw, '\\') < 0 && share: // the line is valid JSON and UTF-8: the string is as written
		s = p.r.intern(raw[1 : len(raw)-1])
	case bytes.IndexByte(raw, '\\') < 0:
		s = string(raw[1 : len(raw)-1])
	default:
		s, ok = unquote(raw)
	}
	if !ok {
		p.fail(field, "must be a string, got "+kind(raw))
		return ""
	}
	if required && s == "" {
		p.fail(field, "must not be empty")
	}
	return s
}

// unquote decodes the JSON string raw, which has escapes.
func unquote(raw []byte) (string, bool) {
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// ident parses an identifier given as a string or an integer.
func (p *fieldParser) ident(field string, raw json.RawMessage, required, share bool) string {
	if !absent(raw) && raw[0] != '"' {
		if _, ok := smallInt(raw); !ok {
			if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
				p.fail(field, "must be a string or an integer that fits in int64, got "+kind(raw))
				return ""
			}
		}
		if !share {
			return string(raw)
		}
		return p.r.intern(raw)
	}
	return p.strOf(field, raw, required, share)
}

// int parses an integer of at least min, without going through float64.
func (p *fieldParser) int(field string, raw json.RawMessage, required bool, min int64) int64 {
	if absent(raw) {
		if required {
			p.fail(field, "required integer is missing")
		}
		return 0
	}
	n, ok := smallInt(raw)
	var err error
	if !ok {
		n, err = strconv.ParseInt(string(raw), 10, 64)
	}
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			p.fail(field, "number outside int64")
		} else {
			p.fail(field, "must be an integer, got "+kind(raw))
		}
		return 0
	}
	if n < min {
		p.fail(field, fmt.Sprintf("must be at least %d, got %d", min, n))
		return 0
	}
	return n
}

func (p *fieldParser) uint(field string, raw json.RawMessage) uint64 {
	if absent(raw) {
		return 0
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		p.fail(field, "must be a non-negative integer that fits in 64 bits, got "+kind(raw))
	}
	return n
}

func (p *fieldParser) bool(field string, raw json.RawMessage) bool {
	if absent(raw) {
		return false
	}
	switch string(raw) {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(field, "must be true or false, got "+kind(raw))
	return false
}

// strings parses a list of strings; an empty list gives an empty, non-nil
// slice.
func (p *fieldParser) strings(field string, raw json.RawMessage) []string {
	if absent(raw) {
		return nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		p.fail(field, "must be a list of strings, got "+kind(raw))
		return nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		if it[0] != '"' || json.Unmarshal(it, &out[i]) != nil {
			p.fail(fmt.Sprintf("%s[%d]", field, i), "must be a string, got "+kind(it))
			return nil
		}
	}
	return out
}
