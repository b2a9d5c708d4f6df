package explore

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// historyCheckers are where an invariant with no state form
// (spec.Invariant.HistoryOnly) is judged instead of by a BFS: on every run's
// recorded history, or on any history.
var historyCheckers = []string{"explore search --mode random", "explore campaign", "explore check", "explore replay"}

// proof is what a breadth-first search proves, and what it does not: the
// "proof" object of explore search --mode bfs (docs/exhaustive.md).
type proof struct {
	// Proves tells that the search is a proof of every invariant in
	// Judged, within Bounds and under Reductions; Why says why not when
	// it is not one.
	Proves bool   `json:"proves"`
	Why    string `json:"why,omitempty"`
	// Judged are the invariants the proof is about: decided by spec.Judge
	// on every transition, and stopped on.
	Judged []string `json:"judged"`
	// Excluded are the others, each with the reason.
	Excluded []exclusion `json:"excluded"`
	// Bounds is the model's config: what the search explored is every
	// state reachable within it.
	Bounds     model.Config `json:"bounds"`
	Reductions reductions   `json:"reductions"`
	// Progress is the verdict of --liveness, nil without it.
	Progress *progressReport `json:"progress,omitempty"`
	// Within, for a search that stopped early after it expanded a level,
	// is the proof it is within a depth (nil for the others, and for one
	// job of a split search).
	Within *withinProof `json:"within,omitempty"`
	// Jobs, in the proof explore merge makes of a split search's jobs,
	// is their number (0 for one search): its states are then counted
	// over the jobs, which overlap below the split.
	Jobs int `json:"jobs,omitempty"`

	states, unreduced uint64 // for the text
}

// withinProof is what a search that stopped early proves anyway: the
// levels before the one it stopped in were expanded in full, which is what
// a search with --depth Depth does (checker.Within), so when no invariant
// judged was violated in them and they reached every scene the verdict
// depends on, the judged invariants hold on every transition out of every
// state fewer than Depth actions deep.
type withinProof struct {
	Depth  int    `json:"depth"`
	Proves bool   `json:"proves"`
	Why    string `json:"why,omitempty"`
	// States were stored and Transitions judged by then (States includes
	// the states Depth deep, not expanded); OmissionBound is the chance
	// that hash compaction missed a state by then.
	States        uint64  `json:"states"`
	Transitions   uint64  `json:"transitions"`
	OmissionBound float64 `json:"omissionBound"`
}

// newWithinProof says what res, a search of variant v that stopped early,
// proves within the levels it expanded in full of the invariants stop;
// nil when it expanded none.
func newWithinProof(v spec.Variant, stop spec.Set, res checker.BFSResult) *withinProof {
	w := res.Within
	if w == nil {
		return nil
	}
	p := &withinProof{Depth: w.Depth, States: w.States, Transitions: w.Transitions, OmissionBound: w.OmissionBound}
	switch miss := w.Reached.Missing(v.Scenes()); {
	case w.Violated&stop != 0: // a search stops at the first such violation: not one that stopped early
		p.Why = fmt.Sprintf("those levels violate %s", strings.Join((w.Violated&stop).IDs(), ", "))
	case miss != 0:
		p.Why = fmt.Sprintf("those levels never reached %s, which %s's verdict depends on", miss, v.Name)
	default:
		p.Proves = true
	}
	return p
}

// exclusion is an invariant a proof says nothing of, and why.
type exclusion struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
	// CheckedBy, for an invariant with no state form, are the verbs that
	// judge it on recorded histories instead.
	CheckedBy []string `json:"checkedBy,omitempty"`
	// Violated, for an invariant judged on transitions but not stopped
	// on, tells whether a transition the search judged violated it (the
	// end of Reason says the same).
	Violated *bool `json:"violated,omitempty"`
}

// The ends of an exclusion's Reason that say whether a transition judged
// violated the invariant.
const (
	violatedNote   = "; violated on some transition"
	unviolatedNote = "; no transition judged violated it"
)

// setViolated says in x whether a transition judged violated its
// invariant, one that is judged on transitions and not stopped on.
func (x *exclusion) setViolated(violated bool) {
	x.Reason = strings.TrimSuffix(strings.TrimSuffix(x.Reason, violatedNote), unviolatedNote)
	if violated {
		x.Reason += violatedNote
	} else {
		x.Reason += unviolatedNote
	}
	x.Violated = &violated
}

// reductions are what a search left out or merged of the state space, and
// what that costs the proof.
type reductions struct {
	// Symmetry lists the renamings under which states were stored once
	// ("workers", "resources"); Factor is the states they stand for per
	// state stored (BFSResult.Reduction).
	Symmetry []string `json:"symmetry"`
	Factor   float64  `json:"symmetryFactor"`
	// HashCompaction tells that states were stored as hashes (from
	// the start, or from CompactedAt states on, at the memory budget);
	// OmissionBound bounds the chance that a state was missed.
	HashCompaction bool    `json:"hashCompaction"`
	CompactedAt    uint64  `json:"compactedAt,omitempty"`
	OmissionBound  float64 `json:"omissionBound"`
	// DepthBound is --depth (0: none); DepthCut tells that it left states
	// unexpanded (the proof is then of the states within it only).
	DepthBound int  `json:"depthBound"`
	DepthCut   bool `json:"depthCut"`
	// Steps names the reductions that applied (--reduce, model.Reduction:
	// "pauses", "dead-replies", "reads" of the steps, "timers" and
	// "budgets" and "ages" of the stored states); they keep every verdict and
	// shortest counterexample length. Subsumed counts the states stored
	// but not expanded because a state stored no deeper simulates each
	// (BFSResult.Subsumed).
	Steps    []string `json:"steps"`
	Subsumed uint64   `json:"subsumed,omitempty"`
}

// newProof says what a BFS of variant v on machine m with options opt, which
// ended with res, proves. only is --invariant ("" for every invariant); a
// judged invariant outside opt.Stop is one --invariant or --unexpected
// left out.
func newProof(m *model.Machine, v spec.Variant, opt checker.BFSOptions, res checker.BFSResult, only string) *proof {
	p := &proof{Judged: []string{}, Excluded: []exclusion{}, Bounds: m.Config, states: res.States, unreduced: res.Unreduced}
	for _, inv := range spec.Invariants {
		switch {
		case inv.HistoryOnly != "":
			p.Excluded = append(p.Excluded, exclusion{ID: inv.ID, CheckedBy: historyCheckers,
				Reason: "no state form, judged over recorded histories only: " + inv.HistoryOnly})
		case !opt.Stop.Has(inv.ID):
			why := "not stopped on (--unexpected: the variant is expected to violate it)"
			if only != "" && inv.ID != only {
				why = "not stopped on (--invariant " + only + ")"
			}
			x := exclusion{ID: inv.ID, Reason: why}
			x.setViolated(res.Violated.Has(inv.ID))
			p.Excluded = append(p.Excluded, x)
		default:
			p.Judged = append(p.Judged, inv.ID)
		}
	}
	sym := opt.Symmetry & m.Symmetries()
	p.Reductions = reductions{Symmetry: []string{}, Factor: res.Reduction, HashCompaction: res.HashCompact,
		CompactedAt: res.CompactedAt, OmissionBound: res.OmissionBound, DepthBound: opt.MaxDepth,
		DepthCut: res.Stopped == checker.StopDepth, Steps: []string{}, Subsumed: res.Subsumed}
	if res.Reductions != "" {
		p.Reductions.Steps = strings.Split(res.Reductions, ",")
	}
	for _, s := range []struct {
		sym  model.Symmetry
		name string
	}{{model.SymWorkers, "workers"}, {model.SymResources, "resources"}} {
		if sym&s.sym != 0 && m.GroupOrder(s.sym) > 1 {
			p.Reductions.Symmetry = append(p.Reductions.Symmetry, s.name)
		}
	}
	switch miss := res.Reached.Missing(v.Scenes()); {
	case res.Counterexample != nil:
		p.Why = "an invariant it stops on is violated (the counterexample)"
	case !bfsComplete(res):
		p.Why = "the search is incomplete (" + stopMeaning[res.Stopped] + ")"
		if opt.Shard.N <= 1 {
			p.Within = newWithinProof(v, opt.Stop&spec.OnTransitions(), res)
		}
	case miss != 0:
		p.Why = fmt.Sprintf("the search never reached %s, which %s's verdict depends on", miss, v.Name)
	case opt.Shard.N > 1:
		p.Why = fmt.Sprintf("job %d/%d of a split search: explore merge combines the jobs", opt.Shard.I, opt.Shard.N)
	default:
		p.Proves = true
	}
	return p
}

// sameScope names the first field of proof p, of those that say what it
// is a proof of, in which it differs from o ("" if none): the jobs of one
// split search must agree on the invariants judged and excluded, the
// bounds, the depth bound, the symmetries and the reductions of steps.
func (p *proof) sameScope(o *proof) string {
	switch {
	case !slices.Equal(p.Judged, o.Judged):
		return "judged"
	case !slices.EqualFunc(p.Excluded, o.Excluded, func(a, b exclusion) bool { return a.ID == b.ID }):
		return "excluded"
	case p.Bounds != o.Bounds:
		return "bounds"
	case p.Reductions.DepthBound != o.Reductions.DepthBound:
		return "reductions.depthBound"
	case !slices.Equal(p.Reductions.Symmetry, o.Reductions.Symmetry):
		return "reductions.symmetry"
	case !slices.Equal(p.Reductions.Steps, o.Reductions.Steps):
		return "reductions.steps"
	}
	return ""
}

// mergeProofs is what the jobs of a split search prove together: the
// unsplit search's proof, its states counted over the jobs. jobs are the
// jobs' proofs, of the same scope (sameScope); merged is their merged
// result; why says why they prove nothing ("" when every job is complete,
// none found a violation, and together they reached every scene the
// verdict depends on).
func mergeProofs(jobs []*proof, merged checker.BFSResult, why string) *proof {
	p := *jobs[0]
	p.Jobs, p.Proves, p.Why, p.Progress = len(jobs), why == "", why, nil
	p.states, p.unreduced = merged.States, merged.Unreduced
	p.Excluded = slices.Clone(p.Excluded)
	for i := range p.Excluded {
		if x := &p.Excluded[i]; spec.OnTransitions().Has(x.ID) {
			x.setViolated(merged.Violated.Has(x.ID))
		}
	}
	r := &p.Reductions
	r.Factor, r.OmissionBound, r.Subsumed, r.CompactedAt = merged.Reduction, merged.OmissionBound, merged.Subsumed, 0
	for _, j := range jobs {
		r.HashCompaction = r.HashCompaction || j.Reductions.HashCompaction || j.Reductions.CompactedAt > 0
		r.DepthCut = r.DepthCut || j.Reductions.DepthCut
	}
	return &p
}

// provable refuses a search that would stop on no invariant, or a BFS
// that would judge none of those it stops on (stop: every invariant,
// narrowed by --invariant only and by --unexpected).
func provable(mode string, stop spec.Set, only string) error {
	switch {
	case len(stop.IDs()) == 0 && only != "":
		return usagef("--invariant %s with --unexpected: the variant is expected to violate it: nothing left to search for", only)
	case len(stop.IDs()) == 0:
		return usagef("--unexpected: the variant is expected to violate every invariant: nothing left to search for")
	case mode != "bfs" || stop&spec.OnTransitions() != 0:
		return nil
	case only != "":
		return usagef("--invariant %s: judged over recorded histories only, which --mode bfs does not judge: it would prove nothing (use --mode random, or explore check on a history)", only)
	}
	return usagef("--unexpected: every invariant --mode bfs judges is one the variant is expected to violate: nothing left to prove")
}

// print writes the proof for a person.
func (p *proof) print(w io.Writer) {
	if p.Proves {
		fmt.Fprintf(w, "proof: %s on every transition out of %s\n", p.what(), p.within())
	} else {
		fmt.Fprintf(w, "proof: none: %s\n", p.Why)
	}
	if x := p.Within; x != nil && x.Proves {
		fmt.Fprintf(w, "  proved instead within depth %d: %s on every transition out of every state fewer than %d actions deep (every run of up to %d actions), as --depth %d proves (%d states stored, %d transitions judged%s)\n",
			x.Depth, p.what(), x.Depth, x.Depth, x.Depth, x.States, x.Transitions, missed(x.OmissionBound))
	} else if x != nil {
		fmt.Fprintf(w, "  nothing proved within depth %d either: %s\n", x.Depth, x.Why)
	}
	fmt.Fprintf(w, "  judged on every transition: %s\n", list(p.Judged))
	for _, x := range p.Excluded {
		fmt.Fprintf(w, "  excluded %s: %s", x.ID, x.Reason)
		if len(x.CheckedBy) > 0 {
			fmt.Fprintf(w, "; checked instead by %s", strings.Join(x.CheckedBy, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  bounds: %s%s\n", boundsText(p.Bounds), anyTiming(p.Bounds))
	fmt.Fprintf(w, "  reductions: %s\n", p.Reductions.text())
	if p.Progress != nil {
		p.Progress.print(w)
	} else {
		fmt.Fprintln(w, "  progress: not checked — safety only: a design that never commits (its holders never write, say) holds every invariant; --liveness checks that every task can still commit")
	}
}

// what says what a proof says of its invariants.
func (p *proof) what() string {
	if len(p.Judged) == 1 {
		return "the invariant judged holds"
	}
	return fmt.Sprintf("the %d invariants judged hold", len(p.Judged))
}

// missed says, after a count, the chance that hash compaction missed a
// state ("" when none could be).
func missed(omission float64) string {
	if omission == 0 {
		return ""
	}
	return fmt.Sprintf("; a state missed with probability at most %.3g", omission)
}

// within says which states a proof's transitions are out of. With no
// reduction of --reduce that applied, every reachable state is stored and
// expanded; with some, the search judged the transitions out of the states
// it stored and expanded, and the reductions stand for the rest. The jobs
// of a split search count their states together.
func (p *proof) within() string {
	r := p.Reductions
	where := "reachable within the bounds"
	if r.DepthCut {
		where = fmt.Sprintf("within depth %d", r.DepthBound)
	}
	by, over := "the search", ""
	if p.Jobs > 1 {
		by, over = fmt.Sprintf("its %d jobs", p.Jobs), "; counted over the jobs, which overlap below the split"
	}
	if len(r.Steps) == 0 && r.Subsumed == 0 && p.Jobs <= 1 {
		return fmt.Sprintf("every one of the %d states %s (%d without symmetry)", p.states, where, p.unreduced)
	}
	judged := fmt.Sprintf("%d states (%d without symmetry%s)", p.states, p.unreduced, over)
	if r.Subsumed > 0 {
		judged = fmt.Sprintf("%d states (%d stored, less %d subsumed; %d without symmetry%s)", p.states-r.Subsumed, p.states, r.Subsumed, p.unreduced, over)
	}
	if len(r.Steps) == 0 && r.Subsumed == 0 {
		return fmt.Sprintf("every state %s: %s judged those out of %s", where, by, judged)
	}
	return fmt.Sprintf("every state %s: %s judged those out of %s, and the reductions below match every run of the others with a run of these, no longer, with the same facts", where, by, judged)
}

// boundsText is a config as the flags that set it.
// anyTiming says what a delay or pause bound of 0 means, for those that
// are 0: " (delay 0, pause 0: any)", " (delay 0: any)", or "".
func anyTiming(c model.Config) string {
	var zero []string
	if c.Delay == 0 {
		zero = append(zero, "delay 0")
	}
	if c.Pause == 0 {
		zero = append(zero, "pause 0")
	}
	if len(zero) == 0 {
		return ""
	}
	return " (" + strings.Join(zero, ", ") + ": any)"
}

func boundsText(c model.Config) string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	configFlags(fs, &c)
	var parts []string
	fs.VisitAll(func(f *flag.Flag) { parts = append(parts, "--"+f.Name+" "+f.Value.String()) })
	return strings.Join(parts, " ")
}

func (r reductions) text() string {
	var parts []string
	if len(r.Symmetry) == 0 {
		parts = append(parts, "no symmetry")
	} else {
		parts = append(parts, fmt.Sprintf("symmetry over %s (a state stored once per orbit, %.2fx)", strings.Join(r.Symmetry, " and "), r.Factor))
	}
	switch {
	case r.CompactedAt > 0:
		parts = append(parts, fmt.Sprintf("hash compaction from %d states on (at the memory budget): a state missed with probability at most %.3g", r.CompactedAt, r.OmissionBound))
	case r.HashCompaction:
		parts = append(parts, fmt.Sprintf("hash compaction: a state missed with probability at most %.3g", r.OmissionBound))
	default:
		parts = append(parts, "exact visited set")
	}
	switch {
	case r.DepthBound == 0:
		parts = append(parts, "no depth bound")
	case r.DepthCut:
		parts = append(parts, fmt.Sprintf("depth bound %d: states that deep were not expanded", r.DepthBound))
	default:
		parts = append(parts, fmt.Sprintf("depth bound %d, never met", r.DepthBound))
	}
	if len(r.Steps) > 0 {
		parts = append(parts, "the reductions "+strings.Join(r.Steps, ", ")+" (no verdict or shortest length changes)")
	}
	if r.Subsumed > 0 {
		parts = append(parts, fmt.Sprintf("%d states stored and not expanded, each simulated by a state stored no deeper", r.Subsumed))
	}
	return strings.Join(parts, "; ")
}

// exit is the search's exit status code with the progress verdict taken
// in: a failure is a violation; asked for and not checked, the search is
// not done.
func (p *proof) exit(code int) int {
	if p == nil || p.Progress == nil {
		return code
	}
	switch {
	case p.Progress.Checked && !p.Progress.Holds:
		return exitViolation
	case !p.Progress.Checked && code == exitOK:
		return exitIncomplete
	}
	return code
}

// unchecked is why the progress check asked for gave no verdict; "" when
// it gave one or was not asked for.
func (p *proof) unchecked() string {
	if p == nil || p.Progress == nil || p.Progress.Checked {
		return ""
	}
	return p.Progress.Reason
}

// liveness is the --liveness flags of explore search.
type liveness struct {
	on        bool
	extra     int
	maxStates uint64
}

func livenessFlags(fs *flag.FlagSet) *liveness {
	l := &liveness{}
	fs.BoolVar(&l.on, "liveness", false, "bfs: after a search that explored every reachable state, check progress (checker.Progress): from every reachable state every task can still be committed with no further fault; a failure is exit 1, with a witness saved under --out; not checked (an incomplete or depth-bounded search, its own limit) is exit 3")
	fs.IntVar(&l.extra, "liveness-extra", 2, fmt.Sprintf("--liveness: the continuations run with ops and grants raised by this much (progress's own budget, at least 1); on a failure the witness's stuck state is judged again with up to %d more, one at a time, until it commits or a search stops", largerTries))
	fs.Uint64Var(&l.maxStates, "liveness-max-states", 500000, "--liveness: states each of the progress check's two explorations may store (one per orbit under the search's symmetry, about 400 bytes each); reaching it is not checked (exit 3); each larger budget a failure's stuck state is tried with may store as many")
	return l
}

// validate refuses --liveness where it cannot mean anything.
func (l *liveness) validate(mode string, shard checker.Shard) error {
	switch {
	case !l.on:
		return nil
	case mode != "bfs":
		return usagef("--liveness needs --mode bfs: progress is checked over every reachable state")
	case shard.N > 1:
		return usagef("--liveness: not with --shard: the progress check explores the whole space itself; run it unsplit")
	case l.extra < 1:
		return usagef("--liveness-extra %d: want at least 1 (no budget left, every run that spent its operations is stuck)", l.extra)
	}
	return nil
}

// machine refuses, before any search, a --liveness whose progress check
// could not build its machine (m's budgets raised by --liveness-extra):
// found after the search, it would have cost the search's result.
func (l *liveness) machine(m *model.Machine) error {
	if !l.on {
		return nil
	}
	c := checker.ExtendedConfig(m.Config, l.extra)
	if _, err := model.New(c, m.Design); err != nil {
		return usagef("--liveness-extra %d: the progress check runs with ops %d and grants %d, and then %v", l.extra, c.Ops, c.Grants, err)
	}
	return nil
}

// progressReport is the verdict of --liveness: the "progress" object of the
// proof.
type progressReport struct {
	// Checked tells that the check ran to its end; Reason says why not.
	// Holds is then its verdict.
	Checked bool   `json:"checked"`
	Holds   bool   `json:"holds"`
	Reason  string `json:"reason,omitempty"`
	// States are the reachable states judged (every state, counted
	// without symmetry), Stored those the check stored (one per orbit
	// under the search's symmetry), Extended the extended machine's states
	// explored (one per orbit too), Stuck those of States from which no
	// fault-free continuation commits every task.
	States   uint64 `json:"states"`
	Stored   uint64 `json:"stored"`
	Extended uint64 `json:"extended"`
	Stuck    uint64 `json:"stuck"`
	// Extra is --liveness-extra; Ops and Grants the budgets of the
	// machine the continuations ran in (the config's, raised by Extra,
	// capped at the model's limits).
	Extra  int `json:"extra"`
	Ops    int `json:"ops"`
	Grants int `json:"grants"`
	// Elapsed is the check's wall time.
	Elapsed string `json:"elapsed,omitempty"`
	// Witness is a shortest run to a stuck state, saved like a
	// counterexample.
	Witness *witness `json:"witness,omitempty"`
	// Larger is the witness's stuck state judged again with larger
	// budgets (see larger); empty when the model's limits leave none.
	Larger []larger `json:"larger,omitempty"`
}

// larger is a failure's stuck state judged again with a larger budget than
// --liveness-extra: "stuck" is relative to the check's budget, and a state
// stuck under it may commit with more operations and grants. The budgets
// are tried one more at a time, up to largerTries more or the model's
// limits, until one commits or stops.
type larger struct {
	// Extra is the --liveness-extra tried; Ops and Grants its budgets.
	// Commits is the verdict, when Checked; Reason says why not.
	Extra   int    `json:"extra"`
	Ops     int    `json:"ops"`
	Grants  int    `json:"grants"`
	Checked bool   `json:"checked"`
	Commits bool   `json:"commits"`
	Reason  string `json:"reason,omitempty"`
}

// String names the budget tried.
func (g larger) String() string {
	return fmt.Sprintf("--liveness-extra %d (ops %d, grants %d)", g.Extra, g.Ops, g.Grants)
}

// printLarger says what the witness's stuck state did with larger budgets.
func printLarger(w io.Writer, tries []larger) {
	if len(tries) == 0 {
		fmt.Fprintln(w, "larger budgets: none to try (ops and grants at the model's limits)")
		return
	}
	last := tries[len(tries)-1]
	stuck := tries
	if !last.Checked || last.Commits {
		stuck = tries[:len(tries)-1]
	}
	if len(stuck) > 0 {
		fmt.Fprintf(w, "larger budgets: with up to %s the witness's stuck state still commits nothing\n", stuck[len(stuck)-1])
	}
	switch {
	case !last.Checked:
		fmt.Fprintf(w, "larger budgets: with %s the search from the witness's stuck state stopped (%s): not judged\n", last, last.Reason)
	case last.Commits:
		fmt.Fprintf(w, "larger budgets: with %s the witness's stuck state commits: it was stuck for want of budget, not necessarily by the design; run again with --liveness-extra %d to judge every state with it\n",
			last, last.Extra)
	}
}

// largerTries is how many budgets above --liveness-extra a failure's stuck
// state is tried with.
const largerTries = 3

// tryLarger judges s, a failure's stuck state, with budgets larger than
// --liveness-extra (see larger).
func (l *liveness) tryLarger(ctx context.Context, m *model.Machine, s *model.State, sym model.Symmetry, maxMemory uint64) []larger {
	var tries []larger
	last := checker.ExtendedConfig(m.Config, l.extra)
	for e := l.extra + 1; e <= l.extra+largerTries; e++ {
		c := checker.ExtendedConfig(m.Config, e)
		if c == last {
			break // the model's limits: nothing larger
		}
		last = c
		commits, stopped, err := checker.CanCommit(ctx, m, s, checker.ProgressOptions{Extra: e, MaxStates: l.maxStates,
			MaxMemory: maxMemory, Symmetry: sym})
		g := larger{Extra: e, Ops: c.Ops, Grants: c.Grants, Checked: stopped == "" && err == nil, Commits: commits}
		switch {
		case err != nil: // its machine cannot be built, or a decision failed in it: not judged
			g.Reason = err.Error()
		case stopped != "":
			g.Reason = l.cause(ctx, stopped, maxMemory)
		}
		if tries = append(tries, g); !g.Checked || g.Commits {
			break
		}
	}
	return tries
}

// cause says what stopped a search of the progress check (stopped, a
// Stop* value): its state limit, its heap budget or its context.
func (l *liveness) cause(ctx context.Context, stopped string, maxMemory uint64) string {
	switch stopped {
	case checker.StopMemory:
		return fmt.Sprintf("--max-memory %s reached", checker.FormatSize(maxMemory))
	case checker.StopCancelled:
		return stopCause(ctx)
	}
	return fmt.Sprintf("--liveness-max-states %d reached", l.maxStates)
}

// witness is a progress failure's run, saved as a history (and .html) in
// File unless it is empty (the initial state is stuck) or the save failed
// (SaveError: the witness is still reported, its trace printed).
type witness struct {
	File      string   `json:"file,omitempty"`
	SaveError string   `json:"saveError,omitempty"`
	Actions   int      `json:"actions"`
	Trace     []string `json:"trace"`

	run     *model.Run // for the text's trace
	h       *history.History
	cat     []spec.Variant
	saveErr error
}

// saveErr is the error saving the progress witness met, if any: the verb
// ends with it after its result (reported).
func (p *proof) saveErr() error {
	if p == nil || p.Progress == nil || p.Progress.Witness == nil {
		return nil
	}
	return p.Progress.Witness.saveErr
}

// check runs the progress check on m after a BFS that ended with res,
// under the search's symmetry sym, within its heap budget maxMemory
// (--max-memory, 0: none), and saves a failure's witness under out (as the
// counterexamples are).
func (l *liveness) check(ctx context.Context, m *model.Machine, v spec.Variant, res checker.BFSResult, sym model.Symmetry, maxMemory uint64, seed uint64, out string, cat []spec.Variant) *progressReport {
	r := &progressReport{Extra: l.extra}
	if res.Stopped != checker.StopComplete {
		r.Reason = fmt.Sprintf("it runs only after a search that explored every reachable state; this one stopped: %s (%s)", res.Stopped, stopMeaning[res.Stopped])
		return r
	}
	start := time.Now()
	restore := holdMemoryLimit(maxMemory)
	p := checker.Progress(ctx, m, checker.ProgressOptions{Extra: l.extra, MaxStates: l.maxStates, MaxMemory: maxMemory, Symmetry: sym})
	restore()
	r.Elapsed = time.Since(start).Round(time.Millisecond).String()
	var fault *checker.Fault
	if errors.As(p.Err, &fault) { // no verdict: not checked, saying why
		r.Reason = "the design's decision failed in the progress check's machine (its budgets are the search's raised by --liveness-extra): " + fault.Cause
		return r
	}
	if p.Err != nil { // not checked, saying why: the search's result stands
		r.Reason = "the progress check could not run: " + p.Err.Error()
		return r
	}
	r.States, r.Stored, r.Extended, r.Ops, r.Grants = p.States, p.Stored, p.Extended, p.ExtendedConfig.Ops, p.ExtendedConfig.Grants
	if !p.Complete {
		r.Reason = fmt.Sprintf("the progress check stopped after %d reachable and %d extended states stored (%s)", p.Stored, p.Extended,
			l.cause(ctx, p.Stopped, maxMemory))
		return r
	}
	r.Checked, r.Holds, r.Stuck = true, p.Stuck == 0, p.Stuck
	if p.Witness == nil {
		return r
	}
	run := model.NewRun(m)
	wt := &witness{Actions: len(p.Witness), Trace: []string{}, run: run}
	r.Witness = wt
	for _, a := range p.Witness {
		run.Do(a)
		wt.Trace = append(wt.Trace, a.String())
	}
	restore = holdMemoryLimit(maxMemory)
	r.Larger = l.tryLarger(ctx, m, &run.State, sym, maxMemory)
	restore()
	if len(p.Witness) == 0 {
		return r // the initial state is stuck: no run to save (a history needs an event)
	}
	h := checker.Counterexample(v.Name, seed, run, fmt.Sprintf("%s fails progress: from the last state no fault-free continuation commits every task (explore search --mode bfs --liveness)", v.Name))
	wt.h, wt.cat = h, cat
	// A witness that cannot be saved is still reported (the search's
	// result with it); the verb ends with the error after it.
	if wt.File, wt.saveErr = save(filepath.Join(out, v.Name), "progress", h, cat); wt.saveErr != nil {
		wt.SaveError = wt.saveErr.Error()
	}
	return r
}

// print writes the progress verdict for a person, with a failure's witness
// step by step.
func (r *progressReport) print(w io.Writer) {
	budget := fmt.Sprintf("continuations judged with ops %d and grants %d: --liveness-extra %d, the progress check's own budget; %s",
		r.Ops, r.Grants, r.Extra, r.Elapsed)
	counted := "counted without symmetry"
	if r.Stored < r.States {
		counted += fmt.Sprintf("; %d stored, one per orbit of the search's renamings", r.Stored)
	}
	switch {
	case !r.Checked:
		fmt.Fprintf(w, "progress not checked: %s\n", r.Reason)
	case r.Holds:
		fmt.Fprintf(w, "progress holds: from every one of %d reachable states (%s) every task can still be committed with no further fault (%s)\n",
			r.States, counted, budget)
	default:
		fmt.Fprintf(w, "progress fails: %d of %d states stuck (%s): from them no fault-free continuation commits every task (%s; a state stuck under it may commit with a larger one)\n",
			r.Stuck, r.States, counted, budget)
		printLarger(w, r.Larger)
		if r.Witness.Actions == 0 {
			fmt.Fprintln(w, "witness: the initial state is stuck (no action to save or replay)")
			return
		}
		where := "in " + r.Witness.File + " (and .html)"
		if r.Witness.saveErr != nil {
			where = "not saved (the error follows on standard error)"
		}
		fmt.Fprintf(w, "witness: %d actions to a stuck state, %s\n", r.Witness.Actions, where)
		printTrace(w, "witness", r.Witness.run, r.Witness.h, r.Witness.cat)
	}
}
