// Package docs holds the project's documentation; its test checks that the
// links between the repository's Markdown files lead somewhere.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// link matches an inline Markdown link and captures its target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// codeSpan matches inline code, whose text is not a link.
var codeSpan = regexp.MustCompile("`[^`]*`")

// TestLinksResolve checks every relative link of every Markdown file in the
// repository: the file it names exists, and the anchor after '#', if any, is
// the slug of one of that file's headings, as GitHub makes them.
func TestLinksResolve(t *testing.T) {
	root := ".."
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "explore-out") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files under %s; the walk is wrong", len(files), root)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		if text, err := os.ReadFile(path); err == nil {
			a = headingSlugs(string(text))
		}
		anchors[path] = a
		return a
	}
	checked := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range proseLines(string(text)) {
			if line == "" {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", file, n+1, target, dest)
						continue
					}
				}
				checked++
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", file, n+1, target, dest, anchor)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// proseLines returns the file's lines with those inside fenced code blocks
// blanked, so that line numbers stay those of the file.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingSlugs returns the anchors GitHub gives the headings of a Markdown
// text: the heading's text in lower case, with every character but letters,
// digits, '-', '_' and spaces dropped and the spaces made '-'; a repeated
// slug gets "-1", "-2" and so on.
func headingSlugs(text string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || len(line)-len(h) > 6 || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		slug := b.String()
		if k := seen[slug]; k > 0 {
			slugs[slug+"-"+strconv.Itoa(k)] = true
		} else {
			slugs[slug] = true
		}
		seen[slug]++
	}
	return slugs
}
