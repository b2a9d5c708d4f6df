package checker_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/fencecheck/fencecheck/checker"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// A user's own protocol change, declared outside fencecheck: "I want to renew
// on the worker's send time — is it safe?" The campaign answers with the
// verdict and the shortest story it found.
func Example_userVariant() {
	mine := spec.Variant{
		Name:    "renew-from-send-time",
		Summary: "a renew's new deadline counts from the time the worker sent it",
		Design: model.Design{
			ReportsTime: true, // workers put their clock reading in their requests
			Deadline: func(old model.Lease, req model.Msg, ttl int) int8 {
				if old.Holder == 0 {
					return model.RefDeadline(old, req, ttl) // grants as the reference does
				}
				return model.Clamp(model.Reported(req) + ttl) // renewals from the worker's send time
			},
		},
		// The hope: as safe as the reference (which gives up only absolute validity).
		Expect: spec.Expectation{Violates: spec.SetOf(spec.AbsoluteValidity)},
	}
	opt := checker.DefaultCampaign()
	opt.Runs = 1000
	results, err := checker.Campaign(context.Background(), []spec.Variant{mine}, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := results[0]
	fmt.Println("as safe as hoped:", r.Expected())
	fmt.Println(mine.Expect.Unexpected(r.Violated))
	f := r.Finding(spec.ExclusiveLease)
	h := checker.Counterexample(mine.Name, opt.Seed, f.Run, "")
	fmt.Printf("counterexample: %d operations\n", len(h.Ops()))
	for _, e := range h.Events {
		fmt.Println(strings.Join(strings.Fields(fmt.Sprintf("t=%d %s %s %s %s %s", e.Time, e.Process, e.Type, e.F,
			e.Resource, brief(e.Value.Token, e.Value.Error, e.Value.Offset))), " "))
	}
	// Output:
	// as safe as hoped: false
	// unexpected violations: exclusive-lease
	// counterexample: 8 operations
	// t=0 w1 invoke acquire job-1
	// t=0 w2 invoke acquire job-1
	// t=0 w1 info acquire job-1
	// t=0 w1 info crash
	// t=0 w1 info restart
	// t=0 w1 info clock offset=-2
	// t=0 w2 fail acquire job-1 held
	// t=0 coordinator invoke advance job-1
	// t=0 coordinator ok advance job-1 token=1
	// t=3 w1 invoke acquire job-1
	// t=3 coordinator invoke advance job-1
	// t=3 coordinator ok advance job-1 token=2
	// t=3 w1 info clock offset=-1
	// t=3 w1 ok acquire job-1 token=2
	// t=3 w2 info clock offset=1
	// t=3 w1 invoke renew job-1 token=2
	// t=3 w2 invoke acquire job-1
	// t=5 coordinator invoke advance job-1
	// t=5 coordinator ok advance job-1 token=3
	// t=5 w2 ok acquire job-1 token=3
}

func brief(token int64, err string, offset int64) string {
	switch {
	case err != "":
		return err
	case offset != 0:
		return fmt.Sprintf("offset=%d", offset)
	case token != 0:
		return fmt.Sprintf("token=%d", token)
	}
	return ""
}
