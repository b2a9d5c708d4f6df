package viz

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencecheck/fencecheck/history"
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

	dom := dumpDOM(t, bin, page, 1400)
	m := renderedAttr.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not run: no data-violations-rendered on <body>\n%.2000s", dom)
	}
	if n, _ := strconv.Atoi(m[1]); n != marks {
		t.Errorf("%d of %d violation marks rendered with a box", n, marks)
	}
	for _, want := range []string{`data-violation="fencing"`, `<span class="inv">fencing</span>`} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %s", want)
		}
	}
}

// dumpDOM loads page in headless Chromium with a window width px wide and
// returns the DOM after the page's script ran.
func dumpDOM(t *testing.T, bin, page string, width int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(filepath.Dir(page), "profile"), "--window-size="+strconv.Itoa(width)+",1000",
		"--dump-dom", "file://"+page)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	return out.String()
}

var tagsVisible = regexp.MustCompile(`<body[^>]* data-tags-visible="(\d+)/(\d+)"`)

// TestBrowserViolatedColumnWithManyProcesses: with five workers (eight
// lanes, wider than the window) the violated column stays wholly on
// screen in windows 1400 and 1900 px wide.
func TestBrowserViolatedColumnWithManyProcesses(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	h := load(t, "fencing-violation")
	for i, w := range []string{"w3", "w4", "w5"} {
		for _, f := range []string{"pause", "resume"} {
			h.Events = append(h.Events, history.Event{Time: int64(16 + i), Process: history.Nemesis, Type: history.Info, F: f,
				Value: history.Value{Target: w}})
		}
	}
	page := filepath.Join(dir, "many.html")
	html := render(t, h, Options{Violations: fencingViolation})
	if got := lanes(t, html); len(got) != 8 {
		t.Fatalf("lanes %q, want 8", got)
	}
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1400, 1900} {
		m := tagsVisible.FindStringSubmatch(dumpDOM(t, bin, page, width))
		if m == nil {
			t.Fatalf("%d px: the page's script did not run", width)
		}
		if m[1] != m[2] || m[2] != "2" {
			t.Errorf("%d px wide: %s of %s violation tags wholly visible, want 2 of 2", width, m[1], m[2])
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
