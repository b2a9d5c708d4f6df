// Command explore is fencecheck's front door: it searches protocol variants
// for counterexamples, replays and checks histories, and draws them. It is
// explore.Main with the built-in catalogue; see the README and
// `explore --help`.
package main

import (
	"os"

	"github.com/fencecheck/fencecheck/explore"
)

func main() { os.Exit(explore.Main(os.Args)) }
