package viz_test

import (
	"os"
	"strings"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/viz"
)

// A grant and a write, drawn as a Mermaid sequence diagram.
func ExampleMermaid() {
	const jsonl = `{"time":0,"process":"w1","type":"invoke","f":"acquire","resource":"job-1","value":{"owner":"w1","incarnation":1,"requestId":"r1","ttl":5}}
{"time":0,"process":"coordinator","type":"invoke","f":"advance","resource":"job-1","value":{}}
{"time":0,"process":"coordinator","type":"ok","f":"advance","resource":"job-1","value":{"token":1}}
{"time":1,"process":"w1","type":"ok","f":"acquire","resource":"job-1","value":{"token":1,"ttl":5}}
{"time":2,"process":"w1","type":"invoke","f":"write","resource":"job-1","value":{"token":1,"resultId":"job-1","payload":"done"}}
{"time":3,"process":"w1","type":"ok","f":"write","resource":"job-1","value":{"outcome":"written"}}`
	h, err := history.ReadAll("example", strings.NewReader(jsonl))
	if err != nil {
		panic(err)
	}
	if err := viz.Mermaid(os.Stdout, h, viz.Options{Title: "grant, then write"}); err != nil {
		panic(err)
	}
	// Output:
	// sequenceDiagram
	//     title grant, then write
	//     participant coordinator
	//     participant w1
	//     participant sink
	//     w1->>coordinator: t=0 acquire ttl=5 inc=1 req=r1
	//     coordinator->>sink: t=0 advance
	//     sink-->>coordinator: t=0 advance fence→1
	//     coordinator-->>w1: t=1 acquire → token=1
	//     w1->>sink: t=2 write token=1 id=job-1 #34;done#34;
	//     sink-->>w1: t=3 write token=1 → written
}
