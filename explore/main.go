// Package explore is fencecheck's command line as a library: it searches
// protocol variants for counterexamples, replays and checks histories, and
// draws them. cmd/explore is Main with the built-in catalogue; a user's own
// command registers their designs beside it (see docs/your-own-variant.md).
package explore

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/realdb"
	"github.com/fencecheck/fencecheck/spec"
)

// exit statuses of the contract.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	// exitIncomplete: the search stopped before its budget was spent or its
	// space exhausted (--time, --max-states, --max-memory, an interrupt) and found no
	// violation so far.
	exitIncomplete = 3
)

// exitStatuses documents the exit statuses of every verb (explore --help,
// and the README's table); a verb's --help gives its own, verbExitStatuses.
const exitStatuses = `exit status:
  0  nothing unexpected: no violation (beyond a history's expect), every campaign verdict
     as the spec expects, a search's whole budget done or its bounded space exhausted, every
     sweep cell with a verdict (a sweep's violations are its findings, not failures); a random
     search or campaign row whose runs never reached a scene the verdict depends on says
     "vacuous" (a larger --runs is needed for it to mean anything)
  1  a violation (for the campaign: a verdict the spec does not expect; for replay: a history
     not reproduced too; for search --liveness: progress fails, a witness saved; never for sweep)
  2  usage or input error (the message names the file, line and field at fault)
  3  incomplete: stopped (--time, --max-states, --max-memory, Ctrl-C) before the budget was spent or
     the space exhausted, or nothing to search (--runs 0), with no violation found so far (a BFS
     with --checkpoint prints the --resume command that goes on; for check, porcupine ran out of
     --timeout); for search --liveness, progress not checked`

// usageStatus is status 2, as every verb has it.
const usageStatus = `
  2  usage or input error (the message names the file, line and field at fault)`

// verbExitStatuses are each verb's exit statuses, as its --help gives them
// (every status is listed, one a verb never ends with says so): read from
// the verb's code, which is what they must say.
var verbExitStatuses = map[string]string{
	"campaign": `exit status:
  0  nothing unexpected: every variant searched with its whole budget, every verdict as the spec
     expects (a row whose runs never reached a scene the verdict depends on says vacuous: as
     expected, but the runs say nothing about that scene)
  1  a verdict the spec does not expect: a violation it does not allow, an expected violation
     not found in the whole budget (the row says when no run reached the scene it needs: that
     is why), or a design's decision that failed (the row says which)` + usageStatus + `
  3  incomplete: stopped (--time, Ctrl-C) before every run was done, nothing to search (--runs 0,
     --steps 0), or a variant not searched at these bounds (a design's own limit), with nothing
     unexpected found so far`,
	"search": `exit status:
  0  nothing unexpected: no violation, the whole budget done (random) or the bounded space
     exhausted with the scenes the verdict depends on reached (bfs); a random search whose runs
     never reached those scenes says vacuous ("vacuous" in --json): no proof, a larger --runs is
     needed for it to mean anything; with --liveness, progress holds
  1  a violation (its counterexample shrunk and saved), or the design's decision failed (no
     verdict past it); with --liveness, progress fails (a witness saved)` + usageStatus + `
  3  incomplete: stopped (--time, --max-states, --max-memory, Ctrl-C, a checkpoint not written)
     before the budget was spent or the space exhausted, nothing to search (--runs 0), or a BFS
     that never reached the scenes the verdict depends on (no proof), with no violation found so
     far (a BFS with --checkpoint prints the --resume command that goes on); with --liveness,
     progress not checked`,
	"replay": `exit status:
  0  nothing unexpected: the model reproduces every event, and the history violates nothing beyond
     its header's expect
  1  a violation beyond the header's expect, or the history not reproduced (the first event the
     model does otherwise is said)` + usageStatus + `
  3  never: a replay is checked to its end`,
	"check": `exit status:
  0  nothing unexpected: no violation beyond the header's expect, every invariant judged
  1  a violation beyond the header's expect` + usageStatus + `
  3  incomplete: porcupine ran out of --timeout on a resource (unknown; "complete": false in
     --json), or Ctrl-C stopped the check, with no unexpected violation found so far`,
	"viz": `exit status:
  0  the picture drawn (violations are marked on it, not judged: explore check judges)
  1  never: viz judges nothing` + usageStatus + `
  3  never: viz judges nothing`,
	"sweep": `exit status:
  0  every cell has a verdict: violations are a sweep's findings (in the grid and the heat
     map), not failures
  1  never: a violated cell is a finding, exit 0` + usageStatus + `;
     also a counterexample or the heat map not saved under --out, said after the grid
  3  incomplete: a cell without a verdict (its search stopped, its bound never reached what the
     verdict depends on, or the design's decision failed there), or the sweep stopped (--time,
     Ctrl-C) before every point was searched`,
	"merge": `exit status:
  0  nothing unexpected: of a search, no violation found by any job, every job complete and the
     scenes the verdict depends on reached together; of a sweep, every cell has a verdict
  1  of a search, a violation (a job's counterexample), or the design's decision failed in a
     job; never of a sweep (its violations are findings)
  2  usage or input error: a file that is not a job's --json (the message names it), jobs of
     different searches, a job twice or one missing; also a sweep's heat map not saved under
     --out, said after the grid
  3  incomplete: of a search, a job stopped early, or the jobs together never reached the scenes
     the verdict depends on; of a sweep, a cell without a verdict`,
	"real": `exit status:
  0  nothing unexpected: every run done and checked in full, none violating an invariant the real
     stack is not expected to (with --schedule: the real history violates none such)
  1  a run caught: it violates an invariant the real stack is not expected to (with --schedule:
     the real history does; a mismatch with the model alone is not a violation)
  2  usage or input error, or runs that could not start (a database it cannot open)
  3  incomplete: the runs ended early (Ctrl-C, a lease service or database gone, a run past
     --run-timeout) or a run's linearizability check ran out of time, with no run caught so far`,
	"variants": `exit status:
  0  the list printed
  1  never` + usageStatus + `
  3  never`,
	"invariants": `exit status:
  0  the list printed
  1  never` + usageStatus + `
  3  never`,
}

// exitStatusesOf is the exit statuses verb's --help gives.
func exitStatusesOf(verb string) string {
	if s, ok := verbExitStatuses[verb]; ok {
		return s
	}
	return exitStatuses
}

// usageError marks a usage or input error (every verb error is one: exit
// status 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

type verb struct {
	name, args, summary string
	run                 func(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error)
}

var verbs []verb

func init() {
	verbs = []verb{
		{"campaign", "[flags]", "search every built-in variant against every invariant (the default)", runCampaign},
		{"variants", "", "list the built-in variants", runVariants},
		{"invariants", "", "list the invariant ids", runInvariants},
		{"search", "--variant NAME [flags]", "search one variant; stop at the first violation, shrink it, save it", runSearch},
		{"replay", "FILE", "re-execute a history the model recorded and check it", runReplay},
		{"check", "FILE|-", "check any history in the documented format (no model)", runCheck},
		{"viz", "FILE [-o OUT.html] [--format html|mermaid]", "render a history as a timeline", runViz},
		{"sweep", "--variant NAME --param P=LO..HI [--param Q=LO..HI] [flags]", "search a grid of a design's parameters and environment bounds; print the safe region, its rule, a heat map", runSweep},
		{"merge", "FILE...", "combine the --json results of the jobs of a split search or sweep (--shard i/n)", runMerge},
		{"real", "[--lease builtin|etcd|redis] [--db sqlite|postgres] [--sink atomic|check-then-write|max-token|none] [--schedule FILE]", "run real workers on a real lease service and sink and check the histories", runReal},
	}
}

// Main runs the explore command line on args (os.Args: the program name
// first) with the built-in variants and the caller's own, and returns the
// exit status of the contract. An interrupt (Ctrl-C) or a SIGTERM stops a
// long search, which then reports how far it got (incomplete, exit status
// 3); a second one ends the program at once, unless it comes within
// signalGrace of the first (timeout(1) and a shell's job control send one
// signal to the process and another to its group).
func Main(args []string, own ...spec.Variant) int {
	realdb.MaybeRunWorker() // a process worker of explore real runs this binary again
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // after the first signal, which ends the search, a later one kills
		<-ctx.Done()
		time.Sleep(signalGrace)
		stop()
	}()
	cat := append(designs.All(), own...)
	if err := catalogueError(cat); err != nil {
		fmt.Fprintf(os.Stderr, "explore: %v\n", err)
		return exitUsage
	}
	return run(ctx, args[1:], os.Stdout, os.Stderr, cat)
}

// signalGrace is how long after the first interrupt a second one is still
// taken as the same (see Main).
const signalGrace = time.Second

// catalogueError says what is wrong with a catalogue of variants, or is
// nil: a name empty, taken twice (a design of a user's named as a built-in
// one was shadowed by it: searched, the built-in was), or one that a file
// name or a NAME@p=v argument cannot carry.
func catalogueError(cat []spec.Variant) error {
	taken := map[string]bool{}
	for _, v := range cat {
		switch {
		case v.Name == "":
			return errors.New("a variant has no name (spec.Variant.Name)")
		case taken[v.Name]:
			return fmt.Errorf("variant %q: the name is taken (by a built-in variant or another given to explore.Main): give it another", v.Name)
		case strings.TrimLeft(v.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" || v.Name[0] == '-' || v.Name[0] == '.':
			return fmt.Errorf("variant %q: a name is letters, digits, '-', '_' and '.', beginning with a letter or a digit (it names folders and files, and NAME@p=v picks parameters)", v.Name)
		}
		taken[v.Name] = true
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, cat []spec.Variant) int {
	if _, ok := ctx.Value(envKey{}).(env); !ok {
		tty := false
		if f, ok := stderr.(*os.File); ok {
			tty = isTerminal(f)
		}
		ctx = withEnv(ctx, env{stderr: stderr, tty: tty})
	}
	name := "campaign"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		printUsage(stdout, wantsJSON(args))
		return exitOK
	}
	if name == "help" {
		asJSON := wantsJSON(args)
		var named []string // the verbs asked about: help's flags aside
		for _, a := range args {
			if !isHelp(a) && !(asJSON && wantsJSON([]string{a})) {
				named = append(named, a)
			}
		}
		if len(named) == 0 || len(named) == 1 && named[0] == "help" {
			printUsage(stdout, asJSON)
			return exitOK
		}
		if len(named) > 1 || findVerb(named[0]) == nil {
			err := fmt.Errorf("want one verb, got %q", strings.Join(named, " "))
			if len(named) == 1 {
				err = fmt.Errorf("unknown verb %q", named[0]) // as explore VERB says it
			}
			fmt.Fprintf(stderr, "explore help: %v\n", err)
			if asJSON {
				writeJSON(stdout, errorObject(err))
			}
			printUsage(stderr, false)
			return exitUsage
		}
		name, args = named[0], []string{"--help"}
		if asJSON {
			args = append(args, "--json")
		}
	}
	v := findVerb(name)
	if v == nil {
		fmt.Fprintf(stderr, "explore: unknown verb %q\n", name)
		if wantsJSON(args) {
			writeJSON(stdout, errorObject(fmt.Errorf("unknown verb %q", name)))
		}
		printUsage(stderr, false)
		return exitUsage
	}
	defer clear(helps) // the verb's flags, which a test's next call does not need
	out := &errWriter{w: stdout}
	code, err := v.run(ctx, args, out, cat)
	if errors.Is(err, flag.ErrHelp) {
		err = nil
		code = exitOK
	}
	if err == nil && out.err != nil {
		err = fmt.Errorf("writing the output: %w", out.err)
	}
	var after afterResult
	if errors.As(err, &after) && out.err == nil {
		fmt.Fprintf(stderr, "explore %s: %v\n", name, after.err)
		if after.code == exitOK {
			return exitUsage // what the result promised was not all done: no pass
		}
		return after.code
	}
	if err != nil {
		fmt.Fprintf(stderr, "explore %s: %v\n", name, err)
		if wantsJSON(args) {
			writeJSON(stdout, errorObject(err))
		}
		return exitUsage
	}
	return code
}

// afterResult is an error a verb met after it had reported its result
// (a counterexample found and printed, then not saved under --out): run
// says it on standard error and ends with the result's exit status, code,
// not a usage error's 2, which would read as if nothing had been found;
// but never with 0, which would read as a pass (2 then). With --json, run
// prints no error object: the verb's own has said it (and the error, in a
// field of its own). Make one with reported.
type afterResult struct {
	code int
	err  error
}

func (a afterResult) Error() string { return a.err.Error() }
func (a afterResult) Unwrap() error { return a.err }

// reported is err met after a result whose exit status is code was
// reported (see afterResult): a verb returns code, reported(code, err).
// It is nil when err is.
func reported(code int, err error) error {
	if err == nil {
		return nil
	}
	return afterResult{code, err}
}

// errWriter keeps the first error writing to w: a verb's text output does
// not look at each write's, and an output that was lost (a full disk) must
// not end with the verdict's exit status as if it had been read.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func findVerb(name string) *verb {
	for i := range verbs {
		if verbs[i].name == name {
			return &verbs[i]
		}
	}
	return nil
}

// wantsJSON reports whether the arguments ask for --json (before a "--").
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-json", "--json", "-json=true", "--json=true", "-json=1", "--json=1":
			return true
		}
	}
	return false
}

// errorObject is an error as --json prints it: the message, and the file,
// line and field at fault when the error knows them.
func errorObject(err error) map[string]any {
	o := map[string]any{"error": err.Error()}
	var he *history.Error
	if errors.As(err, &he) {
		o["error"] = he.Msg
		o["file"] = he.File
		if he.Line > 0 {
			o["line"] = he.Line
		}
		if he.Field != "" {
			o["field"] = he.Field
		}
	}
	var fe fileError
	if errors.As(err, &fe) {
		o["error"], o["file"] = fe.msg, fe.file
	}
	var ce *checker.CheckpointError
	if errors.As(err, &ce) {
		o["error"], o["file"] = ce.Msg, ce.File
		if ce.Field != "" {
			o["field"] = ce.Field
		}
	}
	return o
}

// fileError is an input error about a whole file (no line in it is at
// fault): it cannot be opened, or it is a directory.
type fileError struct{ file, msg string }

func (e fileError) Error() string { return e.file + ": " + e.msg }

// helpSummary is what the help verb does.
const helpSummary = "this text, or a verb's flags and exit statuses"

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// printUsage prints explore's usage: the verbs and exit statuses, as text
// or as one JSON object.
func printUsage(w io.Writer, asJSON bool) {
	if asJSON {
		vs := []map[string]string{}
		for _, v := range verbs {
			vs = append(vs, map[string]string{"verb": v.name, "args": v.args, "summary": v.summary})
		}
		vs = append(vs, map[string]string{"verb": "help", "args": "[VERB]", "summary": helpSummary})
		writeJSON(w, map[string]any{"verbs": vs, "exitStatus": exitStatusJSON(exitStatuses)})
		return
	}
	fmt.Fprintln(w, "usage: explore [VERB] [flags]\n\nfencecheck: a model checker and history checker for lease + fencing-token protocols.\n\nverbs:")
	for _, v := range verbs {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("  %-10s %s", v.name, v.args), " "))
		fmt.Fprintf(w, "  %-10s   %s\n", "", v.summary)
	}
	fmt.Fprintf(w, "  %-10s %s\n  %-10s   %s\n", "help", "[VERB]", "", helpSummary)
	fmt.Fprintln(w, "\nWith no verb, explore runs the campaign. Every verb takes --json and --help (which gives its own\nexit statuses).\n\n"+exitStatuses)
}

// flags makes a verb's flag set: errors are returned, --help prints usage.
func flags(name, args, summary string, stdout io.Writer) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("explore "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.Bool("json", false, "print one JSON object on standard output, nothing else there")
	fs.Usage = func() {}
	help := func(asJSON bool) {
		if asJSON {
			var fl []map[string]string
			fs.VisitAll(func(f *flag.Flag) {
				fl = append(fl, map[string]string{"name": f.Name, "default": f.DefValue, "usage": f.Usage})
			})
			writeJSON(stdout, map[string]any{"verb": name, "usage": strings.TrimSpace("explore " + name + " " + args),
				"summary": summary, "flags": fl, "exitStatus": exitStatusJSON(exitStatusesOf(name))})
			return
		}
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "usage: explore %s %s\n\n%s\n\nflags:\n", name, args, summary)
		fs.PrintDefaults()
		fmt.Fprintln(stdout, "\n"+exitStatusesOf(name))
		fs.SetOutput(io.Discard)
	}
	helps[fs] = help
	return fs, jsonOut
}

// helps holds the running verb's help printer, by its flag set, which
// prints JSON when asked; run clears it when the verb ends (tests run many
// verbs in one process).
var helps = map[*flag.FlagSet]func(asJSON bool){}

// exitStatusJSON is text, exitStatuses or a verb's, as --help --json gives
// it: each status's text on one line, by status.
func exitStatusJSON(text string) map[string]string {
	out := map[string]string{}
	var code string
	for _, line := range strings.Split(text, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if line[2] != ' ' { // "  0  nothing unexpected: ..."
			code, f = f[0], f[1:]
		}
		out[code] = strings.TrimSpace(out[code] + " " + strings.Join(f, " "))
	}
	return out
}

// parseFlags is parse for a verb that takes no positional argument: one
// is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (see --help)", fs.Arg(0))
	}
	return nil
}

// parse parses flags, mapping errors to usage errors (and --help to ErrHelp).
// Flags may come after the positional arguments (explore viz FILE -o OUT),
// which are then in fs.Args(); after a "--" every argument is positional
// (explore merge a.json -- --odd-name.json). A flag given twice is a usage
// error naming it (the last one used to win, silently), unless it is
// repeatable (sweep's --param). A verb that saves what it finds under --out
// has --out checked here, before any work (checkOut).
func parse(fs *flag.FlagSet, args []string) error {
	once := watchOnce(fs)
	defer once.restore()
	asJSON := wantsJSON(args)
	var pos []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, pos = args[:i], slices.Clone(args[i+1:])
	}
	var between []string // positional arguments among the flags
	for {
		if err := fs.Parse(args); err != nil {
			once.restore() // the help prints the flags' own values
			if errors.Is(err, flag.ErrHelp) {
				helps[fs](asJSON)
				return err
			}
			if once.twice != nil {
				return once.twice
			}
			return usagef("%v (see --help)", err)
		}
		if args = fs.Args(); len(args) == 0 {
			break
		}
		between, args = append(between, args[0]), args[1:]
	}
	once.restore()
	if err := fs.Parse(append(append([]string{"--"}, between...), pos...)); err != nil {
		return err
	}
	if err := notNegative(fs); err != nil {
		return err
	}
	if f := fs.Lookup("steps"); f != nil {
		if n, _ := strconv.Atoi(f.Value.String()); n > maxSteps {
			return usagef("--steps %d: at most %d (a run is judged once it ends: --time and Ctrl-C wait for it, and its trace is held meanwhile)", n, maxSteps)
		}
	}
	return checkOut(fs)
}

// maxSteps is the most --steps takes: a run of that many actions takes
// about half a second and 90 MB, and --time or an interrupt waits for the
// run in progress (a million steps took 4 s past a --time of 1 s).
const maxSteps = 100_000

// onceFlags watches a flag set while parse parses it: each flag's value is
// wrapped so that a second Set of a flag that is not repeatable is an
// error, twice, naming it.
type onceFlags struct {
	fs    *flag.FlagSet
	vals  map[string]flag.Value // the flags' own values, by name
	twice error
}

// watchOnce wraps the values of fs's flags that are not repeatable until
// restore.
func watchOnce(fs *flag.FlagSet) *onceFlags {
	o := &onceFlags{fs: fs, vals: map[string]flag.Value{}}
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(repeatable); !ok {
			o.vals[f.Name] = f.Value
			f.Value = &onceValue{Value: f.Value, name: f.Name, twice: &o.twice}
		}
	})
	return o
}

// restore puts back the flags' own values (for the help, which looks at
// their types, and the verb, which may).
func (o *onceFlags) restore() {
	for name, v := range o.vals {
		o.fs.Lookup(name).Value = v
	}
	clear(o.vals)
}

// repeatable is a flag's value that collects every time the flag is given
// (sweep's --param) rather than keeping the last.
type repeatable interface{ repeats() }

// onceValue is a flag's value that may be set once.
type onceValue struct {
	flag.Value
	name  string
	given string // the first value given, when set
	set   bool
	twice *error
}

func (o *onceValue) Set(s string) error {
	if o.set {
		dash := "--"
		if len(o.name) == 1 {
			dash = "-" // viz -o
		}
		*o.twice = usagef("%s%s given twice (%q, then %q): give it once (see --help)", dash, o.name, o.given, s)
		return *o.twice
	}
	if err := o.Value.Set(s); err != nil {
		return err
	}
	o.given, o.set = s, true
	return nil
}

func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// notNegative is a usage error naming the first flag given (in name order)
// a negative count or duration: no flag of explore has a meaning for one.
func notNegative(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		negative := false
		switch v := g.Get().(type) {
		case int:
			negative = v < 0
		case time.Duration:
			negative = v < 0
		}
		if negative {
			err = usagef("--%s %s: must not be negative (see --help)", f.Name, f.Value)
		}
	})
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
