package checker

import (
	"context"
	"math/bits"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// BFSOptions configure an exhaustive breadth-first search.
type BFSOptions struct {
	// Stop is the set of invariants whose violation ends the search with a
	// shortest counterexample; zero means every invariant. Violations of the
	// others (the expected ones) are recorded in BFSResult.Violated and
	// BFSResult.Shortest only.
	Stop spec.Set
	// Exhaustive explores every reachable state whatever is violated:
	// nothing stops the search, and BFSResult.Shortest gives a shortest
	// counterexample of every invariant violated (a verdict matrix row).
	Exhaustive bool
	// MaxDepth, when positive, bounds the depth: states MaxDepth actions
	// from the initial state are stored but not expanded.
	MaxDepth int
	// MaxStates, when positive, ends the search after the level at which
	// the number of distinct states reaches it.
	MaxStates uint64
	// MaxMemory, when positive, is a budget in bytes of Go heap in use
	// (heap objects, live or not yet collected, and unused heap spans: what
	// BFSResult.PeakHeapBytes measures). Before each batch of chunks
	// within a level the heap is sampled, and the search stops with
	// StopMemory when the sample plus the growth the next batch may cause
	// (visited-set tables that would double, the next level's offsets)
	// reaches the budget. Since the sample counts garbage not yet
	// collected, a collection (runtime.GC) is forced before stopping, and
	// then again only once the heap has grown by 1/16 of the budget; the
	// garbage collector's settings are left alone (a caller that wants the
	// resident set held near the budget too sets debug.SetMemoryLimit, as
	// explore does: freed heap stays resident until the runtime returns
	// it). Before it stops, a search sends its levels to disk, switches to
	// hash compaction (CompactAtBudget) and, hash-compact, lets its tables
	// fill to 7/8 before they double (BFSResult.DenseAt), then keeps full
	// tables and stores what follows in smaller ones (BFSResult.LayeredAt),
	// each only if that lets it go on. The result holds the states stored
	// so far (those of the batches merged).
	MaxMemory uint64
	// CompactAtBudget makes an exact search that meets MaxMemory switch to
	// hash compaction instead of stopping: every stored state's key gives
	// way to 64 bits of its hash (BFSResult.CompactedAt says when), and the
	// search goes on until the budget is met again. The result is then a
	// hash-compact one, with the omission bound over every state.
	CompactAtBudget bool
	// Symmetry is the symmetry reduction: states that are renamings of one
	// another are stored once. It is sound because the machine's steps
	// commute with renaming: the model checks at every step that the
	// design's decisions do, unless it declares model.Design.Asymmetric
	// (then only the renamings model.Machine.Symmetries allows are used:
	// none).
	Symmetry model.Symmetry
	// Reduce leaves out the actions the reductions strike (model.Reduction:
	// runs no longer, the same facts), so that the verdicts and the
	// shortest counterexample lengths are a full search's.
	Reduce model.Reduction
	// HashCompact stores 64 bits per state instead of the state: its
	// distance from its home slot and the bits of its 128-bit hash that
	// follow the home slot's (which the slot implies), about 10 bytes per
	// state, at the price of a small probability that a state is wrongly
	// taken for one already seen (BFSResult.OmissionBound).
	HashCompact bool
	// Goroutines expand each level; 0 means GOMAXPROCS. The result does not
	// depend on it.
	Goroutines int
	// Shard, when Shard.N > 1, makes this search one of N jobs that split
	// the work (see Shard).
	Shard Shard
	// Progress, when set, is called every ProgressEvery (default 1s) and
	// after every level, from one goroutine at a time.
	Progress      func(BFSProgress)
	ProgressEvery time.Duration
	// Checkpoint, when set, is a directory where the search saves itself
	// (the file bfs.checkpoint, replaced atomically) at the start of the
	// levels it expands, at most once per CheckpointEvery (0: every
	// level), and when it ends: a search that stops (state limit, memory,
	// time, cancellation) leaves the checkpoint of the last level it
	// completed. A checkpoint of another search already there is an error,
	// unless Resume names the directory.
	Checkpoint      string
	CheckpointEvery time.Duration
	// Resume, when set, is a directory holding a checkpoint: the search
	// goes on from it instead of from the initial state, and ends with the
	// result of a search never interrupted. The checkpoint must be of the
	// same search: Variant, the machine's config, Symmetry, HashCompact as
	// asked, the stop invariants (Stop, Exhaustive) and Shard; other
	// options are budgets and may change.
	Resume string
	// Variant names what is searched (a variant's name with its
	// parameters), which a checkpoint records and Resume compares: the
	// machine's design itself cannot be.
	Variant string
	// SpillDir is where levels, and the parent links, go when the frontier
	// does not fit in MaxMemory (or with Spill); default Checkpoint, else a
	// temporary directory removed at the end. Spill keeps every level
	// after the first, and the links, on disk from the start.
	SpillDir string
	Spill    bool
}

// Shard splits a search into N independent jobs I = 0..N-1 at depth
// Depth (at least 1): every job searches levels 0..Depth identically, then keeps only
// the states of level Depth whose index in the level is I modulo N, and
// searches on from those alone. Every reachable state is either above
// Depth (searched by all) or reachable from a state of level Depth by a
// path that no other state of level Depth or above blocks, so the jobs
// together search every state; a shortest path passes through level Depth
// exactly at its Depth-th state, so the least counterexample length per
// invariant over the jobs is the unsplit search's. States below Depth may
// be searched by several jobs: MergeResults adds their counts, which are
// then upper bounds of the distinct states.
type Shard struct {
	I     int `json:"i"`
	N     int `json:"n"`
	Depth int `json:"depth"`
}

// BFSProgress is a snapshot of a running search.
type BFSProgress struct {
	States      uint64 // distinct states stored so far
	Transitions uint64 // transitions judged so far
	Depth       int    // the level being expanded
	Frontier    uint64 // states in that level
	Expanded    uint64 // of them, expanded so far (at most Frontier)
	// Marked counts, of them, those checked for subsumption before the
	// expansion starts (see BFSResult.Subsumed): Frontier once done, and
	// when the search has nothing to look for.
	Marked  uint64
	Elapsed time.Duration // since the search started
	Rate    float64       // states per second
	// Heap is the Go heap in use, sampled (see BFSOptions.MaxMemory), and
	// MaxMemory the budget (0: none). OnDisk tells that the levels are on
	// disk; CompactedAt, DenseAt and LayeredAt are BFSResult's: what the
	// search did at its budget so far.
	Heap, MaxMemory                 uint64
	OnDisk                          bool
	CompactedAt, DenseAt, LayeredAt uint64
	// Projection is Project of the levels complete so far.
	Projection Projection
}

// Why a search ended.
const (
	StopComplete  = "complete"   // every reachable state was explored
	StopViolation = "violation"  // an invariant in Stop was violated
	StopDepth     = "depth"      // states at MaxDepth were left unexpanded
	StopMaxStates = "max-states" // MaxStates was reached
	StopCancelled = "cancelled"  // the context was done
	StopMemory    = "memory"     // MaxMemory was reached
	StopError     = "error"      // a checkpoint or spill file could not be read or written (BFSResult.Err)
	StopFault     = "fault"      // a design's decision failed (BFSResult.Fault)
)

// BFSResult is the outcome of a search.
type BFSResult struct {
	// Stopped says why the search ended (Stop* constants); Complete is
	// Stopped == StopComplete: every state reachable within the config's
	// bounds was judged on every transition (and, with HashCompact, up to
	// OmissionBound).
	Stopped  string `json:"stopped"`
	Complete bool   `json:"complete"`
	// Fault is the step at which a design's decision failed (Stopped is
	// StopFault): no verdict of the search holds beyond it.
	Fault *Fault `json:"fault,omitempty"`
	// States is the number of distinct states stored (orbit representatives
	// under symmetry); Transitions the number of transitions judged;
	// MaxDepth the depth of the deepest state; Levels the number of states
	// first found at each depth.
	States      uint64   `json:"states"`
	Transitions uint64   `json:"transitions"`
	MaxDepth    int      `json:"maxDepth"`
	Levels      []uint64 `json:"levels"`
	// Unreduced is the sum of the stored states' orbit sizes: the number of
	// states they stand for (equal to States without symmetry): the number
	// of states a search without symmetry stores, since every renaming
	// leaves the initial state as it is (for resources too: a worker's Res
	// is 0 when it has no resource).
	// Reduction is Unreduced / States.
	Unreduced uint64  `json:"unreduced"`
	Reduction float64 `json:"reduction"`
	// Reductions names the reductions of the actions that applied
	// (BFSOptions.Reduce as far as the machine allows: model.Applies),
	// comma-separated; Unreduced does not count what they left out.
	Reductions string `json:"reductions,omitempty"`
	// Subsumed counts the stored states not expanded because a state
	// stored no deeper simulates each (ReduceBudgets, ReduceAges; see
	// docs/exhaustive.md): States includes them.
	Subsumed uint64 `json:"subsumed,omitempty"`
	// Probes counts the lookups of simulating states in the visited set
	// (ReduceBudgets, ReduceAges, and the marking of subsumed states). With
	// hash compaction each is a chance of a wrong match, which
	// OmissionBound counts.
	Probes uint64 `json:"probes,omitempty"`
	// Violated is every invariant violated by some judged transition (for a
	// search that stopped, the transitions of the levels before the last
	// and of the last level's part before the counterexample); ViolatedIDs
	// lists them.
	Violated    spec.Set `json:"-"`
	ViolatedIDs []string `json:"violated"`
	// Violations counts, for each invariant in Violated, the judged
	// transitions that violate it (of the same transitions as Violated).
	// Under symmetry or a reduction they are the transitions of the
	// reduced graph; in an unreduced Exhaustive search that ends
	// complete, every transition of the state space that violates it (what
	// Spin's pan -c0 counts as assertion violations, one per transition
	// and invariant: bench's TestSpinAgrees compares them). Nil when the
	// search resumed from a checkpoint of format version 5 or earlier,
	// which did not save them; a merged result adds the jobs' up.
	Violations map[string]uint64 `json:"violations,omitempty"`
	// Reached counts, per scene, the judged transitions that reached it:
	// what the search covered, not only what it did not find.
	Reached Coverage `json:"reached"`
	// Violation is the stop invariants the counterexample's last step
	// violates; Counterexample is a shortest run that ends with such a
	// step, re-executed from the initial state, with its history. Both are
	// zero when no invariant in Stop was violated.
	Violation      spec.Set   `json:"-"`
	ViolationIDs   []string   `json:"violation,omitempty"`
	Counterexample *model.Run `json:"-"`
	// Trace is the counterexample's actions in text form (model.ParseAction).
	Trace []string `json:"trace,omitempty"`
	// Shortest has, for each invariant in Violated (in the order of
	// spec.Invariants), a shortest run that violates it.
	Shortest []Shortest `json:"shortest"`
	// Elapsed is the wall time; Rate the distinct states per second.
	Elapsed time.Duration `json:"elapsed"`
	Rate    float64       `json:"rate"`
	// StoredBytes is the memory of the visited set and the parent links
	// the counterexample is rebuilt from (those in memory: a search that
	// keeps its levels on disk keeps its links there too, but the last
	// block of 65,536); BytesPerState is StoredBytes /
	// States. FrontierBytes is the peak memory of the states waiting to be
	// expanded and their candidate successors (transient, not included).
	// PeakHeapBytes is the peak of the Go heap in use, sampled as the
	// search begins (after reading a checkpoint), after each phase of each
	// level and at each progress report.
	StoredBytes   uint64  `json:"storedBytes"`
	BytesPerState float64 `json:"bytesPerState"`
	FrontierBytes uint64  `json:"frontierBytes"`
	PeakHeapBytes uint64  `json:"peakHeapBytes"`
	// HashCompact tells whether only hashes were stored. OmissionBound is
	// then an upper bound on the probability that a lookup in the visited
	// set matched the hash bits another state keeps: only then can a
	// state (and what only it leads to) be missed. It is the sum, over the
	// lookups that stored a state and those of ReduceBudgets and
	// ReduceAges, of the expected number of stored states each matches: a
	// state's stored entry keeps its part's, its home slot's and at least
	// 51 more bits of its hash, so each adds 2^-(those bits). A lookup
	// adds less than 2^-51·(1 + 0.44·d) in a table doubled d times (tables
	// filled to 7/8 at the memory budget included; see DenseAt), and about
	// 0.875·2^-51 more for each further table of its part (see LayeredAt):
	// about 2^-48 at 10^9 states, where keeping 64 bits of each hash gave
	// n/2^64 = 2^-34. It is 0 in exact mode.
	HashCompact bool `json:"hashCompact"`
	// CompactedAt is the number of states stored when an exact search
	// switched to hash compaction at its memory budget (CompactAtBudget);
	// 0 if it did not.
	CompactedAt uint64 `json:"compactedAt,omitempty"`
	// DenseAt is the number of states stored when a hash-compact search at
	// its memory budget let its tables fill to 7/8 before they double,
	// rather than 3/4, to go on in the memory it had; 0 if it did not.
	DenseAt uint64 `json:"denseAt,omitempty"`
	// LayeredAt is the number of states stored when a hash-compact search
	// at its memory budget, its tables dense, first kept a table that
	// would grow and set a smaller one to follow it (a layer), to go on in
	// the memory it had; 0 if it did not.
	LayeredAt     uint64  `json:"layeredAt,omitempty"`
	OmissionBound float64 `json:"omissionBound"`
	// Projection is, for a search stopped before its end by MaxStates,
	// its context or MaxMemory, Project of its levels: how many states it
	// would store in all, where the levels seen allow a fit; nil for the
	// others. A merge's (MergeResults) sums the jobs' totals.
	Projection *Projection `json:"projection,omitempty"`
	// Within is, for a search stopped before its end by MaxStates, its
	// context or MaxMemory after it expanded a level, what it had done
	// when the level it stopped in began; nil for the others.
	Within *Within `json:"within,omitempty"`
	// Again is the second search of a search with ReduceDeadDelivered
	// that found a violation (see Again); nil for the others.
	Again *Again `json:"again,omitempty"`
	// Shard is the part of a split search this is (N = 0: unsplit); Shards
	// how many results MergeResults merged into it.
	Shard  Shard `json:"shard"`
	Shards int   `json:"shards,omitempty"`
	// SpilledBytes is how much of the frontier went to disk: the bytes of
	// the levels written to spill files (see BFSOptions.MaxMemory), over
	// the whole search, resumed parts included.
	SpilledBytes uint64 `json:"spilledBytes,omitempty"`
	// Checkpoint is the file of the last checkpoint written
	// (BFSOptions.Checkpoint) and CheckpointDepth the level it starts:
	// BFSOptions.Resume goes on from there. Resumed is the file the search
	// resumed from, ResumedDepth its level.
	Checkpoint      string `json:"checkpoint,omitempty"`
	CheckpointDepth int    `json:"checkpointDepth,omitempty"`
	Resumed         string `json:"resumed,omitempty"`
	ResumedDepth    int    `json:"resumedDepth,omitempty"`
	// Err is why a search stopped with StopError: a checkpoint to resume
	// that is missing, not one, corrupt or of another search, or a
	// checkpoint directory another search holds (*CheckpointError; then
	// Levels is nil if the search never began), or a checkpoint or level
	// file that could not be written or read (the search stopped there:
	// Checkpoint names the last checkpoint written, if any). With another
	// Stopped, Err is the checkpoint that could not be written as the
	// search ended: its result (a violation, a complete search, a budget
	// reached) stands, and Checkpoint names the last one written, if any.
	Err error `json:"-"`
}

// Within is what a search that stopped early had done when the level it
// stopped in began: it had expanded every state fewer than Depth actions
// deep and judged every transition out of them, and had stored the states
// Depth deep. That is what a search with MaxDepth Depth does, and these
// are the figures it ends with (TestStoppedSearchProvesItsLevels): a
// search that stopped early proves what that one proves.
type Within struct {
	Depth int `json:"depth"`
	// States, Transitions, Unreduced, Subsumed, Violated, Reached and
	// OmissionBound are BFSResult's, as the level began.
	States        uint64   `json:"states"`
	Transitions   uint64   `json:"transitions"`
	Unreduced     uint64   `json:"unreduced"`
	Subsumed      uint64   `json:"subsumed,omitempty"`
	Violated      spec.Set `json:"-"`
	ViolatedIDs   []string `json:"violated"`
	Reached       Coverage `json:"reached"`
	OmissionBound float64  `json:"omissionBound"`
}

// Shortest is a shortest counterexample of one invariant.
type Shortest struct {
	Invariant string `json:"invariant"`
	// Length is the number of actions; Trace their text form (a replayable
	// trace, see model.ParseAction).
	Length int        `json:"length"`
	Trace  []string   `json:"trace"`
	Run    *model.Run `json:"-"`
}

// chunkStates is how many states of a level one task expands: fixed, so
// that no result depends on the number of goroutines.
const chunkStates = 64

// maxInvariants bounds the invariants a spec.Set can hold.
const maxInvariants = 16

// BFS explores every state of m reachable from m.Init() within the
// config's bounds (and opt.MaxDepth), level by level, judging every
// transition with spec.Judge. Unless opt.Exhaustive, it stops at the first
// level that has a transition violating an invariant in opt.Stop and
// returns the first such transition in a fixed order (by its parent's
// discovery index, then by the action's index in Enabled) as a shortest
// counterexample. The result is the same whatever the number of
// goroutines; on cancellation of ctx it holds the levels completed.
//
// With model.ReduceDeadDelivered, whose depths count no delivery of a dead
// reply, a search that found a violation searches again without it, to
// the length of the longest counterexample found (BFSResult.Again), and
// reports that search's verdicts and shortest counterexamples: those of a
// search without it.
func BFS(ctx context.Context, m *model.Machine, opt BFSOptions) BFSResult {
	res := newBFS(m, opt).run(ctx)
	if m.Applies(opt.Reduce)&model.ReduceDeadDelivered != 0 && len(res.Shortest) > 0 && res.Stopped != StopError {
		res = searchAgain(ctx, m, opt, res)
	}
	return res
}

// edge names a transition: the action of index act in Enabled of the
// state of discovery index parent; ok tells that it is set.
type edge struct {
	parent uint32
	act    uint16
	ok     bool
}

// cand is a successor, waiting to be merged.
// Its key (the canonical state's Encode) is in the chunk's keys at off:
// the key is all the next level keeps of a new state, which Decode
// restores when the level is expanded.
type cand struct {
	hash   hash
	parent uint32
	act    uint16
	orbit  uint8 // at most 4!·3!
	off    uint32
	key    uint16 // length of the key
}

const candSize = uint64(unsafe.Sizeof(cand{})) // bytes of a cand

// chunkOut is what expanding one chunk produced.
type chunkOut struct {
	cands    []cand
	keys     []byte
	used     uint64 // bytes of cands and keys before dropStored
	violated spec.Set
	counts   [maxInvariants]uint64 // the chunk's transitions violating each invariant
	trans    uint64
	probes   uint64              // lookups of simulating states (ReduceBudgets, ReduceAges)
	reached  Coverage            // transitions that reached each scene
	stop     edge                // the chunk's first transition violating a stop invariant
	first    [maxInvariants]edge // the chunk's first violation of each invariant
	fault    *Fault              // the step at which a design's decision failed (stop is set)
	_        [64]byte            // so that two goroutines' chunks share no cache line
}

// expander is one goroutine's scratch space.
type expander struct {
	canon *model.Canon
	acts  []model.Action
	news  []newState // the new states it inserted (merge)
	s, t  model.State
	y     model.State // a younger successor (ReduceAges)
	ykey  []byte      // and its key
	skey  []byte      // a copy of a stored state's key, for LessSpent to edit (subsume)
	// kept maps the hash (its low word) of each successor the chunk kept so far to its
	// index in the chunk's candidates: a state simulating a new one may be
	// among them (ReduceBudgets, ReduceAges), as a state's siblings are.
	kept map[uint64]int32
	// A state's successors, before keepNew keeps the new ones, and their
	// states (ReduceAges reads them); the states that may simulate them:
	// with a fault less spent (ReduceBudgets), with requests a tick
	// younger (ReduceAges).
	pend        batch
	ts          []model.State
	less, young batch
	sink        byte     // what the warm-up loads read, kept so that they are not elided
	act         int      // the action of acts being taken, -1 while they are being listed (a Fault's)
	_           [64]byte // so that two goroutines' expanders share no cache line
}

// batch is keys to be looked up in the visited set together (lookUp).
type batch struct {
	ls   []lookup
	keys []byte
}

// lookup is a key of a batch, at off in its keys, and what was found.
type lookup struct {
	hash  hash
	off   uint32
	key   uint16 // length of the key
	act   uint16 // a successor's action
	orbit uint8  // and its orbit's size
	found bool   // the visited set holds it
	// A successor's states with a fault less spent and with younger
	// requests, in expander.less and expander.young: [from, to).
	less, young [2]int32
}

// reset empties the batch.
func (q *batch) reset() { q.ls, q.keys = q.ls[:0], q.keys[:0] }

// key returns the key of l, one of the batch's.
func (q *batch) key(l *lookup) []byte { return q.keys[l.off : l.off+uint32(l.key)] }

// add adds key, to be looked up, and returns false, so that LessSpent and
// Younger, given it, go on to the next.
func (q *batch) add(key []byte) bool {
	q.ls = append(q.ls, lookup{off: uint32(len(q.keys)), key: uint16(len(key)), hash: hashKey(key)})
	q.keys = append(q.keys, key...)
	return false
}

// span is the range of q's lookups that follow from, up to the last.
func (q *batch) span(from int32) [2]int32 { return [2]int32{from, int32(len(q.ls))} }

// insertGroup is how many successors the merge inserts into the visited
// set together: their table slots (and keys) are loaded first, all at
// once, so that the cache misses overlap instead of following one another.
const insertGroup = 16

type bfs struct {
	fault *Fault // the step at which a design's decision failed, which ended the search
	m     *model.Machine
	opt   BFSOptions
	stop  spec.Set
	gor   int
	start time.Time

	front arena // keys of the last two levels' states, those not in the visited set's arenas
	seen  *stateSet
	paths pathStore

	cur       []uint64 // references to the keys (see key) of the level being expanded
	next      []uint64 // and of the next level
	curStart  uint32   // discovery index of its first state
	curStride uint32   // and between two of its states (1 but after keepShare)
	// skip has a word per chunk of the level being expanded, a bit per
	// state: subsumed, not expanded (see subsume). curChunk is the chunk
	// of b.cur[0] (not 0 when the level is read from disk a batch at a time).
	skip      []uint64
	curChunk  int
	subsumed  uint64 // the states subsume marked, over the search
	depth     int
	outs      []chunkOut
	moves     []move // the batch's new states' keys, to copy to the next level
	exps      []expander
	unreduced uint64
	trans     uint64
	// counts is, for each invariant, the judged transitions that violate
	// it (BFSResult.Violations); countsLost, that the search resumed from a
	// checkpoint that did not save them
	counts     [maxInvariants]uint64
	countsLost bool
	budgets    bool   // ReduceBudgets applies
	ages       bool   // ReduceAges applies
	simulated  bool   // either: a successor is looked up while its chunk expands
	probes     uint64 // their lookups and subsume's
	// omission is the omission bound (BFSResult.OmissionBound) so far:
	// the sum, over the lookups made with hash compaction, of the number
	// of stored states each was expected to match wrongly. The lookups of
	// simulating states add stateSet.matchMass when they were made, those
	// that stored a state what the merge after them takes (takeLooked).
	omission float64
	reached  Coverage
	violated spec.Set
	levels   []uint64
	first    [maxInvariants]edge // first violation of each invariant

	expanded     atomic.Uint64 // states of the current level done
	marked       atomic.Uint64 // and checked for subsumption (see subsume)
	lastProgress time.Time
	mem          heapBudget // opt.MaxMemory, and the heap sampled
	compactedAt  uint64     // states stored when the set switched to hash compaction
	denseAt      uint64     // states stored when the tables were first let fill to 7/8
	layeredAt    uint64     // states stored when the first layer was set (see layer)
	lastFresh    uint64     // new states of the last batch merged
	chunkUse     uint64     // bytes of candidates a chunk of the last batch kept, on average
	outsCap      uint64     // bytes the chunks' candidate buffers hold
	peakFrontier uint64
	disk         disk  // checkpoints and spilled levels
	crew         *crew // the goroutines but the caller's (parallel)
}

func newBFS(m *model.Machine, opt BFSOptions) *bfs {
	b := &bfs{m: m, opt: opt, stop: opt.Stop, gor: opt.Goroutines, mem: heapBudget{max: opt.MaxMemory}}
	if b.stop == 0 {
		b.stop = ^spec.Set(0)
	}
	if opt.Exhaustive {
		b.stop = 0
	}
	if b.gor <= 0 {
		b.gor = runtime.GOMAXPROCS(0)
	}
	if b.opt.ProgressEvery <= 0 {
		b.opt.ProgressEvery = time.Second
	}
	if b.opt.Shard.N > 1 {
		b.opt.Shard.Depth = max(b.opt.Shard.Depth, 1) // level 0 is the one initial state
	}
	b.seen = newStateSet(opt.HashCompact)
	b.budgets = m.Applies(opt.Reduce)&model.ReduceBudgets != 0
	b.ages = m.Applies(opt.Reduce)&model.ReduceAges != 0
	b.simulated = b.budgets || b.ages
	b.exps = make([]expander, b.gor)
	for i := range b.exps {
		b.exps[i] = expander{canon: m.NewCanon(opt.Symmetry), kept: map[uint64]int32{}}
	}
	return b
}

func (b *bfs) run(ctx context.Context) BFSResult {
	b.start = time.Now()
	b.lastProgress = b.start
	defer b.disk.close()
	defer func() {
		if b.crew != nil {
			b.crew.close()
			b.crew = nil
		}
	}()
	defer b.paths.close()
	init := b.m.Init()
	key, orbit := b.exps[0].canon.Key(&init, nil)
	b.seen.insert(key, hashKey(key))
	b.cur = append(b.cur, b.front.add(key)|frontRef)
	b.paths.add(0, 0)
	b.unreduced = uint64(orbit)
	b.levels = []uint64{1}
	b.curStride = 1
	if err := b.begin(); err != nil { // a checkpoint resumed replaces the initial state; Spill starts
		return BFSResult{Stopped: StopError, Err: err}
	}
	b.mem.sample() // the heap a checkpoint read takes counts, even if the search stops at once
	stopped := StopComplete
	var stop edge
	for b.levelLen() > 0 {
		b.mark() // what a checkpoint saves: the search as this level starts
		if b.opt.MaxDepth > 0 && b.depth >= b.opt.MaxDepth {
			stopped = StopDepth
			break
		}
		if b.opt.MaxStates > 0 && b.seen.len() >= b.opt.MaxStates {
			stopped = StopMaxStates
			break
		}
		if stopped = b.checkpoint(false); stopped != StopComplete {
			break
		}
		if stopped, stop = b.expandLevel(ctx); stopped != StopComplete {
			break
		}
		if sh := b.opt.Shard; sh.N > 1 && b.depth == sh.Depth {
			b.keepShare(sh)
		}
		b.startLevel() // the next level: none of it expanded yet
		b.report()
	}
	stopped = b.checkpointAtEnd(stopped)
	res := b.result(stopped)
	if stop.ok {
		if run, v := b.rebuild(stop, b.stop); run != nil {
			res.Counterexample, res.Violation = run, v
			res.ViolationIDs, res.Trace = v.IDs(), trace(run)
		}
	}
	for i := range maxInvariants {
		if e := b.first[i]; e.ok {
			if run, _ := b.rebuild(e, spec.Set(1)<<i); run != nil {
				res.Shortest = append(res.Shortest, Shortest{Invariant: (spec.Set(1) << i).IDs()[0],
					Length: len(run.Actions), Trace: trace(run), Run: run})
			}
		}
	}
	b.disk.report(&res)
	if b.disk.err != nil { // a counterexample's links could not be read, or its path replayed
		res.Stopped, res.Complete = StopError, false
	}
	if b.fault != nil {
		res.Fault, res.Stopped, res.Complete = b.fault, StopFault, false
	}
	return res
}

// keepShare keeps, of the level just reached, the states of shard sh.
func (b *bfs) keepShare(sh Shard) {
	if b.disk.cur != nil {
		b.disk.cur.share(sh)
		return
	}
	kept := b.cur[:0]
	for i, ref := range b.cur {
		if i%sh.N == sh.I {
			kept = append(kept, ref)
		}
	}
	b.cur = kept
	b.curStart += uint32(sh.I)
	b.curStride = uint32(sh.N)
}

// trace is a run's actions in text form.
func trace(run *model.Run) []string {
	acts := make([]string, len(run.Actions))
	for j, a := range run.Actions {
		acts[j] = a.String()
	}
	return acts
}

// batchChunks is how many chunks are expanded (in parallel) before their
// successors are merged (in order): it bounds the memory of candidates.
const batchChunks = 64

// expandLevel expands the current level batch by batch and makes the new
// states the next level. It returns StopComplete when the level is done,
// or why the search stops and, for a violation, its transition.
func (b *bfs) expandLevel(ctx context.Context) (string, edge) {
	n := b.levelLen()
	chunks := (n + chunkStates - 1) / chunkStates
	b.startLevel()
	if stopped := b.subsume(ctx, n); stopped != StopComplete {
		return stopped, edge{}
	}
	nextStart := uint32(b.seen.len())
	b.next = b.next[:0]
	for lo := 0; lo < chunks; lo += batchChunks {
		hi := min(lo+batchChunks, chunks)
		if b.overBudget(hi - lo) {
			if stopped := b.atBudget(lo, hi-lo); stopped != StopComplete {
				return stopped, edge{}
			}
		}
		wlo, whi, ok := b.window(lo, hi) // the batch's chunks as b.cur holds them
		if !ok {
			return StopError, edge{}
		}
		winner := b.expandBatch(ctx, wlo, whi)
		if ctx.Err() != nil {
			return StopCancelled, edge{}
		}
		if winner < whi {
			b.outs = b.outs[:winner-wlo+1] // later chunks may be partly done: ignored
			b.collect()
			if f := b.outs[winner-wlo].fault; f != nil {
				b.fault = f
				return StopFault, edge{}
			}
			return StopViolation, b.outs[winner-wlo].stop
		}
		b.collect()
		b.merge()
		if err := b.paths.err; err != nil {
			b.disk.fail(err)
			return StopError, edge{}
		}
	}
	return b.switchLevel(nextStart), edge{}
}

// subsume marks, in b.skip, the states of the level about to be expanded,
// of n states, that a state stored at this depth or lower simulates: the
// same state with a fault less spent (ReduceBudgets) or with requests a
// tick younger (ReduceAges), which the expansion that stored them looked
// for only among what was stored then. The simulating state is expanded
// at its own depth, or is marked itself and simulated in turn by one with
// less spent or younger still, which is; so every step from a marked state
// is matched from a state no deeper, with the same fact and every verdict,
// and every violation is found, as soon. The marked states stay stored:
// the transitions into them were judged, and they are not stored again.
// No goroutine inserts while it runs, so the marks do not depend on their
// number. It returns StopComplete, StopCancelled when ctx is done, or
// StopError on a file error (b.disk.err).
func (b *bfs) subsume(ctx context.Context, n int) string {
	b.skip = b.skip[:0]
	if !b.marks() { // startLevel counted the level marked
		return StopComplete
	}
	chunks := (n + chunkStates - 1) / chunkStates
	b.skip = slices.Grow(b.skip, chunks)[:chunks]
	clear(b.skip)
	var r *levelReader
	if b.disk.cur != nil {
		r = b.disk.cur.again() // the expansion reads the level after this
	}
	var probes, marked atomic.Uint64
	for lo := 0; lo < chunks; lo += batchChunks {
		hi := min(lo+batchChunks, chunks)
		first := 0 // the chunk of b.cur[0]
		if r != nil {
			if !b.load(r, lo, hi) {
				return StopError
			}
			first = lo
		}
		b.eachChunk(ctx, lo, hi, func(e *expander, k int) bool {
			states := min(chunkStates, n-k*chunkStates)
			marks, p := b.simulatedStored(e, b.cur[(k-first)*chunkStates:][:states])
			b.skip[k] = marks // a word per chunk: no two goroutines write one
			probes.Add(p)
			marked.Add(uint64(bits.OnesCount64(marks)))
			b.marked.Add(uint64(states))
			return true
		})
		if ctx.Err() != nil {
			return StopCancelled // the level's marks are incomplete: it is not expanded
		}
	}
	b.countProbes(probes.Load())
	b.subsumed += marked.Load()
	return StopComplete
}

// simulatedStored returns the marks (bit i for refs[i]) of the stored
// states of refs (at most chunkStates) that a state simulating them, other
// than themselves, is stored (see subsume): one with a fault less spent
// (ReduceBudgets) or with requests a tick younger (ReduceAges). It returns
// the lookups it counts too: those that looking the simulating states up
// one after another, in the order LessSpent and Younger give them, up to
// the first found, would make. It makes them a group at a time instead
// (see lookUp), so that their cache misses overlap.
func (b *bfs) simulatedStored(e *expander, refs []uint64) (marks, probes uint64) {
	var spans [chunkStates][2]int32 // state i's simulating states, in q
	look := func(q *batch, collect func(i int)) {
		q.reset()
		for i := range refs {
			from := int32(len(q.ls))
			if marks>>i&1 == 0 {
				collect(i)
			}
			spans[i] = q.span(from)
		}
		b.lookUp(e, q)
		for i := range refs {
			if firstFound(e, nil, q, spans[i], &probes) {
				marks |= 1 << i
			}
		}
	}
	if b.budgets {
		look(&e.less, func(i int) {
			e.skey = append(e.skey[:0], b.key(refs[i])...) // LessSpent edits it; the key is shared
			b.m.LessSpent(e.skey, e.less.add)
		})
	}
	if b.ages {
		look(&e.young, func(i int) {
			if err := b.m.Decode(b.key(refs[i]), &e.s); err != nil {
				panic(err) // the arena holds what Encode wrote
			}
			b.youngerBy(e, &e.s, e.young.add)
		})
	}
	return marks, probes
}

// youngerBy reports whether stored holds s with requests a tick younger
// (ReduceAges).
func (b *bfs) youngerBy(e *expander, s *model.State, stored func(k []byte) bool) bool {
	return b.ages && b.m.Younger(s, &e.y, func(y *model.State) bool {
		e.ykey, _ = e.canon.Key(y, e.ykey[:0])
		return stored(e.ykey)
	})
}

// marks reports whether subsume looks for states to mark in the level
// about to be expanded.
func (b *bfs) marks() bool { return b.simulated && b.depth > 0 }

// startLevel counts none of the level about to be expanded as expanded,
// and none as marked if subsume is to mark it (all otherwise).
func (b *bfs) startLevel() {
	b.expanded.Store(0)
	b.marked.Store(0)
	if !b.marks() {
		b.marked.Store(uint64(b.levelLen()))
	}
}

// eachChunk calls f(e, k) for every chunk k in [lo, hi) of the current
// level, on up to b.gor goroutines, each taking the next chunk not yet
// taken and calling f with its expander; the first goroutine reports
// progress after each of its chunks. A goroutine stops taking chunks when
// ctx is done or f returns false.
func (b *bfs) eachChunk(ctx context.Context, lo, hi int, f func(e *expander, k int) bool) {
	var next atomic.Int64
	next.Store(int64(lo))
	b.parallel(min(b.gor, hi-lo), func(e *expander, g int) {
		for k := int(next.Add(1) - 1); k < hi && ctx.Err() == nil; k = int(next.Add(1) - 1) {
			if !f(e, k) {
				return
			}
			if g == 0 {
				b.tick()
			}
		}
	})
}

// expandBatch expands chunks [lo, hi) of the current level into b.outs, in
// parallel, and returns the first chunk with a stop violation, or hi.
func (b *bfs) expandBatch(ctx context.Context, lo, hi int) int {
	n := len(b.cur)
	if cap(b.outs) < hi-lo {
		b.outs = make([]chunkOut, batchChunks)
	}
	b.outs = b.outs[:hi-lo]
	var first atomic.Int64 // the least chunk with a stop violation
	first.Store(int64(hi))
	b.eachChunk(ctx, lo, hi, func(e *expander, k int) bool {
		if int64(k) > first.Load() {
			return false // a chunk before it stops the search
		}
		out := &b.outs[k-lo]
		b.expandGuarded(e, k, out)
		for out.stop.ok {
			f := first.Load()
			if int64(k) >= f || first.CompareAndSwap(f, int64(k)) {
				break
			}
		}
		b.expanded.Add(uint64(min(chunkStates, n-k*chunkStates)))
		return true
	})
	var front, used uint64
	for k := range b.outs {
		used += b.outs[k].used
	}
	for _, out := range b.outs[:cap(b.outs)] {
		front += uint64(cap(out.keys)) + uint64(cap(out.cands))*candSize
	}
	b.chunkUse, b.outsCap = used/uint64(hi-lo), front
	front += uint64(cap(b.cur)+cap(b.next))*8 + b.front.held
	b.peakFrontier = max(b.peakFrontier, front)
	return int(first.Load())
}

// expandGuarded is expandChunk, noting a step at which a design's
// decision failed in out.fault (and out.stop, so that the least such
// chunk, or one with a stop violation before it, ends the search).
func (b *bfs) expandGuarded(e *expander, k int, out *chunkOut) {
	out.fault = nil
	defer func() {
		if r := recover(); r != nil {
			var a model.Action
			if e.act >= 0 {
				a = e.acts[e.act]
			}
			out.fault, out.stop = faultOf(r, nil, a, e.act >= 0), edge{ok: true}
			out.fault.Depth = b.depth + 1
		}
	}()
	b.expandChunk(e, k, out)
}

// expandChunk expands chunk k of the current level: it judges every
// transition and keeps its successors for the merge.
func (b *bfs) expandChunk(e *expander, k int, out *chunkOut) {
	m := b.m
	out.cands, out.keys = out.cands[:0], out.keys[:0]
	out.violated, out.trans, out.probes, out.stop, out.first = 0, 0, 0, edge{}, [maxInvariants]edge{}
	out.counts = [maxInvariants]uint64{}
	out.reached = Coverage{}
	lo := k * chunkStates
	hi := min(lo+chunkStates, len(b.cur))
	var skip uint64
	if len(b.skip) > 0 {
		skip = b.skip[b.curChunk+k]
	}
	s, t := &e.s, &e.t
	// A state that simulates a successor is stored already, or one of
	// the successors this chunk kept, which the merge stores at this depth
	// unless it finds it stored at a lower one. The visited set is read
	// here, while no goroutine inserts: the merge follows the batch.
	clear(e.kept)
	for i := lo; i < hi; i++ {
		if skip>>(i-lo)&1 != 0 {
			continue
		}
		if err := m.Decode(b.key(b.cur[i]), s); err != nil {
			panic(err) // the arena holds what Encode wrote
		}
		parent := b.curStart + uint32(i)*b.curStride
		e.act = -1
		e.acts = m.Reduced(s, b.opt.Reduce, e.acts[:0])
		for ai := range e.acts {
			*t = *s
			e.act = ai
			f := m.Next(t, &e.acts[ai])
			out.trans++
			if f.Scenes != 0 {
				out.reached.Add(f.Scenes)
			}
			if f.Kind != model.NoFact {
				if v := spec.Judge(m, s, f, t); v != 0 {
					b.noteViolation(out, v, edge{parent: parent, act: uint16(ai), ok: true})
				}
			}
			if out.stop.ok {
				continue // this level ends the search: no successor is needed
			}
			m.Normalize(t, b.opt.Reduce)
			if b.simulated {
				q := &e.pend
				start := len(q.keys)
				var orbit int
				q.keys, orbit = e.canon.Key(t, q.keys)
				q.ls = append(q.ls, lookup{off: uint32(start), key: uint16(len(q.keys) - start),
					act: uint16(ai), orbit: uint8(orbit)})
				if b.ages {
					e.ts = append(e.ts, *t)
				}
				continue
			}
			start := len(out.keys)
			var orbit int
			out.keys, orbit = e.canon.Key(t, out.keys)
			out.addCand(parent, uint16(ai), uint8(orbit), start, hash{})
		}
		if b.simulated {
			b.keepNew(e, out, parent)
		}
	}
	out.used = uint64(len(out.keys)) + uint64(len(out.cands))*candSize
	if b.simulated {
		return // hashed, and looked up, as each was kept
	}
	// Hashed apart, not as each key is written: a key read right after its
	// bytes were stored, a few at a time, waits for the stores to finish.
	for i := range out.cands {
		c := &out.cands[i]
		c.hash = hashKey(out.keys[c.off : c.off+uint32(c.key)])
	}
	if b.gor > 1 {
		b.dropStored(e, out)
	}
}

// addCand appends a successor whose key the chunk's keys hold from start
// on.
func (out *chunkOut) addCand(parent uint32, act uint16, orbit uint8, start int, sum hash) {
	// Written in place, a field at a time: a cand built on the stack and
	// copied in is reloaded as a whole from its narrower stores, which
	// waits for every store before it (Encode's) to finish.
	out.cands = append(out.cands, cand{})
	c := &out.cands[len(out.cands)-1]
	c.parent, c.act, c.orbit = parent, act, orbit
	c.off, c.key, c.hash = uint32(start), uint16(len(out.keys)-start), sum
}

// keepNew keeps, of the successors of one state (e.pend), those that are
// new: neither kept by the chunk already, nor stored, nor simulated by a
// state that is (ReduceBudgets, ReduceAges). The visited set's lookups of
// the successors, then of their states with a fault less spent, then of
// those with younger requests, are made a group at a time (see lookUp),
// so that their cache misses overlap; then each successor is decided in
// order, reading the results as one lookup after another would have read
// them: the successors kept, and the lookups counted (out.probes), are
// the same.
func (b *bfs) keepNew(e *expander, out *chunkOut, parent uint32) {
	q := &e.pend
	for i := range q.ls {
		l := &q.ls[i]
		l.hash = hashKey(q.key(l))
	}
	b.lookUp(e, q)
	e.less.reset()
	for i := range q.ls {
		l := &q.ls[i]
		from := int32(len(e.less.ls))
		if b.budgets && !l.found {
			b.m.LessSpent(q.key(l), e.less.add)
		}
		l.less = e.less.span(from)
	}
	b.lookUp(e, &e.less)
	e.young.reset()
	for i := range q.ls {
		l := &q.ls[i]
		from := int32(len(e.young.ls))
		// A successor stored, or with a state with less spent stored, is
		// decided before its younger states are looked up.
		if b.ages && !l.found && !anyFound(e.less.ls[l.less[0]:l.less[1]]) {
			b.youngerBy(e, &e.ts[i], e.young.add)
		}
		l.young = e.young.span(from)
	}
	b.lookUp(e, &e.young)
	for i := range q.ls {
		l := &q.ls[i]
		key := q.key(l)
		if kept(e, out, key, l.hash) || l.found ||
			firstFound(e, out, &e.less, l.less, &out.probes) || firstFound(e, out, &e.young, l.young, &out.probes) {
			continue // kept or stored already, or simulated by a state that is
		}
		if _, ok := e.kept[l.hash.Lo]; !ok {
			e.kept[l.hash.Lo] = int32(len(out.cands))
		}
		start := len(out.keys)
		out.keys = append(out.keys, key...)
		out.addCand(parent, l.act, l.orbit, start, l.hash)
	}
	q.reset()
	e.ts = e.ts[:0]
}

// anyFound reports whether the visited set holds one of ls.
func anyFound(ls []lookup) bool {
	for i := range ls {
		if ls[i].found {
			return true
		}
	}
	return false
}

// firstFound reports whether one of the lookups span of q, a state's
// simulating states in the order they were collected, was kept by the
// chunk out (when not nil) or found stored, taking them in that order and
// counting in *probes each looked up, as looking them up one after
// another would.
func firstFound(e *expander, out *chunkOut, q *batch, span [2]int32, probes *uint64) bool {
	for i := span[0]; i < span[1]; i++ {
		l := &q.ls[i]
		if out != nil && kept(e, out, q.key(l), l.hash) {
			return true
		}
		*probes++
		if l.found {
			return true
		}
	}
	return false
}

// lookUp sets the found of each of q's lookups: whether the visited set
// holds its key. It loads a group's table slots first (see warm).
func (b *bfs) lookUp(e *expander, q *batch) {
	ls := q.ls
	var sums [insertGroup]hash
	for lo := 0; lo < len(ls); lo += insertGroup {
		group := ls[lo:min(lo+insertGroup, len(ls))]
		for i := range group {
			sums[i] = group[i].hash
		}
		b.warm(e, sums[:len(group)])
		for i := range group {
			l := &group[i]
			l.found = b.seen.has(q.key(l), l.hash)
		}
	}
}

// dropStored removes from the chunk out the successors that the visited
// set holds already (most of them: a state is reached by several
// transitions), looking them up while no goroutine inserts, a group at a
// time as the merge does (see warm). The merge then reads only the rest,
// so that little of what this goroutine wrote crosses to another core's
// cache: writing again over lines another core has read waits for that
// core to let them go, which made two goroutines' expansion no faster
// than one's. The merge would have found the same ones stored (a
// hash-compact lookup that matches an entry now matches it then too), so
// the search and its omission bound are the same with one goroutine,
// which does without it.
func (b *bfs) dropStored(e *expander, out *chunkOut) {
	kept, used := 0, uint32(0) // candidates and key bytes kept
	var sums [insertGroup]hash
	for lo := 0; lo < len(out.cands); lo += insertGroup {
		group := out.cands[lo:min(lo+insertGroup, len(out.cands))]
		for i := range group {
			sums[i] = group[i].hash
		}
		b.warm(e, sums[:len(group)])
		for _, c := range group { // a copy: kept <= lo+i may overwrite group[i]
			key := out.keys[c.off : c.off+uint32(c.key)]
			if b.seen.has(key, c.hash) {
				continue
			}
			copy(out.keys[used:], key) // used <= c.off: no key not yet read is overwritten
			c.off, used = used, used+uint32(c.key)
			out.cands[kept] = c
			kept++
		}
	}
	out.cands, out.keys = out.cands[:kept], out.keys[:used]
}

// warm loads the table slots of the hashes sums, the older tables' too
// (layers), and in exact mode the key each slot may hold, before they are
// looked up: the cache misses of a group overlap instead of following one
// another.
func (b *bfs) warm(e *expander, sums []hash) {
	var slot [insertGroup]uint64
	for i, h := range sums {
		p := b.seen.parts[part(h)]
		slot[i] = p.home(h)
		if len(p.older) > 0 {
			e.sink ^= byte(p.olderHomes(h))
		}
	}
	for i, h := range sums {
		e.sink ^= b.seen.touch(slot[i], h)
	}
}

// kept reports whether key, whose hash is h, is the key of a successor
// that the chunk out expands kept.
func kept(e *expander, out *chunkOut, key []byte, h hash) bool {
	i, ok := e.kept[h.Lo]
	if !ok {
		return false
	}
	c := &out.cands[i]
	return string(out.keys[c.off:c.off+uint32(c.key)]) == string(key)
}

func (b *bfs) noteViolation(out *chunkOut, v spec.Set, e edge) {
	out.violated |= v
	for i := range maxInvariants {
		if v&(1<<i) != 0 {
			out.counts[i]++
			if !out.first[i].ok {
				out.first[i] = e
			}
		}
	}
	if v&b.stop != 0 && !out.stop.ok {
		out.stop = e
	}
}

// countProbes counts p lookups of simulating states, made while no
// goroutine inserted (the visited set held what it holds now).
func (b *bfs) countProbes(p uint64) {
	b.probes += p
	b.omission += float64(p) * b.seen.matchMass()
}

// collect adds the level's chunks' counts and violations, in chunk order.
func (b *bfs) collect() {
	for k := range b.outs {
		out := &b.outs[k]
		b.violated |= out.violated
		b.trans += out.trans
		for i, n := range out.counts {
			b.counts[i] += n
		}
		b.countProbes(out.probes)
		b.reached.Merge(out.reached)
		for i := range maxInvariants {
			if out.first[i].ok && !b.first[i].ok {
				b.first[i] = out.first[i]
			}
		}
	}
}

// frontRef marks a reference to a key in the front arena (its offset).
// Without it, a reference is one to a key in the visited set's arenas
// (stateSet.store): the level an exact search makes in memory refers to
// the keys the visited set keeps, instead of copying them. (Those arenas
// go when the set is compacted, which it is only once the frontier is on
// disk: see atBudget.)
const frontRef = 1 << 63

// key returns the key of a frontier reference.
func (b *bfs) key(ref uint64) []byte {
	if ref&frontRef != 0 {
		return b.front.key(ref &^ frontRef)
	}
	return b.seen.key(ref)
}

// newState is a successor the merge found new: which (chunk<<32 | index
// in b.outs) and, in exact mode, the reference to its key in the visited
// set.
type newState struct{ at, ref uint64 }

// insertPart inserts the batch's successors of the parts of goroutine j
// of the merge (part % goroutines == j) into the visited set, in chunk
// order, and notes in e.news which were new.
func (b *bfs) insertPart(e *expander, j int) {
	g := min(b.gor, setParts)
	var group [insertGroup]uint64 // chunk<<32 | index
	var keys [insertGroup][]byte
	var sums [insertGroup]hash
	e.news = e.news[:0]
	n := 0
	flush := func() {
		b.warm(e, sums[:n])
		for i := range n {
			if ref, added := b.seen.store(keys[i], sums[i]); added {
				e.news = append(e.news, newState{at: group[i], ref: ref})
			}
		}
		n = 0
	}
	for k := range b.outs {
		out := &b.outs[k]
		for i, c := range out.cands {
			if part(c.hash)%g != j {
				continue
			}
			group[n], keys[n], sums[n] = uint64(k)<<32|uint64(i), out.keys[c.off:c.off+uint32(c.key)], c.hash
			if n++; n == insertGroup {
				flush()
			}
		}
	}
	flush()
}

// parallel runs f(&b.exps[i], i) for i in [0, g), on g goroutines: the
// caller's and, for g > 1, the search's crew (started at the first call).
func (b *bfs) parallel(g int, f func(e *expander, i int)) {
	if g == 1 {
		f(&b.exps[0], 0)
		return
	}
	if b.crew == nil {
		b.crew = newCrew(b.gor - 1)
	}
	b.crew.run(g, func(i int) { f(&b.exps[i], i) })
}

// move is a new state's key to copy to the front arena, at off.
type move struct {
	key []byte
	off uint64
}

// merge inserts the batch's successors into the visited set and appends
// the new ones to the next level, in three steps. The set's parts are
// filled in parallel, each goroutine's parts with their successors in
// chunk order, a group at a time (see insertGroup), each goroutine noting
// which were new; the new states are numbered in chunk order, merging the
// goroutines' notes; in hash-compact mode, which keeps no keys in the
// visited set, their keys are copied to the front arena in parallel.
func (b *bfs) merge() {
	g := min(b.gor, setParts)
	b.parallel(g, b.insertPart)
	fresh := b.nextLen()
	spill := b.disk.next // the next level's file, once the frontier is on disk
	b.moves = b.moves[:0]
	var taken [setParts]int // of each goroutine's notes
	for {
		j, next := -1, newState{} // the goroutine whose next new state comes first, and that state
		for i := range g {
			if news := b.exps[i].news; taken[i] < len(news) && (j < 0 || news[taken[i]].at < next.at) {
				j, next = i, news[taken[i]]
			}
		}
		if j < 0 {
			break
		}
		taken[j]++
		out := &b.outs[next.at>>32]
		c := &out.cands[uint32(next.at)]
		key := out.keys[c.off : c.off+uint32(c.key)]
		switch {
		case spill != nil:
			spill.add(key)
		case !b.opt.HashCompact:
			b.next = append(b.next, next.ref) // the visited set has the key
		default:
			off := b.front.reserve(len(key))
			b.next = append(b.next, off|frontRef)
			b.moves = append(b.moves, move{key: key, off: off})
		}
		b.paths.add(c.parent, c.act)
		b.unreduced += uint64(c.orbit)
	}
	b.parallel(g, func(_ *expander, i int) {
		n := len(b.moves)
		for _, mv := range b.moves[i*n/g : (i+1)*n/g] {
			b.front.put(mv.off, mv.key)
		}
	})
	b.omission += b.seen.takeLooked()
	b.lastFresh = b.nextLen() - fresh
	if b.seen.len() > 1<<32-1 {
		panic("checker: more than 2^32 states")
	}
	b.mem.sample()
}

// overBudget samples the heap and reports whether it, with what the next
// batch, of n chunks, may allocate at once, reaches opt.MaxMemory.
func (b *bfs) overBudget(n int) bool { return b.mem.over(b.batchGrowth(n)) }

// compactAtBudget switches an exact search that met its memory budget to
// hash compaction, if the options allow it, and reports whether it is now
// within the budget.
func (b *bfs) compactAtBudget(n int) bool {
	if b.opt.HashCompact || !b.opt.CompactAtBudget {
		return false
	}
	b.compactedAt = b.seen.len()
	b.seen.compact()
	b.opt.HashCompact = true
	b.mem.collect()
	return b.mem.heap+b.batchGrowth(n) < b.opt.MaxMemory
}

// densify lets a hash-compact search that met its memory budget, where
// some table would double in the next batch, of n chunks, fill every
// table to 7/8 before it doubles, instead of 3/4 (visited.dense), for the
// rest of the search, if the search is then within the budget, and
// reports whether it is.
//
// A table doubles when it is 3/4 full, so a search whose next doubling
// does not fit would stop with a quarter of its slots empty; dense, its
// tables hold a sixth more states in the same memory, and a lookup of a
// state not stored probes 32.5 slots on average instead of 8.5. Entries
// stored in a table that has not doubled keep one bit of their hash less
// than they would have: the omission bound counts it.
func (b *bfs) densify(n int) bool {
	if !b.opt.HashCompact {
		return false
	}
	fresh := b.batchFresh()
	if b.seen.dense() || !slices.ContainsFunc(b.seen.parts[:], func(p *visited) bool { return grows(p, fresh) }) {
		return false
	}
	if b.seen.setDense(true); b.mem.heap+b.batchGrowth(n) >= b.opt.MaxMemory {
		b.seen.setDense(false) // the search stops as it was
		return false
	}
	if b.denseAt == 0 {
		b.denseAt = b.seen.len()
	}
	return true
}

// layer lets a hash-compact search that met its memory budget, where
// some table would grow in the next batch, of n chunks, go on with
// smaller tables: each part keeps its table when it is full and stores
// what follows in a new one (a layer, visited.layer) half the size of
// what the part would have allocated, or a quarter and so on: the
// largest such that every part's next table fits the budget, since the
// hash spreads the states evenly over the parts and the first part to
// fill stops the search. It reports whether that fits; if not, or a part
// due to grow holds maxLayers tables, the parts are left as they were.
// Every table is dense first (as densify).
//
// Doubling a table needs twice its memory, so a search whose tables no
// longer double would stop with up to half its budget holding nothing;
// layers fill it, halving, with about as many states as it holds. A
// lookup reads every table of its part: a state not stored probes one
// more table for each layer, and its share of the omission bound grows
// by about 0.875·2^-51 a layer (each entry of a table half the size keeps
// a bit of its hash less).
func (b *bfs) layer(n int) bool {
	if !b.opt.HashCompact {
		return false
	}
	dense := b.seen.dense()
	b.seen.setDense(true)
	fresh := b.batchFresh()
	var parts []*visited // those that can begin a layer
	var was, most []uint // each one's layer, and the largest its next may be
	for _, p := range b.seen.parts {
		if len(p.older)+1 >= maxLayers {
			if grows(p, fresh) {
				parts = nil
				break
			}
			continue
		}
		parts, was, most = append(parts, p), append(was, p.layer), append(most, p.growBits()-1)
	}
	for k := slices.Max(append(most, 0)); len(parts) > 0 && k >= minTableBits; k-- {
		var later uint64 // the next tables of the parts not due to grow in the batch
		for i, p := range parts {
			if p.layer = min(k, most[i]); !grows(p, fresh) {
				later += 8 << p.layer
			}
		}
		if b.mem.heap+b.batchGrowth(n)+later < b.opt.MaxMemory {
			if b.denseAt == 0 {
				b.denseAt = b.seen.len()
			}
			if b.layeredAt == 0 {
				b.layeredAt = b.seen.len()
			}
			return true
		}
	}
	for i, p := range parts {
		p.layer = was[i]
	}
	b.seen.setDense(dense) // the search stops as it was
	return false
}

// batchGrowth estimates the big allocations the next batch, of n chunks,
// may make: its chunks' candidate buffers, if n chunks as full as the
// last batch's (twice, for append's doubling) outgrow them; the tables of
// the visited set's parts that would grow and the next level's offsets
// if they outgrow their capacity, supposing the batch finds twice as many
// new states as the last one (at least a batch's worth of states); and a
// new arena chunk per part.
func (b *bfs) batchGrowth(n int) uint64 {
	fresh := b.batchFresh()
	var g uint64
	if need := 2 * uint64(n) * b.chunkUse; need > b.outsCap {
		g += need - b.outsCap
	}
	g += b.seen.growth(fresh)
	if n := uint64(len(b.next)) + fresh; n > uint64(cap(b.next)) {
		g += n * 8 * 5 / 4
	}
	if !b.opt.HashCompact {
		for i := range b.seen.arenas {
			g += b.seen.arenas[i].nextAlloc()
		}
	}
	return g + max(2<<arenaChunkBits, b.front.nextAlloc()) + fresh*6 // the frontier arena, the parent links
}

// growth is what the tables may allocate while a batch stores fresh
// states: the tables of the parts that would grow then (double, or begin
// their next layer); and in hash-compact mode, when a part doubles, the
// doubling of every part whose table is no larger and that has no layer
// set, which the hash's even spread over the parts brings soon after. So
// a search at its memory budget doubles its tables all or none: doubled
// one by one as they fit, most of them would hold empty slots that the
// parts not doubled, filling first, stop it from using.
func (s *stateSet) growth(fresh uint64) uint64 {
	var g, doubled uint64 // doubled: the largest table that doubles
	for _, p := range s.parts {
		if grows(p, fresh) {
			g += 8 << p.growBits()
			if p.growBits() > 64-p.shift {
				doubled = max(doubled, uint64(len(p.table)))
			}
		}
	}
	for _, p := range s.parts {
		if doubled > 0 && p.compact && p.layer == 0 && !grows(p, fresh) && uint64(len(p.table)) <= doubled {
			g += 8 * uint64(len(p.table)) // the new table's size, less the old one's, freed
		}
	}
	return g
}

// batchFresh is how many new states batchGrowth supposes the next batch
// may find: twice as many as the last one, and at least a batch's worth.
func (b *bfs) batchFresh() uint64 { return 2 * max(b.lastFresh, batchChunks*chunkStates) }

// grows reports whether part p's table would grow (double, or make way
// for the next layer) while a batch stores fresh states, supposing it
// takes twice its share of them.
func grows(p *visited, fresh uint64) bool { return p.outgrows(p.n + fresh/setParts*2 + 1) }

// tick reports progress when it is due; only the leading goroutine calls it.
func (b *bfs) tick() {
	if b.opt.Progress != nil && time.Since(b.lastProgress) >= b.opt.ProgressEvery {
		b.report()
	}
}

func (b *bfs) report() {
	if b.opt.Progress == nil {
		return
	}
	b.lastProgress = time.Now()
	b.mem.sample()
	el := time.Since(b.start)
	n := b.seen.len()
	b.opt.Progress(BFSProgress{States: n, Transitions: b.trans, Depth: b.depth,
		Frontier: uint64(b.levelLen()), Expanded: b.expanded.Load(), Marked: b.marked.Load(), Elapsed: el,
		Rate: float64(n) / max(el.Seconds(), 1e-9), Heap: b.mem.heap, MaxMemory: b.opt.MaxMemory,
		OnDisk: b.disk.cur != nil || b.disk.next != nil, CompactedAt: b.compactedAt, DenseAt: b.denseAt,
		LayeredAt: b.layeredAt, Projection: Project(b.levels)})
}

func (b *bfs) result(stopped string) BFSResult {
	el := time.Since(b.start)
	n := b.seen.len()
	r := BFSResult{Stopped: stopped, Complete: stopped == StopComplete, States: n, Transitions: b.trans,
		MaxDepth: len(b.levels) - 1, Levels: b.levels, Unreduced: b.unreduced,
		Reduction: float64(b.unreduced) / float64(n), Violated: b.violated, ViolatedIDs: b.violated.IDs(),
		Elapsed: el, Rate: float64(n) / max(el.Seconds(), 1e-9), FrontierBytes: b.peakFrontier,
		PeakHeapBytes: b.mem.peak, HashCompact: b.opt.HashCompact, Reductions: b.m.Applies(b.opt.Reduce).String(), Subsumed: b.subsumed, Probes: b.probes, CompactedAt: b.compactedAt, DenseAt: b.denseAt, LayeredAt: b.layeredAt, Shard: b.opt.Shard, Reached: b.reached}
	r.StoredBytes = b.seen.bytes() + b.paths.bytes()
	if b.opt.HashCompact {
		r.OmissionBound = min(1, b.omission)
	}
	if !b.countsLost {
		r.Violations = countsOf(b.counts)
	}
	r.BytesPerState = float64(r.StoredBytes) / float64(n)
	if stopped == StopMaxStates || stopped == StopCancelled || stopped == StopMemory {
		p := Project(b.levels)
		r.Projection = &p
		if b.depth > 0 {
			r.Within = b.within()
		}
	}
	return r
}

// countsOf is counts, indexed by an invariant's bit in a spec.Set, by the
// invariants' IDs; nil when every count is 0.
func countsOf(counts [maxInvariants]uint64) map[string]uint64 {
	var m map[string]uint64
	for i, n := range counts {
		if n > 0 {
			if m == nil {
				m = map[string]uint64{}
			}
			m[(spec.Set(1) << i).IDs()[0]] = n
		}
	}
	return m
}

// within is what the search had done when the level it is in began (its
// mark, taken then).
func (b *bfs) within() *Within {
	mk := &b.disk.mark
	w := &Within{Depth: b.depth, States: mk.states, Transitions: mk.trans, Unreduced: mk.unreduced, Subsumed: mk.subsumed,
		Violated: mk.violated, ViolatedIDs: mk.violated.IDs(), Reached: mk.reached}
	if b.opt.HashCompact {
		w.OmissionBound = min(1, mk.omission)
	}
	return w
}
