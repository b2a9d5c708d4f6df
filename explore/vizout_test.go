package explore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVizMissingFolderNamesTheOutPath: viz -o into a folder that does not
// exist fails (exit 2) naming the -o path and its folder, not the
// porcupine page it writes beside it (it said "open
// nodir/x-porcupine-job.html: no such file or directory"), and writes
// nothing; the same for a history with no porcupine page, and for a
// "folder" that is a file.
func TestVizMissingFolderNamesTheOutPath(t *testing.T) {
	dir := t.TempDir()
	for _, hist := range []string{"../histories/counterexamples/ttl-only-lock.jsonl", "../histories/counterexamples/worker-clock.jsonl"} {
		out := filepath.Join(dir, "nodir", "x.html")
		code, _, stderr := explore(t, "viz", hist, "-o", out)
		if code != exitUsage || !strings.Contains(stderr, "-o "+out+": its folder "+filepath.Join(dir, "nodir")) || strings.Contains(stderr, "porcupine") {
			t.Errorf("%s: exit %d, stderr %q: want 2 naming the -o path and its folder", hist, code, stderr)
		}
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(file, "x.html")
	if code, _, stderr := explore(t, "viz", "../histories/counterexamples/ttl-only-lock.jsonl", "-o", out); code != exitUsage ||
		!strings.Contains(stderr, "-o "+out+": "+file+" is not a folder") {
		t.Errorf("under a file: exit %d, stderr %q", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("wrote %v", entries)
	}
}
