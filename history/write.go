package history

import (
	"bufio"
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
	j, err := json.Marshal(out)
	if err != nil { // only strings and numbers: cannot fail
		panic(err)
	}
	return append(append(b, j...), '\n')
}

// AppendEvent appends e as one JSON line, with its keys in a fixed order, so
// that the same events always give the same bytes. The index field is not
// written: it is the line order.
func AppendEvent(b []byte, e Event) []byte {
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
	if _, err := strconv.ParseInt(v.Incarnation, 10, 64); err == nil {
		o.raw("incarnation", v.Incarnation)
	} else {
		o.str("incarnation", v.Incarnation)
	}
	o.str("requestId", v.RequestID)
	o.int("ttl", v.TTL)
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
	o.str("target", v.Target)
	o.int("offset", v.Offset)
	return append(o.b, "}}\n"...)
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
	j, _ := json.Marshal(s) // a string always marshals
	return append(b, j...)
}

// Encode writes h in the history format: its header (when HasHeader) and its
// events, one per line.
func Encode(w io.Writer, h *History) error {
	bw := bufio.NewWriter(w)
	var b []byte
	if h.HasHeader {
		b = AppendHeader(b, h.Header)
	}
	for _, e := range h.Events {
		b = AppendEvent(b, e)
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
