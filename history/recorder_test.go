package history

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRecorderConcurrentRoundTrip(t *testing.T) {
	var out bytes.Buffer
	var tick int64
	clock := func() int64 { tick++; return tick } // called under the recorder's lock
	r := NewRecorder(Header{TimeUnit: "tick", Note: "test"}, clock, &out)
	const workers, ops = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proc := fmt.Sprintf("w%d", w)
			for i := range ops {
				p := r.Invoke(proc, Write, "job", Value{Token: 1, ResultID: fmt.Sprint(i), Payload: "x", HasPayload: true})
				if i%3 == 0 {
					r.Fault(proc, Pause, Value{})
				}
				r.Complete(p, OK, Value{Outcome: Written})
			}
		}()
	}
	wg.Wait()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll("recorded", &out)
	if err != nil {
		t.Fatalf("the recorder wrote a malformed history: %v", err)
	}
	want := r.History()
	if len(got.Events) != len(want.Events) || len(got.Events) != workers*(2*ops+(ops+2)/3) {
		t.Fatalf("read %d events, recorded %d", len(got.Events), len(want.Events))
	}
	if !got.HasHeader || got.Header.TimeUnit != "tick" || got.Header.Note != "test" {
		t.Fatalf("header = %+v", got.Header)
	}
	for i, e := range got.Events {
		if e.Time != int64(i+1) || e.Process != want.Events[i].Process || e.Type != want.Events[i].Type {
			t.Fatalf("event %d = %+v, recorded %+v", i, e, want.Events[i])
		}
	}
	if n := len(got.Ops()); n != workers*ops {
		t.Fatalf("%d ops, want %d", n, workers*ops)
	}
}

func TestRecorderMisuse(t *testing.T) {
	cases := []struct {
		name string
		do   func(r *Recorder)
		want string
	}{
		{"second invoke", func(r *Recorder) {
			r.Invoke("a", Read, "x", Value{ResultID: "r"})
			r.Invoke("a", Read, "x", Value{ResultID: "r"})
		}, "still open"},
		{"double complete", func(r *Recorder) {
			p := r.Invoke("a", Read, "x", Value{ResultID: "r"})
			r.Complete(p, OK, Value{})
			r.Complete(p, OK, Value{})
		}, "not open"},
		{"bad type", func(r *Recorder) {
			r.Complete(r.Invoke("a", Read, "x", Value{ResultID: "r"}), Invoke, Value{})
		}, "type"},
		{"unknown op", func(r *Recorder) { r.Invoke("a", "frob", "x", Value{}) }, "unknown operation"},
		{"unknown fault", func(r *Recorder) { r.Fault("a", Write, Value{}) }, "unknown fault"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			r := NewRecorder(Header{}, MonotonicClock(time.Nanosecond), &out)
			c.do(r)
			if err := r.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Err() = %v, want one containing %q", err, c.want)
			}
			if _, err := ReadAll("recorded", &out); err != nil && !errors.Is(err, ErrNoEvents) {
				t.Fatalf("misuse left a malformed history: %v", err)
			}
		})
	}
}

// After a misuse the recording goes on on the writer as in memory: the file
// holds exactly the events History holds.
func TestRecorderMisuseKeepsWriting(t *testing.T) {
	misuses := map[string]func(r *Recorder){
		"double complete": func(r *Recorder) {
			p := r.Invoke("w1", Acquire, "job-1", Value{Owner: "w1", Incarnation: "1", RequestID: "r1", TTL: 100})
			r.Complete(p, OK, Value{Token: 1})
			r.Complete(p, OK, Value{Token: 1})
		},
		"second invoke": func(r *Recorder) {
			p := r.Invoke("w1", Read, "job-1", Value{ResultID: "t0"})
			r.Invoke("w1", Read, "job-1", Value{ResultID: "t0"})
			r.Complete(p, OK, Value{})
		},
		"unknown fault": func(r *Recorder) { r.Fault("w1", Write, Value{}) },
		"bad apply":     func(r *Recorder) { r.Apply("job-1", Value{Writer: "w1"}) },
	}
	for name, misuse := range misuses {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			var tick int64
			r := NewRecorder(Header{TimeUnit: "tick"}, func() int64 { tick++; return tick }, &out)
			r.Complete(r.Invoke(Coordinator, Advance, "job-1", Value{}), OK, Value{Token: 1})
			misuse(r)
			if r.Err() == nil {
				t.Fatal("Err() = nil after a misuse")
			}
			for i := range 3 {
				id := fmt.Sprint("t", i)
				w := r.Invoke("w1", Write, "job-1", Value{Token: 1, ResultID: id, Payload: "p", HasPayload: true, Task: id})
				r.Fault(Nemesis, Partition, Value{})
				r.Complete(w, OK, Value{Outcome: Written})
			}
			got, err := ReadAll("recorded", &out)
			if err != nil {
				t.Fatalf("the recorder wrote a malformed history: %v", err)
			}
			want := r.History().Events
			if len(got.Events) != len(want) {
				t.Fatalf("the file holds %d events, the recorder %d", len(got.Events), len(want))
			}
			for i, e := range got.Events {
				e.Line = 0
				if !reflect.DeepEqual(e, want[i]) {
					t.Fatalf("event %d in the file = %+v, recorded %+v", i, e, want[i])
				}
			}
		})
	}
}

// failAfter fails every write after its first n.
type failAfter struct {
	n int
	w bytes.Buffer
}

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n == 0 {
		return 0, errDiskFull
	}
	f.n--
	return f.w.Write(b)
}

// Err reports a misuse and a failed write both, in the order they happened;
// after the failed write the writer holds the events before it.
func TestRecorderMisuseAndWriterError(t *testing.T) {
	doubleComplete := func(r *Recorder) {
		p := r.Invoke("a", Read, "x", Value{ResultID: "r"})
		r.Complete(p, OK, Value{})
		r.Complete(p, OK, Value{})
	}
	for _, misuseFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("misuse first ", misuseFirst), func(t *testing.T) {
			w := &failAfter{n: 4} // the header and three events
			r := NewRecorder(Header{}, MonotonicClock(time.Nanosecond), w)
			faults := func() { // the second or the fourth is the write that fails
				for range 4 {
					r.Fault(Nemesis, Partition, Value{})
				}
			}
			if misuseFirst {
				doubleComplete(r)
				faults()
			} else {
				faults()
				doubleComplete(r)
			}
			err := r.Err()
			if err == nil || !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "not open") {
				t.Fatalf("Err() = %v, want the misuse and the failed write", err)
			}
			msg := err.Error()
			if first := strings.Index(msg, "not open") < strings.Index(msg, "disk full"); first != misuseFirst {
				t.Fatalf("Err() = %q: not in the order they happened", msg)
			}
			got, rerr := ReadAll("recorded", &w.w)
			if rerr != nil {
				t.Fatalf("the recorder wrote a malformed history: %v", rerr)
			}
			if n := len(got.Events); n != 3 {
				t.Fatalf("the writer holds %d events, want the 3 before the failed write", n)
			}
			if n := len(r.History().Events); n != 6 {
				t.Fatalf("%d events kept, want 6", n)
			}
		})
	}
}

func TestRecorderOpenOperationIsInfo(t *testing.T) {
	r := NewRecorder(Header{}, MonotonicClock(time.Millisecond), nil)
	r.Invoke("a", Acquire, "x", Value{Owner: "a", Incarnation: "1", RequestID: "q", TTL: 5})
	h := r.History()
	ops := h.Ops()
	if len(ops) != 1 || h.Result(ops[0]) != Info {
		t.Fatalf("ops = %+v", ops)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestRecorderWriterError(t *testing.T) {
	r := NewRecorder(Header{}, MonotonicClock(time.Nanosecond), failingWriter{})
	r.Fault(Nemesis, Partition, Value{})
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err() = %v", err)
	}
	if n := len(r.History().Events); n != 1 {
		t.Fatalf("%d events kept, want 1", n)
	}
}

// A worker's acquire and write, recorded as they happen.
func ExampleRecorder() {
	var now int64
	clock := func() int64 { now += 5; return now } // stands in for MonotonicClock(time.Millisecond)
	r := NewRecorder(Header{TimeUnit: "ms"}, clock, os.Stdout)

	op := r.Invoke("w1", Acquire, "job-1", Value{Owner: "w1", Incarnation: "1", RequestID: "w1-1", TTL: 50})
	r.Complete(op, OK, Value{Token: 7}) // the coordinator granted token 7

	op = r.Invoke("w1", Write, "job-1", Value{Token: 7, ResultID: "task-1", Payload: "42", HasPayload: true, Task: "task-1"})
	r.Fault("w1", Pause, Value{}) // a pause observed meanwhile
	r.Complete(op, Fail, Value{Error: Fenced})

	if err := r.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"format":"fencecheck-history","version":1,"timeUnit":"ms"}
	// {"time":5,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"w1-1","ttl":50}}
	// {"time":10,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":7}}
	// {"time":15,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":7,"resultId":"task-1","payload":"42","task":"task-1"}}
	// {"time":20,"process":"w1","type":"info","f":"pause","value":{}}
	// {"time":25,"process":"w1","type":"fail","f":"write","resource":"job-1","value":{"error":"fenced"}}
}
