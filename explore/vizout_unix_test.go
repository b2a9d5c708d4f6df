//go:build unix

package explore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestVizWritesIntoWhatIsNoFile: viz -o writes a page into a named pipe
// (as into /dev/stdout, a device), and through a symbolic link to where it
// points, leaving the pipe a pipe and the link a link; it once replaced
// each with a regular file, as a rename does (and so replaced /dev/full
// when run as root). An -o that is a folder is a usage error naming it.
func TestVizWritesIntoWhatIsNoFile(t *testing.T) {
	const hist = "../histories/counterexamples/worker-clock.jsonl"
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// The reading end, opened first (not blocking: no writer yet) and read
	// once viz is done: the page (1.4 kB) fits the pipe's buffer, and a
	// viz that replaced the pipe leaves nothing to read, not a hang.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if code, _, stderr := explore(t, "viz", hist, "--format", "mermaid", "-o", fifo); code != 0 {
		t.Fatalf("into a pipe: exit %d, %s", code, stderr)
	}
	page := make([]byte, 1<<16)
	n, _ := r.Read(page)
	if !strings.Contains(string(page[:n]), "sequenceDiagram") {
		t.Errorf("the pipe's reader got %q", page[:n])
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe is no longer one: %v, %v", st.Mode(), err)
	}

	target, link := filepath.Join(dir, "page.md"), filepath.Join(dir, "link.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := explore(t, "viz", hist, "--format", "mermaid", "-o", link); code != 0 {
		t.Fatalf("through a link: exit %d, %s", code, stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer one: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || !strings.Contains(string(b), "sequenceDiagram") {
		t.Errorf("the link's target holds %q (%v)", b, err)
	}

	if code, _, stderr := explore(t, "viz", hist, "-o", dir); code != exitUsage || !strings.Contains(stderr, "-o "+dir+" is a folder") {
		t.Errorf("-o a folder: exit %d, stderr %q; want 2 naming it", code, stderr)
	}
}
