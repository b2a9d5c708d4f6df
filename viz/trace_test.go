package viz

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
)

// counterexample re-executes a recorded counterexample of the campaign.
func counterexample(t *testing.T, name string) (*history.History, *model.Run) {
	t.Helper()
	h, err := history.ReadFile("../histories/counterexamples/" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	m, err := checker.HeaderMachine(h.Header, designs.All())
	if err != nil {
		t.Fatal(err)
	}
	run := model.NewRun(m)
	for _, s := range h.Header.Actions {
		a, err := model.ParseAction(s)
		if err != nil {
			t.Fatal(err)
		}
		run.Do(a)
	}
	return h, run
}

// rawAction matches the model's machine-readable action text.
var rawAction = regexp.MustCompile(`\b(w|r|c|tok|g|pw|pt)=\d`)

// TestTraceNamesTheViolationAtItsStep: the text trace numbers the steps,
// says each action in words with the history's names, lists the events,
// and names the violation under the step whose transition violates it
// (here the sink's commit, which records no event).
func TestTraceNamesTheViolationAtItsStep(t *testing.T) {
	h, run := counterexample(t, "check-then-write")
	var b bytes.Buffer
	if err := Trace(&b, run, checker.Highlights(h, designs.All())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^ +1\. w\d `),
		regexp.MustCompile(`(?m)^ +\d+(-\d+)?\. time passes`),
		regexp.MustCompile(`(?m)^ +\d+\. the sink receives coordinator's request to advance job-\d's fence`),
		regexp.MustCompile(`(?m)^ +(\d+)\. the sink does the second step of w\d's write \(token=1, job-\d\): it writes the result\n(.*\n)*? +VIOLATED fencing on job-\d`),
	} {
		if !want.MatchString(out) {
			t.Errorf("trace lacks %s\n%s", want, out)
		}
	}
	if strings.Index(out, "VIOLATED fencing") < strings.Index(out, "the sink does the second step") {
		t.Errorf("a violation is named before the step that violates it\n%s", out)
	}
	if m := rawAction.FindString(out); m != "" {
		t.Errorf("trace shows the model's raw action text (%q)\n%s", m, out)
	}
}

// TestTraceHistoryViolation: a violation the history shows is named at the
// step that recorded its last event.
func TestTraceHistoryViolation(t *testing.T) {
	h, run := counterexample(t, "grant-before-fence")
	marks := checker.Highlights(h, designs.All())
	var b bytes.Buffer
	if err := Trace(&b, run, marks); err != nil {
		t.Fatal(err)
	}
	for _, v := range marks {
		if v.Invariant != "fencing" || len(v.Events) == 0 {
			continue
		}
		last := v.Events[len(v.Events)-1]
		want := regexp.MustCompile(fmt.Sprintf(`(?m)^ +#%d t=.*\n(( +#.*|.*VIOLATED.*)\n)*? +VIOLATED fencing on`, last))
		if !want.MatchString(b.String()) {
			t.Fatalf("fencing not named under the step of its last event (#%d)\n%s", last, b.String())
		}
		return
	}
	t.Fatal("the grant-before-fence counterexample shows no fencing violation")
}

func TestActionTextHasNoRawNames(t *testing.T) {
	for k := model.Tick; k <= model.SinkCrash; k++ {
		for mk := model.AcquireReq; mk <= model.AdvanceRep; mk++ {
			a := model.Action{Kind: k, Worker: 1, Res: 1, Replica: 1, Skew: -2,
				Msg: model.Msg{Kind: mk, Worker: 1, Res: 1, Replica: 1, Token: 2, Code: model.RepOK, Live: true}}
			txt := ActionText(a)
			if rawAction.MatchString(txt) || strings.Contains(txt, "w=") || txt == a.String() && k != model.Tick {
				t.Errorf("%s: %q", a, txt)
			}
			if k == model.Acquire && txt != "w2 asks coordinator-2 for the lease on job-2" {
				t.Errorf("acquire: %q", txt)
			}
			if k != model.Deliver && k != model.Drop && k != model.Duplicate {
				break
			}
		}
	}
}

func TestReadable(t *testing.T) {
	for in, want := range map[string]string{
		"the sink accepted w1's write (judged on the model's states, step 12: deliver commit w=0 r=0 inc=1 tok=1 g=1 pw=1 pt=1 live)": "the sink accepted w1's write (judged on the model's states, step 13: the sink does the second step of w1's write (token=1, job-1): it writes the result)",
		"action 3 (acquire w=1 r=0 c=0) is not enabled":           "step 4 (w2 asks coordinator for the lease on job-1) is not enabled",
		"write token=1 accepted after grant token=2 was observed": "write token=1 accepted after grant token=2 was observed",
		"step 2: nonsense w=x)":                                   "step 2: nonsense w=x)",
	} {
		if got := Readable(in); got != want {
			t.Errorf("Readable(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// TestPicturesUseHistoryNames: the HTML page of a model counterexample
// shows the model's marks in words, not as action text.
func TestPicturesUseHistoryNames(t *testing.T) {
	h, _ := counterexample(t, "check-then-write")
	page := render(t, h, Options{Violations: checker.Highlights(h, designs.All())})
	banner := between(t, page, `id="violations"`, "</section>")
	if rawAction.MatchString(banner) || !regexp.MustCompile(`step \d+: the sink does the second step`).MatchString(banner) {
		t.Fatalf("banner:\n%s", banner)
	}
}
