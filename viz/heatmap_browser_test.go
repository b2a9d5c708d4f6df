package viz

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/fencecheck/fencecheck/internal/browser"
)

var (
	cellsRenderedAttr = regexp.MustCompile(`<body[^>]* data-cells-rendered="(\d+)"`)
	linkedViolation   = regexp.MustCompile(`<td class="cell viol[^"]*"[^>]* data-verdict="violated"[^>]*><a href="timeline.html">`)
)

// TestBrowserRendersHeatmap loads a heat map in headless Chromium and checks,
// in the DOM after the page's script ran, that every cell was laid out with
// a non-empty box and that a violated cell links to its timeline.
func TestBrowserRendersHeatmap(t *testing.T) {
	bin := browser.Chromium(t)
	dir := t.TempDir()
	g := sweepGrid()
	g.Cells[1].Link = "timeline.html" // fencing, workers=2, ttl=10: violated
	if g.Cells[1].Verdict != "violated" {
		t.Fatalf("cell 1 is %s", g.Cells[1].Verdict)
	}
	var b bytes.Buffer
	if err := Heatmap(&b, g); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "sweep.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	timeline := "<!DOCTYPE html><html><body><p>counterexample</p></body></html>\n"
	if err := os.WriteFile(filepath.Join(dir, "timeline.html"), []byte(timeline), 0o644); err != nil {
		t.Fatal(err)
	}

	dom := browser.DumpDOM(t, bin, page, 1400)
	m := cellsRenderedAttr.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not run: no data-cells-rendered on <body>\n%.2000s", dom)
	}
	if n, _ := strconv.Atoi(m[1]); n != len(g.Cells) {
		t.Errorf("%d of %d cells rendered with a box", n, len(g.Cells))
	}
	if !linkedViolation.MatchString(dom) {
		t.Errorf("rendered DOM has no violated cell linked to timeline.html\n%.3000s", dom)
	}
}
