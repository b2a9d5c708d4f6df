package realdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/fencecheck/fencecheck/history"
	leases "github.com/fencecheck/fencecheck/lease"
)

// The loopback protocol between the driver and its process workers: JSON
// requests and responses, one at a time, over a unix socket in a private
// temporary directory. A worker asks the coordinator for leases, reports its
// events (the driver records them, so one clock stamps the whole history)
// and says where it may be paused.

// WorkerEnv is the environment variable that marks a process as a process
// worker; its value is the worker's configuration, as JSON.
const WorkerEnv = "FENCECHECK_REALDB_WORKER"

// Request operations.
const (
	opAcquire  = "acquire"
	opRenew    = "renew"
	opRelease  = "release"
	opInvoke   = "invoke"
	opComplete = "complete"
	opPause    = "pause"
	opToken    = "token"
)

type request struct {
	Worker  string
	Op      string
	Acquire AcquireRequest `json:",omitzero"`
	Lease   LeaseRequest   `json:",omitzero"`
	Event   wireEvent      `json:",omitzero"`
	Where   string         `json:",omitempty"`
}

type wireEvent struct {
	// Process is the event's process when it is not the worker's own (the
	// holder's advances, lease.FenceProcess).
	Process  string `json:",omitempty"`
	Type     history.Type
	F        string
	Resource string
	Value    history.Value
}

type response struct {
	Grant Grant  `json:",omitzero"`
	Err   string `json:",omitempty"`
}

// processConfig is what a process worker receives in WorkerEnv.
type processConfig struct {
	Socket string
	Spec   workerSpec
}

// MaybeRunWorker makes this process a process worker if WorkerEnv says so:
// it runs the worker and exits, with status 0 when the worker finished and 1
// (and a message on standard error) when it failed. Otherwise it returns at
// once. Call it first thing in main (and in TestMain): the driver starts
// process workers by running its own executable again.
func MaybeRunWorker() {
	cfg, ok := os.LookupEnv(WorkerEnv)
	if !ok {
		return
	}
	if err := runProcessWorker(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "fencecheck realdb worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runProcessWorker(cfgJSON string) error {
	var cfg processConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return fmt.Errorf("reading %s: %w", WorkerEnv, err)
	}
	conn, err := net.Dial("unix", cfg.Socket)
	if err != nil {
		return fmt.Errorf("connecting to the driver: %w", err)
	}
	defer conn.Close()
	c := &client{id: cfg.Spec.ID, enc: json.NewEncoder(conn), dec: json.NewDecoder(conn)}
	ctx := context.Background()
	sc := cfg.Spec.Sink
	sc.Window = func(ctx context.Context) {
		if err := c.maybePause(ctx, inWindow); err != nil {
			c.fail(err)
		}
	}
	sink, err := Open(ctx, sc)
	if err != nil {
		return err
	}
	defer sink.Close()
	var coord lessor = c
	if cfg.Spec.Lease != "" && cfg.Spec.Lease != Builtin {
		clients, err := openLeaseClients(cfg.Spec.Lease, cfg.Spec.Endpoints)
		if err != nil {
			return err
		}
		defer clients.Close()
		coord = newExtLessor(cfg.Spec, clients, sink, c, c.token)
	}
	w := newWorker(cfg.Spec, coord, sink, c, c)
	if err := w.run(ctx); err != nil {
		return err
	}
	return c.err
}

// client is a process worker's end of the loopback protocol; it is the
// worker's lessor, event log and pauser. A worker is sequential: one request
// at a time.
type client struct {
	id  string
	enc *json.Encoder
	dec *json.Decoder
	err error // a failure inside the sink's window hook, which cannot return one
}

func (c *client) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *client) do(req request) (response, error) {
	if c.err != nil {
		return response{}, c.err
	}
	req.Worker = c.id
	var resp response
	if err := c.enc.Encode(req); err != nil {
		return resp, fmt.Errorf("sending %s to the driver: %w", req.Op, err)
	}
	if err := c.dec.Decode(&resp); err != nil {
		return resp, fmt.Errorf("reading the driver's answer to %s: %w", req.Op, err)
	}
	return resp, nil
}

// answer turns a response into the protocol error it carries, if any.
func answer(resp response, err error) error {
	if err != nil {
		return err
	}
	if resp.Err != "" {
		return protocolError(resp.Err)
	}
	return nil
}

func (c *client) Acquire(_ context.Context, r AcquireRequest) (Grant, error) {
	resp, err := c.do(request{Op: opAcquire, Acquire: r})
	return resp.Grant, answer(resp, err)
}

func (c *client) Renew(_ context.Context, r LeaseRequest) error {
	return answer(c.do(request{Op: opRenew, Lease: r}))
}

func (c *client) Release(_ context.Context, r LeaseRequest) error {
	return answer(c.do(request{Op: opRelease, Lease: r}))
}

func (c *client) process(p string) string {
	if p == c.id {
		return ""
	}
	return p
}

func (c *client) Invoke(process, f, resource string, v history.Value) error {
	return answer(c.do(request{Op: opInvoke, Event: wireEvent{Process: c.process(process), Type: history.Invoke, F: f, Resource: resource, Value: v}}))
}

func (c *client) Complete(process string, t history.Type, f, resource string, v history.Value) error {
	return answer(c.do(request{Op: opComplete, Event: wireEvent{Process: c.process(process), Type: t, F: f, Resource: resource, Value: v}}))
}

// token draws the run's next made-up token (Redis) from the driver.
func (c *client) token() int64 {
	resp, err := c.do(request{Op: opToken})
	if err != nil {
		c.fail(err)
		return 0
	}
	return resp.Grant.Token
}

func (c *client) maybePause(_ context.Context, where string) error {
	return answer(c.do(request{Op: opPause, Where: where}))
}

// server is the driver's end: it serves every process worker of a run.
type server struct {
	ln     net.Listener
	coord  *Coordinator
	log    leases.Log
	procs  map[string]*proc // by worker id; fixed before serving
	tokens *counter
	wg     sync.WaitGroup
}

// serve accepts connections until the listener is closed.
func (s *server) serve(ctx context.Context) {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.serveConn(ctx, conn)
		}()
	}
}

func (s *server) serveConn(ctx context.Context, conn net.Conn) {
	dec, enc := json.NewDecoder(conn), json.NewEncoder(conn)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			return // the worker is gone (io.EOF) or spoke garbage: its exit status tells
		}
		resp := s.handle(ctx, req)
		if err := enc.Encode(resp); err != nil {
			return
		}
	}
}

func (s *server) handle(ctx context.Context, req request) response {
	var resp response
	var err error
	switch req.Op {
	case opAcquire:
		resp.Grant, err = s.coord.Acquire(ctx, req.Acquire)
	case opRenew:
		err = s.coord.Renew(ctx, req.Lease)
	case opRelease:
		err = s.coord.Release(ctx, req.Lease)
	case opInvoke:
		e := req.Event
		err = s.log.Invoke(eventProcess(req), e.F, e.Resource, e.Value)
	case opComplete:
		e := req.Event
		err = s.log.Complete(eventProcess(req), e.Type, e.F, e.Resource, e.Value)
	case opToken:
		resp.Grant.Token = s.tokens.next()
	case opPause:
		p, ok := s.procs[req.Worker]
		if !ok {
			err = fmt.Errorf("unknown worker %q", req.Worker)
			break
		}
		err = p.maybePause(ctx, req.Where)
	default:
		err = fmt.Errorf("unknown request %q", req.Op)
	}
	if err != nil {
		resp.Err = err.Error()
	}
	return resp
}

// eventProcess is the process of a worker's event: its own, or the one it
// names, which must be the worker's own name and a suffix (its advances).
func eventProcess(req request) string {
	if p := req.Event.Process; p != "" && strings.HasPrefix(p, req.Worker+"/") {
		return p
	}
	return req.Worker
}

// close stops accepting and waits for the connections to end.
func (s *server) close() error {
	err := s.ln.Close()
	s.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
