package viz

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// chromium finds a Chromium to run headless. Debian's package "chromium"
// installs /usr/bin/chromium.
func chromium(t *testing.T) string {
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

var (
	renderedAttr = regexp.MustCompile(`<body[^>]* data-violations-rendered="(\d+)"`)
	violClass    = regexp.MustCompile(`class="[^"]*\bviol\b[^"]*"`)
)

// TestBrowserRendersViolation loads a page with a violation in headless
// Chromium and checks, in the DOM after the page's script ran, that every
// violation mark was laid out with a non-empty box.
func TestBrowserRendersViolation(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "violation.html")
	html := render(t, load(t, "fencing-violation"), Options{Violations: fencingViolation})
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	body := html[bytesIndex(t, html, `<svg class="body"`):]
	marks := len(violClass.FindAllString(body, -1))
	if marks < 4 {
		t.Fatalf("only %d violation marks in the page", marks)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1400,1000",
		"--dump-dom", "file://"+page)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	dom := out.String()
	m := renderedAttr.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not run: no data-violations-rendered on <body>\n%.2000s", dom)
	}
	if n, _ := strconv.Atoi(m[1]); n != marks {
		t.Errorf("%d of %d violation marks rendered with a box", n, marks)
	}
	for _, want := range []string{`data-violation="fencing"`, `<span class="inv">fencing</span>`} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("rendered DOM lacks %s", want)
		}
	}
}

func bytesIndex(t *testing.T, s, sub string) int {
	t.Helper()
	i := bytes.Index([]byte(s), []byte(sub))
	if i < 0 {
		t.Fatalf("no %q", sub)
	}
	return i
}
