package explore

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/anishathalye/porcupine"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/spec"
	"github.com/fencecheck/fencecheck/viz"
	"github.com/google/renameio/v2"
)

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// variantRow is one line of explore variants.
type variantRow struct {
	Name     string   `json:"name"`
	Summary  string   `json:"summary"`
	Violates []string `json:"violates"`
	// AnyOf are invariants of which the variant must violate at least one
	// (spec.Expectation.AnyOf).
	AnyOf []string `json:"anyOf,omitempty"`
	May   []string `json:"may,omitempty"`
	// Params are the design's parameters (explore sweep --param, NAME@p=v).
	Params []spec.Param `json:"params,omitempty"`

	expect string // Expectation.Describe
}

func runVariants(_ context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("variants", "", "List the built-in variants: name, what it changes, what it is expected to violate.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	var rows []variantRow
	for _, v := range cat {
		rows = append(rows, variantRow{Name: v.Name, Summary: v.Summary, Violates: nonNil(v.Expect.Violates.IDs()), AnyOf: v.Expect.AnyOf.IDs(),
			May: v.Expect.May.IDs(), Params: v.Params, expect: v.Expect.Describe()})
	}
	if *jsonOut {
		return 0, writeJSON(stdout, map[string]any{"variants": rows})
	}
	return 0, printVariants(stdout, rows)
}

// listWidth is the width of the variant list: it fits a 100-column terminal.
const listWidth = 100

// printVariants prints one block per variant, wrapped to listWidth: the
// name, what it changes, then what it is expected to violate.
func printVariants(w io.Writer, rows []variantRow) error {
	nameW := 0
	for _, r := range rows {
		nameW = max(nameW, utf8.RuneCountInString(r.Name))
	}
	nameW = min(nameW+2, 28)
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		lines := wrap(r.Summary, listWidth-nameW)
		lines = append(lines, wrap("expected to violate: "+r.expect, listWidth-nameW)...)
		if len(r.May) > 0 {
			lines = append(lines, wrap("may also violate: "+strings.Join(r.May, ", "), listWidth-nameW)...)
		}
		for _, p := range r.Params {
			lines = append(lines, wrap(fmt.Sprintf("parameter %s=%d (%d..%d): %s", p.Name, p.Default, p.Min, p.Max, p.Doc), listWidth-nameW)...)
		}
		for j, l := range lines {
			name := ""
			if j == 0 {
				name = r.Name
			}
			if utf8.RuneCountInString(name) >= nameW {
				fmt.Fprintf(&b, "%s\n", name)
				name = ""
			}
			fmt.Fprintf(&b, "%-*s%s\n", nameW, name, l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap breaks text into lines of at most width runes, at spaces (a longer
// word gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// nonNil is s, or an empty slice for nil: [] in JSON, not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func runInvariants(_ context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("invariants", "", "List the invariant ids, one line each; those judged over recorded histories only (no state form: explore search --mode bfs does not judge them) say so.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *jsonOut {
		type row struct {
			ID      string `json:"id"`
			Summary string `json:"summary"`
			// HistoryOnly says why the invariant has no state form.
			HistoryOnly string `json:"historyOnly,omitempty"`
		}
		var rows []row
		for _, inv := range spec.Invariants {
			rows = append(rows, row{inv.ID, inv.Summary, inv.HistoryOnly})
		}
		return 0, writeJSON(stdout, map[string]any{"invariants": rows})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, inv := range spec.Invariants {
		s := inv.Summary
		if inv.HistoryOnly != "" {
			s += " [judged over recorded histories only, not by --mode bfs]"
		}
		fmt.Fprintf(tw, "%s\t%s\n", inv.ID, s)
	}
	return 0, tw.Flush()
}

// readHistory reads a history file (ours or Jepsen-style), as an input error.
func readHistory(path string) (*history.History, error) {
	var r io.Reader = os.Stdin
	name := "<stdin>"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usageError{fileError{path, "cannot open: " + bare(err).Error()}}
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			f.Close()
			return nil, usageError{fileError{path, "is a directory, want a history file"}}
		}
		defer f.Close()
		r, name = f, path
	}
	h, err := history.ReadAny(name, r)
	if err != nil {
		return nil, usageError{err}
	}
	for i, id := range h.Header.Expect {
		if !spec.IsInvariant(id) {
			return nil, usageError{&history.Error{File: name, Line: h.Header.Line, Field: "expect",
				Msg: fmt.Sprintf("expect[%d]: unknown invariant %q (explore invariants lists them)", i, id)}}
		}
	}
	return h, nil
}

// bare is err without the path an *os.PathError repeats (the message
// names the file already).
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// unexpected is what a history violates beyond its header's expect.
func unexpected(h *history.History, violated spec.Set) spec.Set {
	return violated &^ spec.SetOf(h.Header.Expect...)
}

// parseHistory parses a verb's flags and reads its one FILE argument.
func parseHistory(fs *flag.FlagSet, args []string) (string, *history.History, error) {
	if err := parse(fs, args); err != nil {
		return "", nil, err
	}
	if fs.NArg() != 1 {
		return "", nil, usagef("want one FILE argument, got %d (see --help)", fs.NArg())
	}
	h, err := readHistory(fs.Arg(0))
	return fs.Arg(0), h, err
}

func runCheck(ctx context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("check", "FILE|-", "Check a history (fencecheck format, or Jepsen-style JSON) against every invariant, with no model.", stdout)
	timeout := fs.Duration("timeout", 0, "bound porcupine's search per resource (0: none); a timeout is reported as unknown, and with no violation the check is incomplete (exit 3)")
	path, h, err := parseHistory(fs, args)
	if err != nil {
		return 0, err
	}
	// The events stay live through the check, which allocates much that is
	// short-lived: a heap that grows by a quarter of the live data, not by
	// all of it, keeps a big history's peak near 1.25 times its events (1M
	// events: 436 MiB instead of 540, for 15% more time; BENCHMARKS.md).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	// porcupine takes no context: on Ctrl-C the check is left to the
	// process's end, and what it judged so far is not known.
	checked := make(chan spec.Report, 1)
	if ctx.Err() == nil {
		go func() { checked <- spec.Check(h, spec.Options{Timeout: *timeout}) }()
	}
	var rep spec.Report
	select {
	case rep = <-checked:
	case <-ctx.Done():
		if *jsonOut {
			return exitIncomplete, writeJSON(stdout, map[string]any{"complete": false, "stopped": stopCause(ctx), "events": len(h.Events)})
		}
		fmt.Fprintf(stdout, "%s: incomplete: %s before the check ended; nothing judged\n", displayPath(path), stopCause(ctx))
		return exitIncomplete, nil
	}
	var violated spec.Set
	for _, v := range rep.Violations {
		violated |= spec.SetOf(v.Invariant)
	}
	code := exitOK
	switch {
	case unexpected(h, violated) != 0:
		code = exitViolation
	case len(rep.Unknown) > 0: // a check that ran out of time passes nothing
		code = exitIncomplete
	}
	if *jsonOut {
		if rep.Violations == nil {
			rep.Violations = []spec.Violation{}
		}
		rep.OK = rep.OK && len(rep.Unknown) == 0 // an incomplete check passes nothing
		return code, writeJSON(stdout, struct {
			spec.Report
			Complete bool `json:"complete"`
		}{rep, len(rep.Unknown) == 0})
	}
	printReport(stdout, path, h, rep, false)
	if code == exitIncomplete {
		fmt.Fprintf(stdout, "incomplete: the check of %s ran out of --timeout %v, with no unexpected violation found so far\n", strings.Join(rep.Unknown, ", "), *timeout)
	}
	return code, nil
}

// displayPath is how messages name the history at path: "-" is
// <stdin>, as the reader's errors say.
func displayPath(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}

// printReport writes a history check's report for a person: each violation,
// each resource not judged in time, and (unless replayed says replay
// prints its own) the violations the header expects and the history did
// not show.
func printReport(w io.Writer, path string, h *history.History, rep spec.Report, replayed bool) {
	fmt.Fprintf(w, "%s: %d events, %d operations\n", displayPath(path), rep.Events, rep.Operations)
	switch {
	case len(rep.Violations) == 0 && len(rep.Unknown) == 0:
		fmt.Fprintln(w, "no invariant violated")
	case len(rep.Violations) == 0:
		fmt.Fprintln(w, "no invariant found violated, but not every one judged:")
	}
	expect := spec.SetOf(h.Header.Expect...)
	var found spec.Set
	for _, v := range rep.Violations {
		tag := "VIOLATED"
		if expect.Has(v.Invariant) {
			tag = "violated (expected)"
		}
		found |= spec.SetOf(v.Invariant)
		fmt.Fprintf(w, "%s %s on %s: %s (events %v)\n", tag, v.Invariant, visible(v.Resource), visible(v.Message), v.Events)
	}
	if rep.Omitted > 0 {
		fmt.Fprintf(w, "and %d more violations not listed (at most %d of an invariant on a resource are)\n", rep.Omitted, spec.MaxPerResource)
	}
	for _, u := range rep.Unknown {
		fmt.Fprintf(w, "unknown %s: the check ran out of time\n", visible(u))
	}
	if missing := expect &^ found; missing != 0 && !replayed {
		fmt.Fprintf(w, "expected by the header, not found in the history: %s", list(missing.IDs()))
		if len(h.Header.Actions) > 0 {
			fmt.Fprint(w, " (a history need not show what the model's states did: explore replay judges those too)")
		}
		fmt.Fprintln(w)
	}
}

// visible is s for a terminal: its control characters (a resource named
// "job\nno invariant violated" printed a line of its own) and other
// unprintable ones escaped as in a Go string.
func visible(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func runReplay(_ context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("replay", "FILE", "Re-execute a history the model recorded (its header names config and trace), say whether the model reproduces it event for event, and check it.", stdout)
	path, h, err := parseHistory(fs, args)
	if err != nil {
		return 0, err
	}
	if len(h.Header.Actions) == 0 {
		return 0, usageError{&history.Error{File: path, Line: 1, Field: "actions", Msg: "the header carries no model trace (use explore check)"}}
	}
	v, err := checker.CheckHistory(h, spec.Options{}, cat)
	if err != nil {
		return 0, usageError{headerError(path, h.Header.Line, err)}
	}
	code := exitOK
	if !v.Reproduced || unexpected(h, v.Violated()) != 0 {
		code = exitViolation
	}
	if *jsonOut {
		return code, writeJSON(stdout, map[string]any{"reproduced": v.Reproduced, "mismatch": v.Mismatch,
			"violated": nonNil(v.Violated().IDs()), "expect": nonNil(h.Header.Expect), "report": v.Report})
	}
	if v.Reproduced {
		fmt.Fprintf(stdout, "%s: the model reproduces all %d events\n", path, len(h.Events))
	} else {
		fmt.Fprintf(stdout, "%s: NOT reproduced: %s\n", path, viz.Readable(v.Mismatch))
	}
	fmt.Fprintf(stdout, "violated: %s (expected: %s)\n", list(v.Violated().IDs()), list(h.Header.Expect))
	if gone := spec.SetOf(h.Header.Expect...) &^ v.Violated(); gone != 0 {
		fmt.Fprintf(stdout, "expected by the header, NOT found: %s\n", list(gone.IDs()))
	}
	for _, m := range v.Marks {
		fmt.Fprintf(stdout, "model: %s on %s: %s (events %v)\n", m.Invariant, m.Resource, viz.Readable(m.Message), m.Events)
	}
	fmt.Fprint(stdout, "history check: ")
	printReport(stdout, path, h, v.Report, true)
	return code, nil
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "nothing"
	}
	return strings.Join(ids, ", ")
}

func runViz(_ context.Context, args []string, stdout io.Writer, cat []spec.Variant) (int, error) {
	fs, jsonOut := flags("viz", "FILE [-o OUT.html] [--format html|mermaid]", "Render a history as a self-contained HTML timeline (or a Mermaid sequence diagram), with its violations marked. With --json: the file, format, violations marked and either the page written (out) or the page itself (page).", stdout)
	out := fs.String("o", "", "write to this file instead of standard output (- : standard output), in a folder that exists; never the history read. An HTML page of a history violating linearizable-sink gets porcupine's picture of each such resource beside it, OUT-porcupine-RESOURCE.html, linked from it")
	format := fs.String("format", "html", "html or mermaid")
	path, h, err := parseHistory(fs, args)
	if err != nil {
		return 0, err
	}
	if *format != "html" && *format != "mermaid" {
		return 0, usagef("--format %q: want html or mermaid", *format)
	}
	if *out == "-" {
		*out = ""
	}
	if *out != "" && path != "-" && sameFile(*out, path) {
		return 0, usagef("-o %s: is the history read; the page would overwrite it", *out)
	}
	if *out != "" {
		// Its folder first: the porcupine pages beside it are written
		// before it, and a missing folder named one of them, not -o.
		if err := outFolder(*out); err != nil {
			return 0, err
		}
	}
	opt := viz.Options{Title: filepath.Base(path), Violations: checker.Highlights(h, cat)}
	if *out != "" && *format == "html" {
		links, err := porcupinePages(h, opt.Violations, strings.TrimSuffix(*out, ".html"), path)
		if err != nil {
			return 0, err
		}
		opt.Links = links
	}
	var b bytes.Buffer
	if *format == "mermaid" {
		err = viz.Mermaid(&b, h, opt)
	} else {
		err = viz.HTML(&b, h, opt)
	}
	if err != nil {
		return 0, err
	}
	if *out != "" {
		if err := writeOut(*out, b.Bytes()); err != nil {
			return 0, usagef("-o %s: not written: %v", *out, bare(err))
		}
	}
	if *jsonOut {
		o := map[string]any{"file": path, "format": *format, "violations": nonNil(opt.Violations)}
		if *out != "" {
			o["out"] = *out
		} else {
			o["page"] = b.String()
		}
		return 0, writeJSON(stdout, o)
	}
	if *out == "" {
		_, err = stdout.Write(b.Bytes())
	}
	return 0, err
}

// outFolder is a usage error naming viz's -o path when the folder it is to
// be written in is missing or is no folder, or when it is a folder itself.
func outFolder(out string) error {
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return usagef("-o %s: its folder %s: %v", out, dir, bare(err))
	case !st.IsDir():
		return usagef("-o %s: %s is not a folder", out, dir)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usagef("-o %s is a folder: name a file (in it, or elsewhere)", out)
	}
	return nil
}

// writeOut writes b to path: a regular file, or one that does not exist
// yet, whole or not at all (renameio: a reader never sees half a page),
// through a symbolic link to where it points (made there if it does not
// exist); anything else (a device such
// as /dev/stdout, a named pipe) by writing into it, which a rename would
// have replaced with a regular file.
func writeOut(path string, b []byte) error {
	for range 40 { // a link to a link too, where the kernel would give up
		target, err := os.Readlink(path)
		if err != nil {
			break // not a link
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		return errors.Join(err, f.Close())
	}
	return renameio.WriteFile(path, b, 0o644)
}

// sameFile reports whether paths a and b name one existing file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// save writes a counterexample history and its HTML picture under dir (the
// picture's model marks come from re-running the trace with the design
// found in cat). dir is under --out (every caller's is): an error names the
// file not written and says so.
func save(dir, base string, h *history.History, cat []spec.Variant) (string, error) {
	path := filepath.Join(dir, base+".jsonl")
	notSaved := func(file string, err error) (string, error) {
		return "", fmt.Errorf("%s not saved (under --out): %w", file, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return notSaved(path, err)
	}
	var b bytes.Buffer
	if err := history.Encode(&b, h); err != nil {
		return notSaved(path, err)
	}
	if err := renameio.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return notSaved(path, err)
	}
	var page bytes.Buffer
	pagePath := filepath.Join(dir, base+".html")
	if err := viz.HTML(&page, h, viz.Options{Title: base, Violations: checker.Highlights(h, cat)}); err != nil {
		return notSaved(pagePath, err)
	}
	if err := renameio.WriteFile(pagePath, page.Bytes(), 0o644); err != nil {
		return notSaved(pagePath, err)
	}
	return path, nil
}

// savesUnderOut are the verbs that save what they find under --out after
// searching or running (counterexamples, histories, heat maps): parse
// checks their --out before any work (checkOut). merge is not one: it
// writes under --out only for sweeps, and its inputs stay.
var savesUnderOut = map[string]bool{"explore campaign": true, "explore search": true, "explore sweep": true, "explore real": true}

// checkOut is a usage error, before any work, when fs is a verb of
// savesUnderOut and its --out cannot be written: an existing file, a path
// under a file, or a folder that cannot be made or written in (a read-only
// file system, /proc/x). A search that found a counterexample and could
// not save it lost it. The check is made by doing: a folder of its own is
// made, then removed, in --out or, when --out does not exist yet, in the
// nearest folder above it that does (--out itself is not made here).
func checkOut(fs *flag.FlagSet) error {
	f := fs.Lookup("out")
	if f == nil || !savesUnderOut[fs.Name()] {
		return nil
	}
	out := f.Value.String()
	dir := filepath.Clean(out) // "" is ".", as filepath.Join reads it
	for {
		st, err := os.Stat(dir)
		if err == nil && !st.IsDir() {
			if dir == filepath.Clean(out) {
				return usagef("--out %s: not a folder", out)
			}
			return usagef("--out %s: cannot be made: %s is not a folder", out, dir)
		}
		if err == nil {
			break
		}
		if _, lerr := os.Lstat(dir); lerr == nil { // there, but not to be followed: a link to nothing
			return usagef("--out %s: cannot be made: %s: %v", out, dir, bare(err))
		}
		up := filepath.Dir(dir)
		if up == dir {
			return usagef("--out %s: cannot be made: %v", out, err)
		}
		dir = up
	}
	probe, err := os.MkdirTemp(dir, ".explore-out-check-")
	if err != nil {
		if dir == filepath.Clean(out) {
			return usagef("--out %s: cannot write in it: %v", out, bare(err))
		}
		return usagef("--out %s: cannot be made: no folder can be made in %s: %v", out, dir, bare(err))
	}
	if err := os.Remove(probe); err != nil {
		return fmt.Errorf("--out %s: removing the folder made to check it: %w", out, err)
	}
	return nil
}

// porcupinePages writes porcupine's own linearizability picture of every
// resource whose sink operations have no linearization, beside the timeline
// (base-porcupine-NAME.html, NAME the resource's name made safe by
// pageName), and returns links to them. A page that would be the file
// read, the history (a history named like a page), is refused.
func porcupinePages(h *history.History, vs []spec.Violation, base, read string) ([]viz.Link, error) {
	var links []viz.Link
	done := map[string]bool{}
	taken := map[string]bool{}
	for _, v := range vs {
		if v.Invariant != spec.LinearizableSink || done[v.Resource] {
			continue
		}
		done[v.Resource] = true
		model, _, info := spec.SinkLinearization(h, v.Resource, 0)
		info.AddAnnotations(laneNames(h, v.Resource))
		var b bytes.Buffer
		if err := porcupine.Visualize(model, info, &b); err != nil {
			return nil, err
		}
		path := base + "-porcupine-" + pageName(v.Resource, taken) + ".html"
		if read != "-" && sameFile(path, read) {
			return nil, usagef("-o %s: its page %s would overwrite the history read", base+".html", path)
		}
		if err := renameio.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return nil, usagef("-o %s: its porcupine page %s not written: %v", base+".html", path, bare(err))
		}
		href := (&url.URL{Path: filepath.Base(path)}).String() // a # or ? in OUT's name is part of the file's
		links = append(links, viz.Link{Text: "porcupine's linearizability picture of " + v.Resource, Href: href})
	}
	return links, nil
}

// pageName turns a resource's name, which may hold any character (jobs/42,
// ../x), into a part of a file name: ASCII letters, digits, '-', '_' and '.'
// are kept, anything else becomes '_', a leading '.' too, and the result is
// cut to 64 bytes. When that changed the name, or the name is taken
// already (compared ignoring case, for case-insensitive file systems), it
// gets the hash of the resource's name as a suffix (-1a2b3c4d), then -2,
// -3, ... while still taken. taken records the names given; the same
// resources in the same order get the same names.
func pageName(resource string, taken map[string]bool) string {
	b := []byte(resource)
	if len(b) > 64 {
		b = b[:64]
	}
	for i, c := range b {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
		if !ok {
			b[i] = '_'
		}
	}
	name := string(b)
	if name != resource || name == "" || taken[strings.ToLower(name)] {
		f := fnv.New32a()
		f.Write([]byte(resource))
		name = fmt.Sprintf("%s-%08x", name, f.Sum32())
	}
	for i, n := 2, name; taken[strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s-%d", n, i)
	}
	taken[strings.ToLower(name)] = true
	return name
}

// laneNames names porcupine's lanes: porcupine labels each with its client
// number (0, 1, ...), so every lane gets, before its first operation, a
// box with the process's name (w1, coordinator) as the history has it.
func laneNames(h *history.History, resource string) []porcupine.Annotation {
	var out []porcupine.Annotation
	named := map[int]bool{}
	for _, op := range spec.SinkOperations(h, resource) {
		ev := op.Call / 2 // Call is twice the line of the operation's invoke (or sink) event
		if named[op.ClientId] || op.Call < 0 || ev >= int64(len(h.Events)) {
			continue
		}
		named[op.ClientId] = true
		p := h.Events[ev].Process
		if e := &h.Events[ev]; e.F == history.Apply {
			p = e.Value.Writer // a write placed at the sink's decision is its writer's
		}
		out = append(out, porcupine.Annotation{ClientId: op.ClientId, Start: -1, Description: p,
			Details: "lane " + strconv.Itoa(op.ClientId) + " is " + p, BackgroundColor: "#ddf4ff"})
	}
	return out
}

// headerError places an error of checker.CheckHistory ("header: config:
// ...", "header: actions[3]: ...") at the header's line and field.
func headerError(path string, line int, err error) *history.Error {
	msg, field := strings.TrimPrefix(err.Error(), "header: "), ""
	if f, rest, ok := strings.Cut(msg, ": "); ok && (f == "config" || strings.HasPrefix(f, "config.") || f == "variant" || strings.HasPrefix(f, "actions[")) {
		field, msg = f, rest
	}
	return &history.Error{File: path, Line: line, Field: field, Msg: msg}
}
