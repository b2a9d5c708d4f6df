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
	"strconv"
)

// Error is an input error: the file, line and field at fault.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: field %q: %s", e.File, e.Line, e.Field, e.Msg)
}

// MaxLine is the longest line a Reader accepts, in bytes.
const MaxLine = 16 << 20

// Reader reads a history one event at a time, checking that it is well
// formed: every malformed line is reported as an *Error.
type Reader struct {
	name      string
	sc        *bufio.Scanner
	line      int
	events    int64
	lastTime  int64
	open      map[string]openOp
	header    Header
	hasHeader bool
	pending   []byte // first event line, read while looking for the header
	pendLine  int
}

type openOp struct {
	f, resource string
}

// NewReader starts reading the history in r; name is used in errors. It reads
// the header, if there is one, at once.
func NewReader(name string, r io.Reader) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	rd := &Reader{name: name, sc: sc, open: map[string]openOp{}}
	line, err := rd.nextLine()
	if err != nil {
		if err == io.EOF {
			return rd, nil
		}
		return nil, err
	}
	var probe struct {
		Format *json.RawMessage `json:"format"`
	}
	if json.Unmarshal(line, &probe) == nil && probe.Format != nil {
		if err := rd.parseHeader(line); err != nil {
			return nil, err
		}
		return rd, nil
	}
	rd.pending, rd.pendLine = line, rd.line
	return rd, nil
}

// Header returns the header and whether the history had one.
func (r *Reader) Header() (Header, bool) { return r.header, r.hasHeader }

func (r *Reader) nextLine() ([]byte, error) {
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimSpace(r.sc.Bytes())
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

func (r *Reader) errf(line int, field, format string, args ...any) *Error {
	return &Error{File: r.name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next event, or io.EOF after the last.
func (r *Reader) Next() (Event, error) {
	line, n := r.pending, r.pendLine
	r.pending = nil
	if line == nil {
		var err error
		if line, err = r.nextLine(); err != nil {
			return Event{}, err
		}
		n = r.line
	}
	e, err := r.parseEvent(line, n)
	if err != nil {
		return Event{}, err
	}
	r.events++
	return e, nil
}

// ReadAll reads a whole history.
func ReadAll(name string, rd io.Reader) (*History, error) {
	r, err := NewReader(name, rd)
	if err != nil {
		return nil, err
	}
	h := &History{}
	h.Header, h.HasHeader = r.Header()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return nil, err
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

type wireHeader struct {
	Format   *string         `json:"format"`
	Version  json.RawMessage `json:"version"`
	Variant  json.RawMessage `json:"variant"`
	Seed     json.RawMessage `json:"seed"`
	Config   json.RawMessage `json:"config"`
	Expect   json.RawMessage `json:"expect"`
	Actions  json.RawMessage `json:"actions"`
	TimeUnit json.RawMessage `json:"timeUnit"`
	Partial  json.RawMessage `json:"partial"`
	Note     json.RawMessage `json:"note"`
}

func (r *Reader) parseHeader(line []byte) error {
	n := r.line
	var w wireHeader
	if err := json.Unmarshal(line, &w); err != nil {
		return r.errf(n, "", "header is not a JSON object: %v", err)
	}
	p := fieldParser{r: r, line: n}
	if w.Format == nil || *w.Format != Format {
		return r.errf(n, "format", "header of another format (want %q)", Format)
	}
	v := p.int("version", w.Version, true, 0)
	if p.err == nil && v != Version {
		return r.errf(n, "version", "unsupported version %d (this reader knows version %d)", v, Version)
	}
	h := Header{Format: Format, Version: Version}
	h.Variant = p.str("variant", w.Variant, false)
	h.Seed = p.uint("seed", w.Seed)
	if len(w.Config) > 0 && !bytes.Equal(w.Config, []byte("null")) {
		if w.Config[0] != '{' {
			p.fail("config", "must be an object")
		}
		h.Config = append(json.RawMessage(nil), w.Config...)
	}
	h.Expect = p.strings("expect", w.Expect)
	h.Actions = p.strings("actions", w.Actions)
	h.TimeUnit = p.str("timeUnit", w.TimeUnit, false)
	h.Partial = p.bool("partial", w.Partial)
	h.Note = p.str("note", w.Note, false)
	if p.err != nil {
		return p.err
	}
	r.header, r.hasHeader = h, true
	return nil
}

type wireEvent struct {
	Time     json.RawMessage `json:"time"`
	Process  json.RawMessage `json:"process"`
	Type     json.RawMessage `json:"type"`
	F        json.RawMessage `json:"f"`
	Resource json.RawMessage `json:"resource"`
	Value    json.RawMessage `json:"value"`
	Index    json.RawMessage `json:"index"`
}

type wireValue struct {
	Owner       json.RawMessage `json:"owner"`
	Incarnation json.RawMessage `json:"incarnation"`
	RequestID   json.RawMessage `json:"requestId"`
	TTL         json.RawMessage `json:"ttl"`
	Token       json.RawMessage `json:"token"`
	ResultID    json.RawMessage `json:"resultId"`
	Payload     json.RawMessage `json:"payload"`
	Task        json.RawMessage `json:"task"`
	Outcome     json.RawMessage `json:"outcome"`
	Error       json.RawMessage `json:"error"`
	Target      json.RawMessage `json:"target"`
	Offset      json.RawMessage `json:"offset"`
}

func (r *Reader) parseEvent(line []byte, n int) (Event, error) {
	if line[0] != '{' {
		return Event{}, r.errf(n, "", "not a JSON object")
	}
	var w wireEvent
	if err := json.Unmarshal(line, &w); err != nil {
		return Event{}, r.errf(n, "", "not a JSON object: %v", err)
	}
	p := fieldParser{r: r, line: n}
	e := Event{Line: n, Index: r.events}
	e.Time = p.int("time", w.Time, true, 0)
	e.Process = p.str("process", w.Process, true)
	e.Type = Type(p.str("type", w.Type, true))
	e.F = p.str("f", w.F, true)
	if p.err != nil {
		return Event{}, p.err
	}
	switch e.Type {
	case Invoke, OK, Fail, Info:
	default:
		return Event{}, r.errf(n, "type", "unknown type %q (want invoke, ok, fail or info)", e.Type)
	}
	fault := IsFault(e.F)
	if !fault && !IsOperation(e.F) {
		return Event{}, r.errf(n, "f", "unknown operation %q", e.F)
	}
	if fault && e.Type != Info {
		return Event{}, r.errf(n, "type", "fault %q must be an info event", e.F)
	}
	e.Resource = p.str("resource", w.Resource, !fault)
	if len(w.Index) > 0 {
		e.Index = p.int("index", w.Index, false, 0)
	}
	if p.err != nil {
		return Event{}, p.err
	}
	if e.Time < r.lastTime {
		return Event{}, r.errf(n, "time", "time %d goes backwards (previous event at %d)", e.Time, r.lastTime)
	}
	if err := r.parseValue(&p, w.Value, &e); err != nil {
		return Event{}, err
	}
	if !fault {
		if err := r.pair(e, n); err != nil {
			return Event{}, err
		}
	}
	r.lastTime = e.Time
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
	if !isOpen || o.f != e.F || o.resource != e.Resource {
		return r.errf(n, "type", "%s %s on %q by process %q completes no open invocation", e.Type, e.F, e.Resource, e.Process)
	}
	delete(r.open, e.Process)
	return nil
}

// parseValue checks the value fields that the operation and type require.
func (r *Reader) parseValue(p *fieldParser, raw json.RawMessage, e *Event) error {
	var w wireValue
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' {
			return r.errf(p.line, "value", "must be an object")
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			return r.errf(p.line, "value", "not a JSON object: %v", err)
		}
	}
	v := &e.Value
	need := func(f string) bool { return false }
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
	}
	v.Owner = p.str("value.owner", w.Owner, need("owner"))
	v.Incarnation = p.ident("value.incarnation", w.Incarnation, need("incarnation"))
	v.RequestID = p.ident("value.requestId", w.RequestID, need("requestId"))
	v.TTL = p.int("value.ttl", w.TTL, need("ttl"), 1)
	v.Token = p.int("value.token", w.Token, need("token"), 1)
	v.ResultID = p.str("value.resultId", w.ResultID, need("resultId"))
	if len(w.Payload) > 0 && !bytes.Equal(w.Payload, []byte("null")) {
		v.Payload, v.HasPayload = p.str("value.payload", w.Payload, true), true
	} else if need("payload") {
		p.fail("value.payload", "required string is missing")
	}
	v.Task = p.str("value.task", w.Task, false)
	v.Outcome = p.str("value.outcome", w.Outcome, need("outcome"))
	v.Error = p.str("value.error", w.Error, need("error"))
	v.Target = p.str("value.target", w.Target, false)
	v.Offset = p.int("value.offset", w.Offset, false, math.MinInt64)
	if p.err == nil && e.F == Write && e.Type == OK && v.Outcome != Written && v.Outcome != Replayed {
		p.fail("value.outcome", fmt.Sprintf("unknown write outcome %q (want written or replayed)", v.Outcome))
	}
	return p.err
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

func absent(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

func (p *fieldParser) str(field string, raw json.RawMessage, required bool) string {
	if absent(raw) {
		if required {
			p.fail(field, "required string is missing")
		}
		return ""
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		p.fail(field, "must be a string")
		return ""
	}
	if required && s == "" {
		p.fail(field, "must not be empty")
	}
	return s
}

// ident parses an identifier given as a string or an integer.
func (p *fieldParser) ident(field string, raw json.RawMessage, required bool) string {
	if !absent(raw) && raw[0] != '"' {
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			p.fail(field, "must be a string or an integer")
			return ""
		}
		return string(raw)
	}
	return p.str(field, raw, required)
}

func (p *fieldParser) int(field string, raw json.RawMessage, required bool, min int64) int64 {
	if absent(raw) {
		if required {
			p.fail(field, "required integer is missing")
		}
		return 0
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			p.fail(field, "number outside int64")
		} else {
			p.fail(field, "must be an integer")
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
		p.fail(field, "must be a non-negative integer that fits in 64 bits")
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
	p.fail(field, "must be true or false")
	return false
}

func (p *fieldParser) strings(field string, raw json.RawMessage) []string {
	if absent(raw) {
		return nil
	}
	var ss []string
	if raw[0] != '[' || json.Unmarshal(raw, &ss) != nil {
		p.fail(field, "must be a list of strings")
		return nil
	}
	if ss == nil {
		ss = []string{}
	}
	return ss
}
