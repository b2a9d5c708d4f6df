package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

type headerOut struct {
	Format   string          `json:"format"`
	Version  int             `json:"version"`
	Variant  string          `json:"variant,omitempty"`
	Seed     uint64          `json:"seed,omitempty"`
	Config   json.RawMessage `json:"config,omitempty"`
	Expect   *[]string       `json:"expect,omitempty"`
	TimeUnit string          `json:"timeUnit,omitempty"`
	Partial  bool            `json:"partial,omitempty"`
	Note     string          `json:"note,omitempty"`
	Actions  []string        `json:"actions,omitempty"`
}

// AppendHeader appends h as one JSON line.
func AppendHeader(b []byte, h Header) []byte {
	out := headerOut{Format: Format, Version: Version, Variant: h.Variant, Seed: h.Seed,
		Config: h.Config, TimeUnit: h.TimeUnit, Partial: h.Partial, Note: h.Note, Actions: h.Actions}
	if h.Expect != nil {
		out.Expect = &h.Expect
	}
	return appendJSON(b, out) // ends with a newline
}

// appendJSON appends v as JSON, leaving <, > and & as they are (the history is
// not HTML, and Config round-trips byte for byte).
func appendJSON(b []byte, v any) []byte {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // strings, numbers and a valid Config: cannot fail
		panic(err)
	}
	return buf.Bytes()
}

// AppendEvent appends e as one JSON line, with its keys in a fixed order, so
// that the same events always give the same bytes. The index field is not
// written: it is the line order.
func AppendEvent(b []byte, e Event) []byte {
	return appendEvent(b, e, false)
}

// appendEvent appends e, with its index when withIndex.
func appendEvent(b []byte, e Event, withIndex bool) []byte {
	b = append(b, `{"time":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = appendKV(append(b, ','), "process", e.Process)
	b = appendKV(append(b, ','), "type", string(e.Type))
	b = appendKV(append(b, ','), "f", e.F)
	if e.Resource != "" {
		b = appendKV(append(b, ','), "resource", e.Resource)
	}
	o := object{b: append(b, `,"value":{`...)}
	v := e.Value
	o.str("owner", v.Owner)
	if isInt(v.Incarnation) {
		o.raw("incarnation", v.Incarnation)
	} else {
		o.str("incarnation", v.Incarnation)
	}
	o.str("requestId", v.RequestID)
	o.int("ttl", v.TTL)
	o.str("writer", v.Writer)
	o.int("token", v.Token)
	o.str("resultId", v.ResultID)
	switch {
	case v.HasPayload:
		o.key("payload")
		o.b = appendString(o.b, v.Payload)
	case e.F == Read && e.Type == OK:
		o.raw("payload", "null")
	}
	o.str("task", v.Task)
	o.str("outcome", v.Outcome)
	o.str("error", v.Error)
	if v.HasFence {
		o.key("fence")
		o.b = strconv.AppendInt(o.b, v.Fence, 10)
	}
	o.str("target", v.Target)
	o.int("offset", v.Offset)
	b = append(o.b, '}')
	if withIndex {
		b = strconv.AppendInt(append(b, `,"index":`...), e.Index, 10)
	}
	return append(b, "}\n"...)
}

// isInt reports whether s is an integer in canonical form (what the reader
// makes of an integer identifier), so that it can be written as a number.
func isInt(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == s
}

// object appends the members of a JSON object, skipping empty ones.
type object struct {
	b []byte
	n int // members so far
}

func (o *object) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(append(append(o.b, '"'), k...), `":`...)
}

func (o *object) str(k, v string) {
	if v != "" {
		o.key(k)
		o.b = appendString(o.b, v)
	}
}

func (o *object) raw(k, v string) {
	if v != "" {
		o.key(k)
		o.b = append(o.b, v...)
	}
}

func (o *object) int(k string, v int64) {
	if v != 0 {
		o.key(k)
		o.b = strconv.AppendInt(o.b, v, 10)
	}
}

func appendKV(b []byte, k, v string) []byte {
	b = append(append(append(b, '"'), k...), `":`...)
	return appendString(b, v)
}

func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			b = appendJSON(b, s)
			return b[:len(b)-1] // without the encoder's newline
		}
	}
	return append(append(append(b, '"'), s...), '"') // plain ASCII: nothing to escape
}

// Encode writes h in the history format: its header (when HasHeader) and its
// events, one per line. An event's index is written when it is not the
// event's position, so that reading the output gives the same events.
func Encode(w io.Writer, h *History) error {
	bw := bufio.NewWriter(w)
	var b []byte
	if h.HasHeader {
		b = AppendHeader(b, h.Header)
	}
	for i, e := range h.Events {
		b = appendEvent(b, e, e.Index != int64(i))
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}
