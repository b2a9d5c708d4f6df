package explore

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fencecheck/fencecheck/checker"
)

// diskFlags are explore search's flags for checkpoints and spilled levels.
type diskFlags struct {
	checkpoint, resume, spillDir *string
	every                        *time.Duration
}

func newDiskFlags(fs *flag.FlagSet) diskFlags {
	return diskFlags{
		checkpoint: fs.String("checkpoint", "", "bfs: save the search in this directory (its file "+checker.CheckpointFile+
			", replaced atomically) as each level starts and when it stops, so that --resume goes on from there; a directory that holds a checkpoint already is refused (resume it, or remove it)"),
		resume: fs.String("resume", "", "bfs: go on from the checkpoint in this directory, saving the next ones there (unless --checkpoint); "+
			"the other flags must describe the same search (variant, bounds, --invariant, --unexpected, --hash-compact, --shard), budgets may change; the result is an uninterrupted search's"),
		every: fs.Duration("checkpoint-every", 0, "bfs: with --checkpoint, save at most once this long at the start of a level (0: every level); the search always saves when it stops"),
		spillDir: fs.String("spill-dir", "", "bfs: where the levels and the parent links go when the frontier does not fit in --max-memory "+
			"(default: the checkpoint directory, else a temporary directory removed at the end)"),
	}
}

// check refuses the flags with a random search, --checkpoint-every
// without a checkpoint directory to save in, and a --spill-dir that is a
// file (found as the search starts, not when it first spills, maybe hours
// later).
func (d diskFlags) check(mode string) error {
	if *d.every != 0 && *d.checkpoint == "" && *d.resume == "" {
		return usagef("--checkpoint-every needs --checkpoint DIR (or --resume DIR) to save in")
	}
	if mode == "bfs" {
		if st, err := os.Stat(*d.spillDir); *d.spillDir != "" && err == nil && !st.IsDir() {
			return usagef("--spill-dir: %s is a file, not a directory", *d.spillDir)
		}
		return nil
	}
	for _, f := range []struct{ name, value string }{{"checkpoint", *d.checkpoint}, {"resume", *d.resume}, {"spill-dir", *d.spillDir}} {
		if f.value != "" {
			return usagef("--%s is for --mode bfs", f.name)
		}
	}
	return nil
}

// options sets the BFS options of the flags.
func (d diskFlags) options(opt *checker.BFSOptions) {
	opt.Checkpoint, opt.Resume, opt.CheckpointEvery, opt.SpillDir = *d.checkpoint, *d.resume, *d.every, *d.spillDir
	if opt.Checkpoint == "" {
		opt.Checkpoint = opt.Resume
	}
}

// resumeCommand is the command that goes on from the checkpoint of a
// search that stopped before its end: the flags given, but --resume
// instead of --checkpoint and no --max-states if that is what stopped
// it. It is "" when there is no checkpoint.
func resumeCommand(fs *flag.FlagSet, res checker.BFSResult, dir string) string {
	if res.Checkpoint == "" {
		return ""
	}
	args := []string{"explore", "search"}
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "checkpoint" || f.Name == "resume":
			return
		case f.Name == "max-states" && res.Stopped == checker.StopMaxStates:
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v := f.Value.String(); v != "true" {
				args = append(args, "--"+f.Name+"="+v)
			} else {
				args = append(args, "--"+f.Name)
			}
			return
		}
		args = append(args, "--"+f.Name, shellQuote(f.Value.String()))
	})
	return strings.Join(append(args, "--resume", shellQuote(dir)), " ")
}

// resumeHint says, for a person, how to go on from the checkpoint of a
// search that stopped: cmd, resumeCommand's ("" when there is none).
//
// When a file could not be written (res.Err), the checkpoint is the last
// one written, and the hint says so; with none, it says that there is
// nothing to go on from.
func resumeHint(res checker.BFSResult, cmd string) string {
	if cmd == "" {
		if res.Err != nil && res.Checkpoint == "" {
			return "no checkpoint was written: nothing to go on from\n"
		}
		return ""
	}
	more := ""
	switch res.Stopped {
	case checker.StopMemory:
		more = " with a larger --max-memory"
	case checker.StopCancelled:
		more = " (with a longer --time, if that stopped it)"
	case checker.StopError:
		more = " once the file can be written (room on its disk)"
	}
	what := "checkpoint"
	if res.Err != nil {
		what = "the last checkpoint written,"
	}
	return fmt.Sprintf("%s of depth %d in %s; to go on from there%s:\n  %s\n", what, res.CheckpointDepth, res.Checkpoint, more, cmd)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./@=:,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printDisk says what a BFS kept on disk: the checkpoint it resumed from,
// the frontier it spilled, its last checkpoint.
func printDisk(w io.Writer, res checker.BFSResult) {
	if res.Resumed != "" {
		fmt.Fprintf(w, "resumed from %s (depth %d)\n", res.Resumed, res.ResumedDepth)
	}
	if res.SpilledBytes > 0 {
		fmt.Fprintf(w, "frontier spilled to disk: %s written\n", checker.FormatSize(res.SpilledBytes))
	}
	if res.Err != nil && res.Stopped != checker.StopError {
		none := ""
		if res.Checkpoint == "" {
			none = "; no checkpoint of it is on disk"
		}
		fmt.Fprintf(w, "checkpoint not saved as the search ended (its result stands): %v%s\n", res.Err, none)
	}
	switch {
	case res.Checkpoint != "" && res.Err != nil:
		fmt.Fprintf(w, "last checkpoint written: %s (depth %d)\n", res.Checkpoint, res.CheckpointDepth)
	case res.Checkpoint != "":
		fmt.Fprintf(w, "checkpoint: %s (depth %d)\n", res.Checkpoint, res.CheckpointDepth)
	}
}
