package checker

import (
	"context"
	"fmt"
	"slices"

	"github.com/fencecheck/fencecheck/model"
)

// ProgressOptions configure a progress check (Progress).
type ProgressOptions struct {
	// Extra is how much the extended machine raises the config's Ops (per
	// worker) and Grants (per resource), each capped at the model's limit;
	// 0 means 2. The budgets of the original config run out: a state in
	// which every worker has started all its operations can never commit,
	// whatever the design, so fault-free continuations are judged in a
	// machine with more of both.
	Extra int
	// MaxStates, when positive, bounds the states of each of the two
	// explorations (the original machine's reachable states, and the
	// extended machine's fault-free graph): a check cut short has no
	// verdict (ProgressResult.Complete is false).
	MaxStates uint64
	// MaxMemory, when positive, is a budget of Go heap, counted as
	// BFSOptions.MaxMemory is: a check that reaches it stops with no
	// verdict (ProgressResult.Stopped is StopMemory).
	MaxMemory uint64
	// Symmetry is the renamings under which the check stores one state
	// per orbit, as BFSOptions.Symmetry does (those the design does not
	// allow are left out; zero: none). The verdicts are the same: every
	// task is committed in a state exactly when it is in each renaming of
	// it, and the machine's steps commute with renaming (the model checks
	// that the design's decisions do: model.Design.Asymmetric), so a state
	// can reach a committed state exactly when its orbit's representative
	// can. States and Stuck still count every state.
	Symmetry model.Symmetry
	// Fixpoint judges by the extended machine's whole fault-free graph and
	// a backward fixpoint over it, instead of the default goal-directed
	// search. Both are exact; the fixpoint stores every state and edge of
	// that graph, which is large even at small bounds, and serves as the
	// search's cross-check.
	Fixpoint bool
}

// ProgressResult is the outcome of a progress check.
type ProgressResult struct {
	// States is the number of states reachable in the original machine
	// (all actions, faults included); Extended the number of states of
	// the extended machine's fault-free graph explored from them (one per
	// orbit under Symmetry). Stored is the reachable states stored: one
	// per orbit under Symmetry, States without it.
	States   uint64
	Stored   uint64
	Extended uint64
	// Complete tells that both explorations ended: only then do Stuck and
	// Witness mean anything. Stopped says why not: StopMaxStates,
	// StopMemory or StopCancelled (empty when Complete, or when Err is
	// set).
	Complete bool
	Stopped  string
	// Stuck is the number of reachable states from which no fault-free
	// continuation (in the extended machine) reaches a state where every
	// task is committed (every state of a stuck orbit counted).
	Stuck uint64
	// Witness is a shortest path of the original machine from Init to a
	// stuck state, nil if none is stuck (empty if the initial state is).
	Witness []model.Action
	// ExtendedConfig is the config of the machine the continuations ran in: the
	// original's with Ops and Grants raised by Extra, each capped at the
	// model's limit (zero when Err is set).
	ExtendedConfig model.Config
	// Err is why the check could not run (the extended machine could not
	// be built, or a design's decision failed in it: a *Fault, with no
	// run); the rest is then zero.
	Err error
}

// isFault reports whether a is a fault: something the environment does to
// the protocol (lose, duplicate or forge a message, crash, restart, pause a
// process — a write held between its check and its send is such a pause —,
// set a clock), not a step the protocol itself or the passing of time
// takes. Resume is not a fault: it ends one.
func isFault(a model.Action) bool {
	switch a.Kind {
	case model.Drop, model.Duplicate, model.Crash, model.Restart, model.SinkCrash,
		model.Forge, model.SetClock, model.Pause:
		return true
	}
	return a.Kind == model.Write && a.Hold
}

// committed reports whether every task of m has a result at the sink in s
// that a holder wrote with its own grant's token. A forged write's result
// does not count: the task holds a forger's payload, not its own. (In the
// extended machine, which grants more, a forged token, one above every
// token the original config can grant, may equal a real grant's: such a
// lucky guess must not make a stuck state commit.)
func committed(m *model.Machine, s *model.State) bool {
	var seen [model.MaxResources]bool
	for i := 0; i < int(s.Sink.NResults); i++ {
		x := &s.Sink.Results[i]
		if int(x.Res) < len(seen) && x.Grant != 0 && s.Ghost[x.Res].Grant[x.Grant].Token == x.Token {
			seen[x.Res] = true
		}
	}
	for r := 0; r < m.Config.Resources; r++ {
		if !seen[r] {
			return false
		}
	}
	return true
}

// extend returns the machine of m's design under m's config with Ops and
// Grants raised by extra (capped at the model's limits). Every state of m
// is a state of the extended machine: the two configs differ only in
// budgets, which a state holds as counts spent so far (extendsState checks
// a state).
func extend(m *model.Machine, extra int) (*model.Machine, error) {
	return model.New(ExtendedConfig(m.Config, extra), m.Design)
}

// ExtendedConfig is the config a progress check's continuations run under
// with Extra extra: c's Ops and Grants raised by extra, each capped at the
// model's limits (16 operations a worker, model.MaxGrants).
func ExtendedConfig(c model.Config, extra int) model.Config {
	c.Ops = min(c.Ops+extra, 16)
	c.Grants = min(c.Grants+extra, model.MaxGrants)
	return c
}

// extendsState reports why state s of machine small is not a valid state
// of machine big (nil if it is): the configs must agree but for larger
// Ops and Grants, and s must spend no more than big's budgets.
func extendsState(small, big *model.Machine, s *model.State) error {
	a, b := small.Config, big.Config
	if b.Ops < a.Ops || b.Grants < a.Grants {
		return fmt.Errorf("progress: extended config lowers a budget (ops %d→%d, grants %d→%d)", a.Ops, b.Ops, a.Grants, b.Grants)
	}
	a.Ops, a.Grants = b.Ops, b.Grants
	if a != b {
		return fmt.Errorf("progress: configs differ beyond ops and grants: %+v vs %+v", small.Config, big.Config)
	}
	for w := 0; w < b.Workers; w++ {
		if n := s.Workers[w].Ops; int(n) > b.Ops {
			return fmt.Errorf("progress: worker %d started %d operations, more than the extended config's %d", w, n, b.Ops)
		}
	}
	for r := 0; r < b.Resources; r++ {
		if n := s.Ghost[r].Grants; int(n) > b.Grants {
			return fmt.Errorf("progress: resource %d has %d grants, more than the extended config's %d", r, n, b.Grants)
		}
	}
	return nil
}

// Progress checks AG EF committed on m: from every state reachable in m
// (faults included, within the config's fault budgets), a state where
// every task is committed (committed: its result at the sink written by
// its holder with its own grant's token, not forged) is still reachable
// when no further fault occurs.
// The continuations run in the extended machine (ExtendedConfig, opt.Extra): m's
// own operation and grant budgets would make every run that spent them
// stuck. A design that is safe only because it rejects every write fails.
//
// It explores m's reachable states breadth first, then judges each in the
// extended machine's fault-free graph: by default with a depth-first
// search from it that tries protocol progress first (deliveries, writes,
// acquires) and stops at a committed state, memoizing verdicts across
// states (search); with opt.Fixpoint by the whole graph and a backward
// fixpoint from its committed states (fixpoint). A state is stuck if no
// committed state is reachable from it. Under opt.Symmetry each
// exploration stores one state per orbit.
func Progress(ctx context.Context, m *model.Machine, opt ProgressOptions) ProgressResult {
	res, _ := progress(ctx, m, opt)
	return res
}

// progressGraph is what a progress check computed: the original machine's
// reachable states (one per orbit under symmetry) in discovery
// (breadth-first) order, and whether each can reach a committed state
// fault-free in the extended machine big.
type progressGraph struct {
	big   *model.Machine
	reach *stateKeys
	ok    []bool
}

// stateKeys is a set of states stored as their canonical keys under
// machine m (Canon.Key: the Encode of the orbit's representative, the
// state's own Encode with no symmetry), numbered in the order they were
// added: a few times less memory than the states themselves (641 bytes
// each), which a progress check stores by the million.
type stateKeys struct {
	m     *model.Machine
	canon *model.Canon
	keys  []string
	index map[string]uint32
	buf   []byte
}

func newStateKeys(m *model.Machine, sym model.Symmetry) *stateKeys {
	return &stateKeys{m: m, canon: m.NewCanon(sym), index: map[string]uint32{}}
}

// len is the number of states stored.
func (k *stateKeys) len() int { return len(k.keys) }

// add stores s's orbit unless it is there already; it returns its number,
// whether it is new, and the orbit's size.
func (k *stateKeys) add(s *model.State) (i uint32, isNew bool, orbit int) {
	i, found, orbit := k.find(s)
	if found {
		return i, false, orbit
	}
	key := string(k.buf)
	i = uint32(len(k.keys))
	k.keys = append(k.keys, key)
	k.index[key] = i
	return i, true, orbit
}

// find returns the number of s's orbit, if it is stored, and its size.
func (k *stateKeys) find(s *model.State) (i uint32, found bool, orbit int) {
	k.buf, orbit = k.canon.Key(s, k.buf[:0])
	i, found = k.index[string(k.buf)]
	return i, found, orbit
}

// state returns state number i: its orbit's representative.
func (k *stateKeys) state(i uint32) model.State {
	var s model.State
	k.buf = append(k.buf[:0], k.keys[i]...)
	if err := k.m.Decode(k.buf, &s); err != nil {
		panic(fmt.Sprintf("checker: stored state %d does not decode: %v", i, err)) // Encode wrote it
	}
	return s
}

// walk returns a run of the machine from its initial state through the
// stored states chain (numbers, the initial state's left out), each step
// the first enabled action whose successor lies in the next one's orbit.
// Under symmetry the run's states are renamings of the representatives;
// such an action exists because the machine's steps commute with
// renaming, and chain must be a path of successors' orbits.
func (k *stateKeys) walk(chain []uint32) []model.Action {
	out := []model.Action{}
	s := k.m.Init()
	var buf []model.Action
	for _, j := range chain {
		buf = k.m.Enabled(&s, buf[:0])
		found := false
		for _, a := range buf {
			t := s
			k.m.Next(&t, &a)
			if i, ok, _ := k.find(&t); ok && i == j {
				out, s, found = append(out, a), t, true
				break
			}
		}
		if !found {
			panic(fmt.Sprintf("checker: no step to stored state %d", j)) // chain is a path of parent links
		}
	}
	return out
}

// extended returns the machine the continuations run in (extend, with
// opt.Extra or its default) and the limits of a check under opt.
func (opt ProgressOptions) extended(ctx context.Context, m *model.Machine) (*model.Machine, *progressLimits, error) {
	extra := opt.Extra
	if extra <= 0 {
		extra = 2
	}
	big, err := extend(m, extra)
	if err != nil {
		return nil, nil, fmt.Errorf("progress: extended machine: %w", err)
	}
	return big, &progressLimits{ctx: ctx, maxStates: opt.MaxStates, mem: heapBudget{max: opt.MaxMemory}}, nil
}

// CanCommit judges one state s of m as Progress judges each reachable
// state: whether some fault-free continuation, in m's machine extended by
// opt.Extra, commits every task. It explores from s alone, within opt's
// limits; when they stop it, stopped says why (as
// ProgressResult.Stopped) and commits means nothing. A state Progress
// found stuck may commit with a larger Extra: CanCommit tells whether it
// does, without judging every state again.
func CanCommit(ctx context.Context, m *model.Machine, s *model.State, opt ProgressOptions) (commits bool, stopped string, err error) {
	big, lim, err := opt.extended(ctx, m)
	if err != nil {
		return false, "", err
	}
	if err := extendsState(m, big, s); err != nil {
		return false, "", err
	}
	root := newStateKeys(m, opt.Symmetry)
	root.add(s)
	ok, _ := search(big, opt.Symmetry, root, lim)
	if ok == nil {
		return false, lim.stopped, nil
	}
	return ok[0], "", nil
}

func progress(ctx context.Context, m *model.Machine, opt ProgressOptions) (res ProgressResult, g *progressGraph) {
	defer func() { // a design's decision that failed, in the extended machine perhaps (more budget than the search's)
		if r := recover(); r != nil {
			res, g = ProgressResult{Err: faultOf(r, nil, model.Action{}, false)}, nil
		}
	}()
	big, lim, err := opt.extended(ctx, m)
	if err != nil {
		res.Err = err
		return res, nil
	}
	res.ExtendedConfig = big.Config
	var buf []model.Action

	// 1. The original machine's reachable states (one per orbit), with
	// parent links and orbit sizes.
	reach := newStateKeys(m, opt.Symmetry)
	var parents []uint32
	var orbits []uint8 // at most MaxWorkers! × MaxResources! = 144
	add := func(s *model.State, parent uint32) {
		if _, isNew, orbit := reach.add(s); isNew {
			parents, orbits = append(parents, parent), append(orbits, uint8(orbit))
			res.States += uint64(orbit)
		}
	}
	init := m.Init()
	add(&init, 0)
	for i := 0; i < reach.len(); i++ {
		if lim.over(reach.len()) {
			res.Stored, res.Stopped = uint64(reach.len()), lim.stopped
			return res, nil
		}
		s := reach.state(uint32(i))
		buf = m.Enabled(&s, buf[:0])
		for _, a := range buf {
			t := s
			m.Next(&t, &a)
			add(&t, uint32(i))
		}
	}
	res.Stored = uint64(reach.len())
	if lim.over(reach.len()) {
		res.Stopped = lim.stopped
		return res, nil
	}

	// 2. Which of them reach a committed state fault-free in the
	// extended machine.
	for i := range reach.len() {
		s := reach.state(uint32(i))
		if err := extendsState(m, big, &s); err != nil {
			res.Err = err
			return res, nil
		}
	}
	verdict := search
	if opt.Fixpoint {
		verdict = fixpoint
	}
	ok, n := verdict(big, opt.Symmetry, reach, lim)
	res.Extended = uint64(n)
	if ok == nil {
		res.Stopped = lim.stopped
		return res, nil
	}

	// 3. The verdict on the original machine's states. Discovery order is
	// breadth-first, so the first stuck state is a shallowest one.
	g = &progressGraph{big: big, reach: reach, ok: ok}
	first := -1
	for i := range ok {
		if !ok[i] {
			res.Stuck += uint64(orbits[i])
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		var chain []uint32
		for i := first; i != 0; i = int(parents[i]) {
			chain = append(chain, uint32(i))
		}
		slices.Reverse(chain)
		res.Witness = reach.walk(chain) // empty if the initial state itself is stuck
	}
	res.Complete = true
	return res, g
}

// progressLimits stops a progress check: its context, its state limit
// and its heap budget.
type progressLimits struct {
	ctx       context.Context
	maxStates uint64
	mem       heapBudget
	calls     uint64
	stopped   string // why it stopped (Stop*), once it has
}

// over reports whether the check must stop with n states stored. It looks
// at the context and the heap every 4096 calls.
func (l *progressLimits) over(n int) bool {
	switch {
	case l.stopped != "":
	case l.maxStates > 0 && uint64(n) > l.maxStates:
		l.stopped = StopMaxStates
	case l.calls%4096 != 0:
	case l.ctx.Err() != nil:
		l.stopped = StopCancelled
	case l.mem.over(0):
		l.stopped = StopMemory
	}
	l.calls++
	return l.stopped != ""
}

// fixpoint judges the reachable states by the extended machine's whole
// fault-free graph from them, explored forward (goals not expanded), and a
// backward fixpoint from its committed states over reversed edges. It
// returns each state's verdict (nil if lim stopped it) and the extended
// states explored.
func fixpoint(big *model.Machine, sym model.Symmetry, reach *stateKeys, lim *progressLimits) ([]bool, int) {
	var buf []model.Action
	// The fault-free graph, its edges kept as (from, to) pairs, sorted
	// into predecessor lists below. Distinct orbits of the original machine
	// are distinct orbits of the extended one (the same renamings of the
	// same states), so the reachable states are its first states.
	ext := newStateKeys(big, sym)
	for i := range reach.len() {
		s := reach.state(uint32(i))
		ext.add(&s)
	}
	var from, to []uint32
	for i := 0; i < ext.len(); i++ {
		if lim.over(ext.len()) {
			return nil, ext.len()
		}
		s := ext.state(uint32(i))
		if committed(big, &s) {
			continue // a goal: what follows it does not matter
		}
		buf = big.Enabled(&s, buf[:0])
		for _, a := range buf {
			if isFault(a) {
				continue
			}
			t := s
			big.Next(&t, &a)
			j, _, _ := ext.add(&t)
			from, to = append(from, uint32(i)), append(to, j)
		}
	}
	n := ext.len()
	if lim.over(n) {
		return nil, n
	}

	// Reverse adjacency (compressed: the predecessors of state j are
	// pred[start[j]:start[j+1]]), then the backward fixpoint from the
	// committed states.
	start := make([]uint32, n+1)
	for _, j := range to {
		start[j+1]++
	}
	for j := 1; j <= n; j++ {
		start[j] += start[j-1]
	}
	pred := make([]uint32, len(to))
	fill := append([]uint32(nil), start[:n]...)
	for k, j := range to {
		pred[fill[j]] = from[k]
		fill[j]++
	}
	from, to, fill = nil, nil, nil
	good := make([]bool, n)
	var queue []uint32
	for j := range n {
		if s := ext.state(uint32(j)); committed(big, &s) {
			good[j] = true
			queue = append(queue, uint32(j))
		}
	}
	for len(queue) > 0 {
		j := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, p := range pred[start[j]:start[j+1]] {
			if !good[p] {
				good[p] = true
				queue = append(queue, p)
			}
		}
	}
	return good[:reach.len()], n // the reachable states are the first added
}

// spendNothing sets the fault budgets s has spent to none. They enable
// faults and nothing else (model's TestBudgetsGateOnlyFaults), and a
// continuation takes no fault, so states that differ only in them reach
// the same states but for them: the search judges them as one.
func spendNothing(s *model.State) {
	s.Drops, s.Dups, s.Crashes, s.Restarts, s.Forged, s.SinkRestarts = 0, 0, 0, 0, 0, 0
}

// progressRank orders a state's fault-free successors for the search:
// what moves the protocol towards a commit first, time and giving up later,
// operations that commit nothing last. It changes only the search's speed,
// never its verdict.
func progressRank(k model.Kind) int {
	switch k {
	case model.Deliver:
		return 0
	case model.Write:
		return 1
	case model.Acquire, model.Retry, model.Resume:
		return 2
	case model.Tick:
		return 3
	case model.Timeout:
		return 4
	}
	return 5 // Read, Renew, Release
}

// search judges the reachable states by a depth-first search of the
// extended machine's fault-free graph from each, stopping at a committed
// state or a state already judged able to commit: then every state on the
// search's path can commit. A search that ends without one has seen the
// whole closure of its root, none of it able to commit: every state it
// visited is stuck. Verdicts are kept across roots.
func search(big *model.Machine, sym model.Symmetry, reach *stateKeys, lim *progressLimits) ([]bool, int) {
	const good, bad = 1, 2
	verdict := map[string]uint8{} // by big's canonical key
	type frame struct {
		succ []model.State
		next int
	}
	var buf []model.Action
	var kbuf []byte
	canon := big.NewCanon(sym)
	key := func(s *model.State) []byte { kbuf, _ = canon.Key(s, kbuf[:0]); return kbuf }
	expand := func(s model.State) []model.State {
		buf = big.Enabled(&s, buf[:0])
		var out []model.State
		for rank := 0; rank <= 5; rank++ {
			for _, a := range buf {
				if !isFault(a) && progressRank(a.Kind) == rank {
					t := s
					big.Next(&t, &a)
					out = append(out, t)
				}
			}
		}
		return out
	}
	ok := make([]bool, reach.len())
	for i := range ok {
		root := reach.state(uint32(i))
		spendNothing(&root)
		if v, seen := verdict[string(key(&root))]; seen {
			ok[i] = v == good
			continue
		}
		rk := string(kbuf)
		visited := map[string]bool{rk: true}
		path := []string{rk}
		var frames []frame
		found := committed(big, &root)
		if !found {
			frames = append(frames, frame{succ: expand(root)})
		}
		for !found && len(frames) > 0 {
			if lim.over(len(verdict) + len(visited)) {
				return nil, len(verdict) + len(visited)
			}
			f := &frames[len(frames)-1]
			if f.next == len(f.succ) {
				frames, path = frames[:len(frames)-1], path[:len(path)-1]
				continue
			}
			t := f.succ[f.next]
			f.next++
			v := verdict[string(key(&t))]
			if v == good || v == 0 && committed(big, &t) {
				path = append(path, string(kbuf))
				found = true
			} else if v == 0 && !visited[string(kbuf)] {
				tk := string(kbuf)
				visited[tk] = true
				path = append(path, tk)
				frames = append(frames, frame{succ: expand(t)})
			}
		}
		if found {
			for _, k := range path {
				verdict[k] = good
			}
		} else {
			for k := range visited {
				verdict[k] = bad
			}
		}
		ok[i] = found
	}
	return ok, len(verdict)
}
