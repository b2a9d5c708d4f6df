package viz

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/internal/browser"
)

var (
	renderedAttr = regexp.MustCompile(`<body[^>]* data-violations-rendered="(\d+)"`)
	violClass    = regexp.MustCompile(`class="[^"]*\bviol\b[^"]*"`)
)

// TestBrowserRendersViolation loads a page with a violation in headless
// Chromium and checks, in the DOM after the page's script ran, that every
// violation mark was laid out with a non-empty box.
func TestBrowserRendersViolation(t *testing.T) {
	bin := browser.Chromium(t)
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

	dom := browser.DumpDOM(t, bin, page, 1400)
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

var tagsVisible = regexp.MustCompile(`<body[^>]* data-tags-visible="(\d+)/(\d+)"`)

// TestBrowserViolatedColumnWithManyProcesses: with five workers (eight
// lanes, wider than the window) the violated column stays wholly on
// screen in windows 1400 and 1900 px wide.
func TestBrowserViolatedColumnWithManyProcesses(t *testing.T) {
	bin := browser.Chromium(t)
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
		m := tagsVisible.FindStringSubmatch(browser.DumpDOM(t, bin, page, width))
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
