package explore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childArgs, set in the environment, makes this test binary run explore's
// Main on its value (arguments one per line) instead of the tests: the
// child process TestSignalsEndTheSearchHonestly signals.
const childArgs = "FENCECHECK_TEST_EXPLORE_ARGS"

func TestMain(m *testing.M) {
	if a := os.Getenv(childArgs); a != "" {
		os.Exit(Main(append([]string{"explore"}, strings.Split(a, "\n")...)))
	}
	os.Exit(m.Run())
}

// TestSignalsEndTheSearchHonestly: a SIGTERM (what timeout(1) and CI
// cancellation send), or two interrupts at once (timeout -s INT signals
// the process and then its group), stops a search as one Ctrl-C does:
// exit 3 and the JSON of an incomplete search, not a silent death; and so
// does one interrupt to a search on one processor (GOMAXPROCS=1), which
// an outside tester saw ignored for minutes in one run in five (a search
// that then ran its whole budget exited 0), since the goroutine that
// cancels the search never ran (checker.letOthersRun): three such
// children run, and each must end within a minute of its signal. The
// signals are sent once the search has reported progress, so Main is
// listening for them.
func TestSignalsEndTheSearchHonestly(t *testing.T) {
	type child struct {
		name    string
		signals []os.Signal
		env     string
	}
	cases := []child{
		{"SIGTERM", []os.Signal{syscall.SIGTERM}, ""},
		{"two SIGINTs at once", []os.Signal{os.Interrupt, os.Interrupt}, ""},
	}
	for i := range 3 {
		cases = append(cases, child{fmt.Sprintf("one SIGINT on one processor, %d", i), []os.Signal{os.Interrupt}, "GOMAXPROCS=1"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"search", "--variant", "reference", "--invariant", "fencing", "--runs", "1000000000", "--json", "--out", t.TempDir()}
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(args, "\n"))
			if c.env != "" {
				cmd.Env = append(cmd.Env, c.env)
			}
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stderr)
			if !lines.Scan() { // the first progress line (every 5 s when not a terminal)
				t.Fatalf("no progress line: %v", cmd.Wait())
			}
			for _, s := range c.signals {
				if err := cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
			}
			ended := make(chan struct{})
			defer close(ended)
			go func() {
				select {
				case <-ended:
				case <-time.After(time.Minute):
					t.Errorf("still running a minute after the signal: killed")
					cmd.Process.Kill()
				}
			}()
			for lines.Scan() {
			}
			err = cmd.Wait()
			e := decodeEnding(t, stdout.String())
			if code := cmd.ProcessState.ExitCode(); code != exitIncomplete || *e.Complete || e.Stopped != "interrupted" || e.Runs == 0 {
				t.Fatalf("exit %d (%v), %+v; want 3, incomplete, interrupted, with the runs done counted", code, err, e)
			}
		})
	}
}
