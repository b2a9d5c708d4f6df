package realdb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fencecheck/fencecheck/history"
	leases "github.com/fencecheck/fencecheck/lease"
)

// lessor is the coordinator as a worker sees it: in process, or over the
// loopback protocol.
type lessor interface {
	Acquire(ctx context.Context, r AcquireRequest) (Grant, error)
	Renew(ctx context.Context, r LeaseRequest) error
	Release(ctx context.Context, r LeaseRequest) error
}

// pauser pauses a worker, or not, at a point of its loop: a goroutine worker
// blocks, a process worker asks the driver, which may stop it with SIGSTOP.
type pauser interface {
	maybePause(ctx context.Context, where string) error
}

// Pause points of a worker's loop.
const (
	beforeRenew = "before-renew"
	beforeWrite = "before-write"
	inWindow    = "window"
)

// workerSpec is what a worker does; it crosses to process workers as JSON.
type workerSpec struct {
	ID          string
	Incarnation string
	Seed        uint64
	Resources   int
	Tasks       int
	Attempts    int
	TTL         time.Duration
	RenewProb   float64
	DropProb    float64
	Sink        SinkConfig
	// Lease is the lease service (Builtin: the driver's coordinator);
	// Endpoints its addresses and Prefix the run's lock keys, for etcd and
	// Redis.
	Lease     string   `json:",omitempty"`
	Endpoints []string `json:",omitempty"`
	Prefix    string   `json:",omitempty"`
}

// worker runs one worker's loop against a coordinator and a sink.
type worker struct {
	spec  workerSpec
	rng   *rand.Rand
	coord lessor
	sink  Sink
	log   leases.Log // the driver's recorder, in process or over the loopback protocol
	pause pauser
	done  map[string]bool // resources whose tasks this worker saw all written
	// selfRecording: the lessor records acquire, renew and release itself
	// (the etcd and Redis adapters); the worker then renews as a keepalive,
	// whenever a third of the ttl has passed since the last grant or renew.
	selfRecording bool
	renewed       time.Time
	down          int // lease service answers of unknown outcome in a row
}

// maxDown is how many answers of unknown outcome in a row from the lease
// service a worker takes before it gives up: the service is gone.
const maxDown = 4

// selfRecorder is a lessor that records its own operations.
type selfRecorder interface{ recordsItself() }

func resourceName(i int) string { return fmt.Sprintf("job-%d", i+1) }

func taskName(resource string, k int) string { return fmt.Sprintf("%s/task-%d", resource, k+1) }

// run makes spec.Attempts attempts, or fewer when it has seen every task
// done. An error is a failure of the machinery (database, protocol,
// recorder), not of the protocol under test.
func (w *worker) run(ctx context.Context) error {
	for attempt := 0; attempt < w.spec.Attempts && len(w.done) < w.spec.Resources; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		resource := resourceName(w.rng.IntN(w.spec.Resources))
		if w.done[resource] {
			continue
		}
		if err := w.attempt(ctx, resource, fmt.Sprintf("%s-%d", w.spec.ID, attempt)); err != nil {
			return fmt.Errorf("worker %s, attempt %d on %s: %w", w.spec.ID, attempt, resource, err)
		}
	}
	return nil
}

// attempt acquires the resource, finds its first task without a result,
// computes and writes that result with its token, and releases.
func (w *worker) attempt(ctx context.Context, resource, requestID string) error {
	grant, err := w.acquire(ctx, resource, requestID)
	var down unavailable
	if errors.As(err, &down) {
		if w.down++; w.down >= maxDown {
			return fmt.Errorf("%w (%d answers of unknown outcome in a row)", err, w.down)
		}
		return w.backoff(ctx)
	}
	w.down = 0
	if errors.Is(err, ErrHeld) {
		return w.backoff(ctx)
	}
	if err != nil {
		return err
	}
	lease := LeaseRequest{Resource: resource, Owner: w.spec.ID, Incarnation: w.spec.Incarnation,
		Token: grant.Token, TTL: w.spec.TTL}
	task := ""
	for k := 0; k < w.spec.Tasks && task == ""; k++ {
		if lost, err := w.keepalive(ctx, lease); lost || err != nil {
			return err
		}
		present, err := w.read(ctx, resource, taskName(resource, k))
		if err != nil {
			return err
		}
		if !present {
			task = taskName(resource, k)
		}
	}
	if task == "" {
		w.done[resource] = true
		return w.release(ctx, lease)
	}
	// The computation: its result depends on who computed it, as a real
	// result may (a timestamp, a random choice), so a stale result differs.
	payload := fmt.Sprintf("%s by %s #%d", task, w.spec.ID, w.rng.Uint32()%1000)
	if err := w.pause.maybePause(ctx, beforeRenew); err != nil {
		return err
	}
	if w.rng.Float64() < w.spec.RenewProb {
		err := w.renew(ctx, lease)
		var down unavailable
		if errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHolder) || errors.As(err, &down) {
			return nil // the lease is lost: give up the task
		}
		if err != nil {
			return err
		}
	}
	if err := w.pause.maybePause(ctx, beforeWrite); err != nil {
		return err
	}
	if lost, err := w.keepalive(ctx, lease); lost || err != nil {
		return err
	}
	if err := w.write(ctx, resource, grant.Token, task, payload); err != nil {
		return err
	}
	return w.release(ctx, lease)
}

// keepalive renews the lease if a third of its ttl has passed since the
// last grant or renew, for a lessor that records itself (a lease service's
// keepalive, owned by the worker so that the history shows it and a pause
// stops it). It reports whether the lease is lost; the worker then releases
// (a release of a lost lease fails not_holder, or expired leases just end).
func (w *worker) keepalive(ctx context.Context, l LeaseRequest) (lost bool, err error) {
	if !w.selfRecording || time.Since(w.renewed) < w.spec.TTL/3 {
		return false, nil
	}
	err = w.renew(ctx, l)
	var down unavailable
	if errors.Is(err, ErrExpired) || errors.Is(err, ErrNotHolder) || errors.As(err, &down) {
		return true, w.release(ctx, l)
	}
	return false, err
}

// backoff waits a quarter to a half of a ttl before the next attempt.
func (w *worker) backoff(ctx context.Context) error {
	return Sleep(ctx, w.spec.TTL/4+time.Duration(w.rng.Int64N(int64(w.spec.TTL/4)+1)))
}

// call records the invocation, runs op, and records its completion: ok, fail
// for a protocol error, info for anything else.
func (w *worker) call(f, resource string, in history.Value, op func() (history.Value, error)) error {
	if err := w.log.Invoke(w.spec.ID, f, resource, in); err != nil {
		return err
	}
	out, err := op()
	t := history.OK
	var rej rejected
	switch {
	case errors.As(err, &rej):
		// A write the sink refused keeps the fence it reported.
		t, out = history.Fail, history.Value{Error: err.Error(), Fence: out.Fence, HasFence: out.HasFence}
	case errors.Is(err, ErrHeld), errors.Is(err, ErrExpired), errors.Is(err, ErrNotHolder):
		t, out = history.Fail, history.Value{Error: err.Error()}
	case err != nil:
		t, out = history.Info, history.Value{Error: err.Error()}
	}
	if lerr := w.log.Complete(w.spec.ID, t, f, resource, out); lerr != nil {
		return lerr
	}
	return err
}

// acquire asks for the lease. Sometimes it plays a lost reply: it records
// the answer as unknown and asks again with the same request id.
func (w *worker) acquire(ctx context.Context, resource, requestID string) (Grant, error) {
	req := AcquireRequest{Resource: resource, Owner: w.spec.ID, Incarnation: w.spec.Incarnation,
		RequestID: requestID, TTL: w.spec.TTL}
	if w.selfRecording {
		g, err := w.coord.Acquire(ctx, req)
		w.renewed = time.Now()
		return g, err
	}
	in := history.Value{Owner: req.Owner, Incarnation: req.Incarnation, RequestID: requestID, TTL: int64(req.TTL)}
	drop := w.rng.Float64() < w.spec.DropProb
	var g Grant
	err := w.call(history.Acquire, resource, in, func() (history.Value, error) {
		var err error
		g, err = w.coord.Acquire(ctx, req)
		if err == nil && drop {
			err = errLostReply
		}
		return history.Value{Token: g.Token, TTL: int64(g.TTL)}, err
	})
	if errors.Is(err, errLostReply) {
		return w.acquire(ctx, resource, requestID) // drop is drawn again: a retry may be lost too
	}
	return g, err
}

// errLostReply stands for a reply lost on the way back.
var errLostReply = errors.New("reply lost")

func (w *worker) renew(ctx context.Context, l LeaseRequest) error {
	if w.selfRecording {
		err := w.coord.Renew(ctx, l)
		if err == nil {
			w.renewed = time.Now()
		}
		return err
	}
	in := history.Value{Owner: l.Owner, Incarnation: l.Incarnation, Token: l.Token, TTL: int64(l.TTL)}
	return w.call(history.Renew, l.Resource, in, func() (history.Value, error) {
		return history.Value{}, w.coord.Renew(ctx, l)
	})
}

// release gives the lease back; a lease already lost is no error of the
// worker's.
func (w *worker) release(ctx context.Context, l LeaseRequest) error {
	var err error
	if w.selfRecording {
		err = w.coord.Release(ctx, l)
	} else {
		in := history.Value{Owner: l.Owner, Incarnation: l.Incarnation, Token: l.Token}
		err = w.call(history.Release, l.Resource, in, func() (history.Value, error) {
			return history.Value{}, w.coord.Release(ctx, l)
		})
	}
	var down unavailable
	if errors.Is(err, ErrNotHolder) || errors.As(err, &down) {
		return nil
	}
	return err
}

func (w *worker) read(ctx context.Context, resource, resultID string) (bool, error) {
	var found bool
	err := w.call(history.Read, resource, history.Value{ResultID: resultID}, func() (history.Value, error) {
		payload, ok, err := w.sink.Read(ctx, resource, resultID)
		found = ok
		return history.Value{Payload: payload, HasPayload: ok}, err
	})
	return found, err
}

func (w *worker) write(ctx context.Context, resource string, token int64, task, payload string) error {
	in := history.Value{Token: token, ResultID: task, Payload: payload, HasPayload: true, Task: task}
	err := w.call(history.Write, resource, in, func() (history.Value, error) {
		out, fence, err := w.sink.Write(ctx, resource, token, task, payload, task)
		switch {
		case err != nil:
			return history.Value{}, err
		case out.Accepted():
			return history.Value{Outcome: string(out), Fence: fence, HasFence: true}, nil
		}
		return history.Value{Fence: fence, HasFence: true}, rejected(out)
	})
	var rej rejected
	if errors.As(err, &rej) {
		return nil // fenced or conflict: the sink did its job
	}
	return err
}

// rejected is a write the sink refused: a fail with the outcome as error.
type rejected Outcome

func (r rejected) Error() string { return string(r) }
