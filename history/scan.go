package history

import (
	"unicode/utf8"
)

// The fast path of the reader.
//
// Almost every event line in practice is a flat object of known keys whose
// values are plain strings (no escapes), integers and null, with a flat value
// object of the same kind: what this package writes, and what any JSON
// encoder writes for such data. scanEvent recognizes exactly that subset of
// JSON, without allocating, and splits the line into its known members. On
// anything else — an escape, an unknown key, a key given twice, a nested
// list, a boolean, a syntax error, invalid UTF-8 — it gives up, and the line
// is read again by the general path (encoding/json), which accepts all of
// JSON and produces the error messages. Both paths feed the same checks of
// the fields, so a line reads the same whichever path read it: FuzzRead
// checks that, line by line.

// The known keys of an event line and of its value.
const (
	kTime = iota
	kProcess
	kType
	kF
	kResource
	kValue
	kIndex
	kFormat
	nEventKeys
)

const (
	vOwner = iota
	vIncarnation
	vRequestID
	vTTL
	vToken
	vResultID
	vPayload
	vTask
	vOutcome
	vError
	vTarget
	vOffset
	vWriter
	vFence
	nValueKeys
)

var eventKeys = [nEventKeys]string{"time", "process", "type", "f", "resource", "value", "index", "format"}

var valueKeys = [nValueKeys]string{"owner", "incarnation", "requestId", "ttl", "token", "resultId", "payload",
	"task", "outcome", "error", "target", "offset", "writer", "fence"}

func eventKey(k []byte) int {
	switch string(k) {
	case "time":
		return kTime
	case "process":
		return kProcess
	case "type":
		return kType
	case "f":
		return kF
	case "resource":
		return kResource
	case "value":
		return kValue
	case "index":
		return kIndex
	case "format":
		return kFormat
	}
	return -1
}

func valueKey(k []byte) int {
	switch string(k) {
	case "owner":
		return vOwner
	case "incarnation":
		return vIncarnation
	case "requestId":
		return vRequestID
	case "ttl":
		return vTTL
	case "token":
		return vToken
	case "resultId":
		return vResultID
	case "payload":
		return vPayload
	case "task":
		return vTask
	case "outcome":
		return vOutcome
	case "error":
		return vError
	case "target":
		return vTarget
	case "offset":
		return vOffset
	case "writer":
		return vWriter
	case "fence":
		return vFence
	}
	return -1
}

// fields are the known members of an event line, each value still encoded
// (nil when the key is absent). The value's members are in v when split is
// true; otherwise ev[kValue] holds the value as it is written, to be split
// by the general path when the event's checks get to it.
type fields struct {
	ev    [nEventKeys][]byte
	v     [nValueKeys][]byte
	split bool
}

// fromMembers fills f from a line split by the general path.
func (f *fields) fromMembers(m members) {
	*f = fields{}
	for i, k := range eventKeys {
		if raw, ok := m[k]; ok {
			f.ev[i] = raw
		}
	}
}

// scanEvent fills f from the event line b (without surrounding whitespace,
// starting with '{'), or returns false when the line is outside the fast
// path's subset (or not JSON at all).
func scanEvent(b []byte, f *fields) bool {
	*f = fields{}
	if !utf8.Valid(b) {
		return false
	}
	i, ok := scanObject(b, 0, func(k []byte, i int) (int, bool) {
		key := eventKey(k)
		if key < 0 || f.ev[key] != nil {
			return 0, false
		}
		if key == kValue && i < len(b) && b[i] == '{' {
			end, ok := scanObject(b, i, func(k []byte, i int) (int, bool) {
				key := valueKey(k)
				if key < 0 || f.v[key] != nil {
					return 0, false
				}
				end, ok := scanScalar(b, i)
				if ok {
					f.v[key] = b[i:end]
				}
				return end, ok
			})
			if ok {
				f.ev[kValue], f.split = b[i:end], true
			}
			return end, ok
		}
		end, ok := scanScalar(b, i)
		if ok {
			f.ev[key] = b[i:end]
		}
		return end, ok
	})
	return ok && i == len(b)
}

// scanObject scans the flat object that starts at b[i] ('{'), calling member
// with each key (plain, unescaped) and the position of its value; member
// returns where the value ends. It returns where the object ends.
func scanObject(b []byte, i int, member func(key []byte, i int) (int, bool)) (int, bool) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		end, ok := scanString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		if i, ok = member(key, skipSpace(b, i+1)); !ok {
			return 0, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanScalar scans a plain string, an integer or null at b[i].
func scanScalar(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == 'n':
		if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
			return i + 4, true
		}
	case c == '-' || c >= '0' && c <= '9':
		return scanInt(b, i)
	}
	return 0, false
}

// scanString scans a string with no escapes and no control characters at
// b[i] ('"'), returning where it ends (after the closing quote).
func scanString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\' || c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// scanInt scans a JSON integer (no fraction, no exponent) of at most 18
// digits, which always fits in int64, at b[i].
func scanInt(b []byte, i int) (int, bool) {
	j := i
	if b[j] == '-' {
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	n := j - start
	if n == 0 || n > 18 || n > 1 && b[start] == '0' {
		return 0, false
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, false
	}
	return j, true
}

// smallInt parses an integer that scanInt accepted, or any JSON integer of
// at most 18 digits; ok is false for anything else.
func smallInt(raw []byte) (n int64, ok bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	d := raw
	if neg {
		d = raw[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// maxInterned bounds the strings a Reader keeps to share: names recur (a
// history has few processes, resources and operations, and results and
// payloads repeat), so most events then need no string of their own.
const (
	maxInterned    = 1 << 16
	maxInternedLen = 64
)

// known returns the format's own words (types, operations, outcomes,
// errors, reserved processes) without a map lookup.
func known(b []byte) (string, bool) {
	switch string(b) {
	case "invoke":
		return string(Invoke), true
	case "ok":
		return string(OK), true
	case "fail":
		return string(Fail), true
	case "info":
		return string(Info), true
	case Acquire:
		return Acquire, true
	case Renew:
		return Renew, true
	case Release:
		return Release, true
	case Advance:
		return Advance, true
	case Write:
		return Write, true
	case Read:
		return Read, true
	case Apply:
		return Apply, true
	case Written:
		return Written, true
	case Replayed:
		return Replayed, true
	case Held:
		return Held, true
	case Expired:
		return Expired, true
	case NotHolder:
		return NotHolder, true
	case Fenced:
		return Fenced, true
	case Conflict:
		return Conflict, true
	case Coordinator:
		return Coordinator, true
	case Nemesis:
		return Nemesis, true
	case Sink:
		return Sink, true
	}
	return "", false
}

// intern returns the string b, shared with earlier equal strings.
func (r *Reader) intern(b []byte) string {
	if len(b) <= len(Coordinator) {
		if s, ok := known(b); ok {
			return s
		}
	}
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= maxInternedLen && len(r.names) < maxInterned {
		if r.names == nil {
			r.names = make(map[string]string, 1024)
		}
		r.names[s] = s
	}
	return s
}
