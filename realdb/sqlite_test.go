package realdb

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSQLiteFolderNamesAreEscaped: a database in a folder whose name holds
// a '?', a '#', a '%' or a space is made in that folder, under its own name,
// and Drop removes it, so that the next Create starts afresh. (The path went
// into the file: URI unescaped: "a?b" opened the file "a", "c#d" the file
// "c", and "e%41" the folder "eA"; Drop removed the file that was not there,
// and the next run found the last one's fences.)
func TestSQLiteFolderNamesAreEscaped(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	t.Chdir(root) // for the relative path
	names := []string{"a?b", "c#d", "e%41", "f g", "h%3fi"}
	for _, n := range append(slices.Clone(names), "eA", "h?i") { // eA, h?i: where the unescaped URIs of e%41 and h%3fi lead
		if err := os.Mkdir(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join(root, n, "sink.db"))
	}
	paths = append(paths, filepath.Join("a?b", "relative.db"))
	for _, path := range paths {
		c := SinkConfig{DB: SQLite, Kind: Atomic, DSN: path}
		for round := range 2 { // the second Create must find a fresh database
			s, err := Create(ctx, c)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			fence, err := s.Advance(ctx, "r")
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if fence != 1 {
				t.Errorf("%s, round %d: the first advance gave fence %d, want 1 (the database was not fresh)", path, round, fence)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: the database is not where it was asked: %v", path, err)
			}
			if err := Drop(ctx, c); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s: still there after Drop", path)
			}
		}
	}
	// Nothing was made anywhere else: every folder is empty, and the root
	// holds only the folders.
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("a file %q was made beside the folders", e.Name())
			continue
		}
		inside, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range inside {
			t.Errorf("%s/%s left behind", e.Name(), f.Name())
		}
	}
}
