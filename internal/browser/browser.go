// Package browser runs headless Chromium for the tests that check what a
// generated page looks like once its script has run.
package browser

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Chromium finds a Chromium to run headless (Debian's package "chromium"
// installs /usr/bin/chromium). Without one the test is skipped, or fails
// under CI=true, where the browser tests must run.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (Debian package chromium); CI=true requires the browser test to run")
	}
	t.Skip("chromium is not installed (Debian package chromium): skipping the browser test")
	return ""
}

// DumpDOM loads page in headless Chromium bin with a window width px wide
// and returns the DOM after the page's script ran.
func DumpDOM(t testing.TB, bin, page string, width int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--window-size="+strconv.Itoa(width)+",1000",
		"--dump-dom", "file://"+page)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	return out.String()
}
