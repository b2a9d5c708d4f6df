package checker

import (
	"fmt"
	"strings"

	"github.com/fencecheck/fencecheck/model"
)

// Script runs the steps of a scripted scenario. Each step is an action's
// text form, or a prefix of its words: "deliver acquire-rep w=1" picks the
// first enabled action whose text contains all those words. It fails on the
// first step that matches no enabled action.
func Script(m *model.Machine, steps []string) (*model.Run, error) {
	run := model.NewRun(m)
	var buf []model.Action
	for i, step := range steps {
		want := strings.Fields(step)
		buf = m.Enabled(&run.State, buf[:0])
		found := false
		for _, a := range buf {
			if matches(a, want) {
				run.Do(a)
				found = true
				break
			}
		}
		if !found {
			return run, fmt.Errorf("step %d %q: no enabled action matches", i+1, step)
		}
	}
	return run, nil
}

func matches(a model.Action, want []string) bool {
	have := strings.Fields(a.String())
	if len(want) == 0 || have[0] != want[0] {
		return false
	}
	for _, w := range want[1:] {
		found := false
		for _, h := range have[1:] {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
