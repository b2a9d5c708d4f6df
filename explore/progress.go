package explore

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// env is what a verb gets beside its arguments: where diagnostics go and
// the clock that paces progress reports. It travels in the context so that
// every verb keeps the same signature.
type env struct {
	stderr io.Writer
	tty    bool             // stderr is a terminal: progress redraws one line
	now    func() time.Time // the clock of progress reports
	every  time.Duration    // between two progress lines when not a terminal
}

type envKey struct{}

func withEnv(ctx context.Context, e env) context.Context { return context.WithValue(ctx, envKey{}, e) }

// envOf is the verb's environment (standard error and the wall clock when
// none was set).
func envOf(ctx context.Context) env {
	e, ok := ctx.Value(envKey{}).(env)
	if !ok {
		e = env{stderr: os.Stderr, tty: isTerminal(os.Stderr)}
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.every <= 0 {
		e.every = progressEvery
	}
	return e
}

// progressEvery is how often a long search reports on standard error when
// it is not a terminal (a log, CI): one line each time, as TLC does.
const progressEvery = 5 * time.Second

// ttyEvery is how often the terminal's progress line is redrawn.
const ttyEvery = 200 * time.Millisecond

// meter reports a long search's progress on standard error: on a terminal
// one line redrawn in place, elsewhere a line every env.every. Nothing when
// quiet.
type meter struct {
	mu    sync.Mutex // the campaign reports from several goroutines
	env   env
	quiet bool
	start time.Time
	last  time.Time
	drawn bool // a terminal line is on screen
}

func newMeter(e env, quiet bool) *meter {
	t := e.now()
	return &meter{env: e, quiet: quiet, start: t, last: t}
}

// update reports line() when a report is due; line is only called then.
func (m *meter) update(line func(elapsed time.Duration) string) {
	if m.quiet {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.env.now()
	every := m.env.every
	if m.env.tty {
		every = ttyEvery
	}
	if now.Sub(m.last) < every {
		return
	}
	m.last = now
	text := line(now.Sub(m.start).Round(time.Second))
	if m.env.tty {
		fmt.Fprint(m.env.stderr, "\r\033[K"+text)
		m.drawn = true
		return
	}
	fmt.Fprintln(m.env.stderr, "progress: "+text)
}

// done clears the terminal's progress line.
func (m *meter) done() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drawn {
		fmt.Fprint(m.env.stderr, "\r\033[K")
		m.drawn = false
	}
}
