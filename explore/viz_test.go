package explore

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// vizHostile is a string that runs script wherever a page inserts it as
// HTML rather than as text. (It has no slash: resource names with one are
// TestVizPorcupinePageNames's.)
const vizHostile = `<img src=x onerror="alert(1)">'&`

// jsonString is s as a JSON string.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// porcupineData is the data porcupine's viewer draws, as embedded in its page
// (the JSON after "const data = ").
type porcupineData struct {
	Partitions []struct {
		History []struct {
			Description, Metadata string
		}
		PartialLinearizations [][]struct{ StateDescription string }
	}
	Annotations []struct{ Tag, Description, Details, TextColor, BackgroundColor string }
}

func decodePorcupinePage(t *testing.T, path string) porcupineData {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(page, []byte("const data = "))
	if !ok {
		t.Fatalf("%s embeds no data", path)
	}
	var d porcupineData
	if err := json.NewDecoder(bytes.NewReader(rest)).Decode(&d); err != nil {
		t.Fatalf("%s: embedded data: %v", path, err)
	}
	return d
}

// TestVizPorcupinePageEscapesHistoryStrings: viz -o writes porcupine's
// picture of a resource whose sink has no linearization. Its viewer inserts
// each operation's Metadata and each state's StateDescription into a tooltip
// as HTML, so hostile worker names, result ids and payloads must arrive
// there escaped (the resource and a read's error too, if they ever reach
// it). Descriptions and lane names, which the viewer sets as text, must not
// be escaped (they would show "&lt;").
func TestVizPorcupinePageEscapesHistoryStrings(t *testing.T) {
	dir := t.TempDir()
	r := strings.NewReplacer("W1", jsonString(t, "w1"+vizHostile), "R1", jsonString(t, "reader"+vizHostile),
		"RES", jsonString(t, "job"+vizHostile), "RID", jsonString(t, "r"+vizHostile),
		"PAY", jsonString(t, "p"+vizHostile), "ERR", jsonString(t, "broken"+vizHostile))
	hist := r.Replace(`{"time":0,"process":W1,"type":"invoke","f":"acquire","resource":RES,"value":{"owner":W1,"incarnation":1,"requestId":"a1","ttl":100}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":RES,"value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":RES,"value":{"token":1}}
{"time":0,"process":W1,"type":"ok","f":"acquire","resource":RES,"value":{"token":1}}
{"time":1,"process":W1,"type":"invoke","f":"write","resource":RES,"value":{"token":1,"resultId":RID,"payload":PAY}}
{"time":1,"process":"sink","type":"info","f":"apply","resource":RES,"value":{"writer":W1,"token":1,"resultId":RID,"payload":PAY,"outcome":"written","fence":1}}
{"time":1,"process":W1,"type":"ok","f":"write","resource":RES,"value":{"outcome":"written"}}
{"time":2,"process":R1,"type":"invoke","f":"read","resource":RES,"value":{"resultId":RID}}
{"time":2,"process":R1,"type":"fail","f":"read","resource":RES,"value":{"error":ERR}}
{"time":3,"process":R1,"type":"invoke","f":"read","resource":RES,"value":{"resultId":RID}}
{"time":3,"process":R1,"type":"ok","f":"read","resource":RES,"value":{"payload":"other"}}
`)
	path := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(path, []byte(hist), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.html")
	if code, _, stderr := explore(t, "viz", path, "-o", out); code != exitOK {
		t.Fatalf("viz: exit %d: %s", code, stderr)
	}
	if page, _ := os.ReadFile(out); bytes.Contains(page, []byte("<img")) {
		t.Error("the timeline holds a hostile string unescaped")
	}
	pics, _ := filepath.Glob(filepath.Join(dir, "t-porcupine-*.html"))
	if len(pics) != 1 {
		t.Fatalf("porcupine pages %v, want 1", pics)
	}
	d := decodePorcupinePage(t, pics[0])
	// spec's TestPorcupineVisualizeEscapesHistoryStrings checks each kind of
	// string the model describes; this checks that the page viz writes is
	// made with those descriptions.
	escaped := 0
	for _, p := range d.Partitions {
		for _, e := range p.History {
			if strings.ContainsAny(e.Metadata, "<>") {
				t.Errorf("metadata %q goes into the page as HTML unescaped", e.Metadata)
			}
			if strings.Contains(e.Metadata, "&lt;img") {
				escaped++
			}
		}
	}
	if escaped == 0 {
		t.Error("no hostile process name reached the page's metadata: the test proves nothing")
	}
	// Lane names are annotations, which the viewer sets as text; their
	// colours go into a style attribute and are fixed.
	var lanes []string
	for _, a := range d.Annotations {
		lanes = append(lanes, a.Description)
		if a.Tag != "" || strings.ContainsAny(a.TextColor+a.BackgroundColor, `<>"';`) {
			t.Errorf("annotation %+v", a)
		}
	}
	if !slices.Contains(lanes, "w1"+vizHostile) || !slices.Contains(lanes, "reader"+vizHostile) {
		t.Errorf("lane names %q, want the processes' names as they are", lanes)
	}
}

// nonLinearizable is a read on resource res of a payload never written: its
// sink has no linearization.
func nonLinearizable(t *testing.T, res string, time int) string {
	t.Helper()
	return strings.NewReplacer("RES", jsonString(t, res), "T", itoa(time)).Replace(
		`{"time":T,"process":"reader","type":"invoke","f":"read","resource":RES,"value":{"resultId":"r"}}
{"time":T,"process":"reader","type":"ok","f":"read","resource":RES,"value":{"payload":"never written"}}
`)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

var linkRE = regexp.MustCompile(`<a href="([^"]*)">porcupine&#39;s linearizability picture of `)

// vizPorcupinePages runs viz -o DIR/out/t.html on a history whose resources
// all have no linearization, checks that nothing is written outside
// DIR/out and returns the porcupine pages' names there and the main page's
// links, unescaped.
func vizPorcupinePages(t *testing.T, resources []string) (names, links []string) {
	t.Helper()
	root := t.TempDir()
	var hist strings.Builder
	for i, r := range resources {
		hist.WriteString(nonLinearizable(t, r, i))
	}
	path := filepath.Join(root, "h.jsonl")
	if err := os.WriteFile(path, []byte(hist.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t.html")
	if code, _, stderr := explore(t, "viz", path, "-o", out); code != exitOK {
		t.Fatalf("viz %q: exit %d: %s", resources, code, stderr)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 2 {
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		t.Errorf("beside the output folder: %q, want h.jsonl and out only", got)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "t.html" {
			continue
		}
		if !strings.HasPrefix(e.Name(), "t-porcupine-") || !strings.HasSuffix(e.Name(), ".html") || e.IsDir() {
			t.Errorf("unexpected %q in the output folder", e.Name())
		}
		names = append(names, e.Name())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range linkRE.FindAllSubmatch(page, -1) {
		href := html.UnescapeString(string(m[1]))
		u, err := url.Parse(href)
		if err != nil || u.Scheme != "" || u.Host != "" || strings.Contains(u.Path, "/") && !strings.HasPrefix(u.Path, "./") {
			t.Errorf("link %q: not a file beside the page (%v)", href, err)
			continue
		}
		links = append(links, strings.TrimPrefix(u.Path, "./"))
	}
	slices.Sort(names)
	slices.Sort(links)
	return names, links
}

// TestVizPorcupinePageNames: the porcupine pages' file names come from the
// resources' names, which may hold any character. Each page is written
// beside the timeline under a safe name (no separator, no NUL, no leading
// dot), one page per resource even when two resources' names sanitise
// alike, the same names on every run, and the timeline links each.
func TestVizPorcupinePageNames(t *testing.T) {
	resources := []string{"jobs/42", "../x", `a b:c*?"<>|\é#%.`, "nul\x00byte", "a/b", "a:b", "a_b", "job", "Job", ".hidden", ".."}
	names, links := vizPorcupinePages(t, resources)
	if len(names) != len(resources) {
		t.Fatalf("porcupine pages %q, want one for each of %d resources", names, len(resources))
	}
	if !slices.Equal(names, links) {
		t.Errorf("the timeline links %q, want the pages %q", links, names)
	}
	lower := map[string]bool{} // a case-insensitive file system must not merge two either
	for _, n := range names {
		part := strings.TrimSuffix(strings.TrimPrefix(n, "t-porcupine-"), ".html")
		if strings.ContainsAny(part, "/\\\x00:*?\"<>|#%") || strings.HasPrefix(part, ".") || part == "" {
			t.Errorf("page %q: unsafe name", n)
		}
		if lower[strings.ToLower(n)] {
			t.Errorf("page %q: two pages differ only in case", n)
		}
		lower[strings.ToLower(n)] = true
	}
	// A plain name is kept as it is.
	for _, want := range []string{"t-porcupine-job.html", "t-porcupine-a_b.html"} {
		if !slices.Contains(names, want) {
			t.Errorf("pages %q lack %q", names, want)
		}
	}
	// The names are deterministic.
	if again, _ := vizPorcupinePages(t, resources); !slices.Equal(again, names) {
		t.Errorf("second run: pages %q, first %q", again, names)
	}
	// One resource alone gets the name it gets among others.
	if one, _ := vizPorcupinePages(t, []string{"jobs/42"}); len(one) != 1 || !slices.Contains(names, one[0]) {
		t.Errorf("jobs/42 alone: pages %q, among others: %q", one, names)
	}
}

// TestVizPorcupineLinkEscapesOutName: the timeline's link to a porcupine
// page leads to it even when OUT's name holds characters that mean
// something in a URL (a space, #, ?, %).
func TestVizPorcupineLinkEscapesOutName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.jsonl")
	if err := os.WriteFile(path, []byte(nonLinearizable(t, "job", 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run #1?%41.html")
	if code, _, stderr := explore(t, "viz", path, "-o", out); code != exitOK {
		t.Fatalf("viz: exit %d: %s", code, stderr)
	}
	want := "run #1?%41-porcupine-job.html"
	if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out)
	m := linkRE.FindSubmatch(page)
	if m == nil {
		t.Fatal("the timeline does not link porcupine's page")
	}
	if u, err := url.Parse(html.UnescapeString(string(m[1]))); err != nil || u.Path != want || u.RawQuery != "" || u.Fragment != "" {
		t.Errorf("link %q leads to %q, want %q (%v)", m[1], u, want, err)
	}
}

// TestVizPagesNeverOverwriteTheHistory: a history named as viz -o's
// porcupine page would be (t-porcupine-job-1.html beside t.html) is
// refused, as -o naming the history is; the history is left as it was
// (it was replaced by porcupine's page).
func TestVizPagesNeverOverwriteTheHistory(t *testing.T) {
	dir := t.TempDir()
	hist := []byte(nonLinearizable(t, "job-1", 0))
	path := filepath.Join(dir, "t-porcupine-job-1.html")
	if err := os.WriteFile(path, hist, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := explore(t, "viz", path, "-o", filepath.Join(dir, "t.html"))
	if code != exitUsage || !strings.Contains(stderr, "would overwrite the history read") {
		t.Errorf("exit %d, stderr %q; want 2 and the page refused", code, stderr)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, hist) {
		t.Error("the history read was overwritten")
	}
}
