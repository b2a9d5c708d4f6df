package history_test

// The large history of the end-to-end measurement of explore check
// (BENCHMARKS.md), from the simulator the checker's benchmarks use too.

import (
	"bufio"
	"flag"
	"os"
	"testing"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/history/simulate"
)

var genFile = flag.String("history.gen", "", "TestGenerate writes a generated history of -history.gen.events events to this file")
var genEvents = flag.Int("history.gen.events", 1_000_000, "events of the history TestGenerate writes (over 1,000 resources and 50 processes)")

// TestGenerate writes the generated history of the end-to-end benchmark:
//
//	go test ./history -run TestGenerate -history.gen /tmp/h1m.jsonl
//	/usr/bin/time -v explore check /tmp/h1m.jsonl
func TestGenerate(t *testing.T) {
	if *genFile == "" {
		t.Skip("no -history.gen FILE")
	}
	h := simulate.Reference(1, *genEvents, 1000, 50)
	f, err := os.Create(*genFile)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := history.Encode(w, h); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
