package realdb

import (
	"fmt"
	"strconv"

	"github.com/fencecheck/fencecheck/designs"
	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/model"
	"github.com/fencecheck/fencecheck/spec"
)

// A model history stamps only a worker's instants of an operation: its
// invocation and the answer's arrival. The coordinator decided a renew, a
// release or a refusal when the request arrived, the sink a read likewise,
// and the coordinator granted a lease when the sink's answer to its advance
// arrived; in between, ticks can pass and other operations happen. A replay
// that made those calls at the answer's line would ask the real coordinator
// later than the model's did, with another clock and another lease table.
// The header's action trace has those instants: re-executed on the model,
// it says where, between which two events, each decision fell.

// decision is a request the model's coordinator or sink decided: the real
// call is made at the same place in the schedule, on the same clock.
type decision struct {
	at   int   // the index of the event it comes before
	tick int64 // the model's clock then
	op   int   // the index of the operation's invoke event
	// reply is the answer the model sent for the delivery (zero for none);
	// answers: that answer is the one the operation's completion line
	// reports (a duplicated request is decided twice).
	reply   modelReply
	answers bool
	// busy: the coordinator was granting the resource to an acquire then
	// (it refuses every other while the sink advances the fence for that
	// one).
	busy bool
	// late: a copy of a renew's, release's or write's request that arrived
	// after its worker stopped waiting for it (it still takes effect).
	late bool
	// grant: the coordinator granted the acquire (when the sink's answer to
	// its advance arrived; grant-before-fence: when its request did).
	grant bool
}

// instants are the model's instants of a schedule's decisions.
type instants struct {
	// decisions, in schedule order: each delivery of a renew, release,
	// read, write or acquire request to its waiting worker's coordinator or
	// sink, and of a late renew, release or write.
	decisions []decision
	// advances maps each advance's ok event index to the invoke index of
	// the acquire it led to a grant for, -1 for none (the coordinator that
	// asked for it restarted, or no acquire waited for it). Empty without a
	// trace.
	advances map[int]int
	// applies maps each sink apply event's index to the decision that
	// started its write (the write request's delivery): a worker can have
	// several writes of one result under way.
	applies map[int]int
	// traced: the schedule has a trace (the instants above are known).
	traced bool
}

// scheduleInstants re-executes h's action trace on the model of h's design
// and config, checks that it gives h's events, and returns the instants of
// its decisions. A history without a trace has none: its calls are made at
// their answers' lines.
func scheduleInstants(h *history.History) (instants, error) {
	granted := map[int]bool{} // the invoke indices of acquires the model granted
	in := instants{advances: map[int]int{}, applies: map[int]int{}}
	if len(h.Header.Config) == 0 {
		return in, nil
	}
	cfg, err := model.ParseConfig(h.Header.Config)
	if err != nil {
		return in, fmt.Errorf("realdb: the schedule's header: config: %v", err)
	}
	if cfg.Replicas > 1 {
		return in, fmt.Errorf("realdb: the schedule's header: config: replicas %d: the replay plays one coordinator, not a split brain", cfg.Replicas)
	}
	if len(h.Header.Actions) == 0 {
		return in, nil
	}
	in.traced = true
	v, err := spec.LookupVariant(designs.All(), h.Header.Variant)
	if err != nil {
		return in, fmt.Errorf("realdb: the schedule's header: variant: %v", err)
	}
	m, err := v.Machine(cfg)
	if err != nil {
		return in, fmt.Errorf("realdb: the schedule's header: config: %v", err)
	}
	run := model.NewRun(m)
	open := map[string]int{} // worker -> the index of its open operation's invoke event
	type request struct{ worker, inc, req uint8 }
	acquires := map[request]int{} // an acquire request -> its invoke index
	type write struct{ worker, res, inc, token, pw, pt uint8 }
	checked := map[write][]int{} // two-step writes checked, awaiting their commit: their decisions
	for i, s := range h.Header.Actions {
		a, err := model.ParseAction(s)
		if err != nil {
			return in, fmt.Errorf("realdb: the schedule's header: action %d: %v", i+1, err)
		}
		if !m.IsEnabled(&run.State, a) {
			return in, fmt.Errorf("realdb: the schedule's header: action %d (%s) is not enabled on the model", i+1, s)
		}
		at, tick := len(run.Events), run.Now
		var sent map[modelReply]int // with a request's delivery: the answers to it in flight before
		asked := -1                 // and its decision
		before := len(in.decisions)
		if msg := a.Msg; a.Kind == model.Deliver {
			switch {
			case msg.Kind != model.AcquireReq && msg.Kind != model.RenewReq && msg.Kind != model.ReleaseReq &&
				msg.Kind != model.ReadReq && msg.Kind != model.WriteReq:
			case msg.Live:
				if op, ok := open[model.Process(msg.Worker)]; ok {
					in.decisions = append(in.decisions, decision{at: at, tick: tick, op: op,
						busy: run.State.Coord[msg.Replica].Wait[msg.Res].Worker != 0})
					asked, sent = len(in.decisions)-1, answers(&run.State, msg)
				}
			case msg.Kind == model.RenewReq || msg.Kind == model.ReleaseReq || msg.Kind == model.WriteReq:
				if op := sentBy(run.Events, open, msg); op >= 0 {
					in.decisions = append(in.decisions, decision{at: at, tick: tick, op: op, late: true})
				}
			}
		}
		started := -1 // the decision starting a write, if a is its request's delivery
		if a.Kind == model.Deliver && a.Msg.Kind == model.WriteReq && len(in.decisions) > before {
			started = before
		}
		waiting := -1 // the acquire an advance's delivery to the sink serves
		if msg := a.Msg; a.Kind == model.Deliver && msg.Kind == model.AdvanceReq {
			if wt := run.State.Coord[msg.Replica].Wait[msg.Res]; wt.Worker != 0 && wt.Seq == msg.Req {
				if op, ok := acquires[request{wt.Worker - 1, wt.Inc, wt.Req}]; ok {
					waiting = op
				}
			}
		}
		f := run.Do(a)
		if asked >= 0 {
			now := answers(&run.State, a.Msg)
			for k, n := range now {
				if n > sent[k] {
					in.decisions[asked].reply = k
				}
			}
		}
		if f.Kind == model.Granted {
			if op, ok := acquires[request{f.Worker, f.Inc, f.Req}]; ok {
				granted[op] = true
				if asked >= 0 && in.decisions[asked].op == op { // granted at its request's delivery
					in.decisions[asked].grant = true
				} else {
					in.decisions = append(in.decisions, decision{at: at, tick: tick, op: op, grant: true,
						reply: modelReply{code: model.RepOK, token: f.Token, grant: f.Grant}})
				}
			}
		}
		wk := write{a.Msg.Worker, a.Msg.Res, a.Msg.Inc, a.Msg.Token, a.Msg.PW, a.Msg.PT}
		applied := false
		for j := at; j < len(run.Events); j++ {
			e := run.Events[j]
			if e.F == history.Apply {
				switch {
				case started >= 0:
					in.applies[j], applied = started, true
				case a.Kind == model.Deliver && a.Msg.Kind == model.Commit && len(checked[wk]) > 0:
					in.applies[j] = checked[wk][0]
					checked[wk] = checked[wk][1:]
				}
			}
			if e.F == history.Advance && e.Type == history.OK {
				in.advances[j] = waiting
			}
			if op, ok := open[e.Process]; ok && e.Type != history.Invoke && history.IsOperation(e.F) &&
				a.Kind == model.Deliver && a.Msg.Live {
				// The answer a.Msg completes op: the first decision of op
				// that sent it.
				for k := range in.decisions {
					if d := &in.decisions[k]; d.op == op && !d.late && d.reply == replyOf(a.Msg) {
						d.answers = true
						break
					}
				}
			}
			if e.Type == history.Invoke && e.Process != history.Coordinator {
				open[e.Process] = j
				if a.Kind == model.Acquire {
					w := run.State.Workers[a.Worker]
					acquires[request{a.Worker, w.Inc, w.Req}] = j
				}
			}
		}
		if started >= 0 && !applied { // checked; the put comes with its commit
			checked[wk] = append(checked[wk], started)
		}
	}
	for i, op := range in.advances {
		if !granted[op] {
			in.advances[i] = -1 // the model's coordinator never granted it
		}
	}
	if d := history.Diff(h.Events, run.Events); d != "" {
		return in, fmt.Errorf("realdb: the schedule is not what its header's action trace gives on the model: %s", d)
	}
	return in, nil
}

// sentBy is the operation whose request msg (a renew, release or write)
// is: the latest of its worker's with that call, resource, incarnation (a
// write's invocation names none) and token; -1 if none.
func sentBy(events []history.Event, open map[string]int, msg model.Msg) int {
	f := map[uint8]string{model.RenewReq: history.Renew, model.ReleaseReq: history.Release, model.WriteReq: history.Write}[msg.Kind]
	p, res, inc := model.Process(msg.Worker), model.ResourceName(msg.Res), strconv.Itoa(int(msg.Inc))
	last, ok := open[p]
	if !ok {
		return -1
	}
	for i := last; i >= 0; i-- {
		if e := events[i]; e.Process == p && e.Type == history.Invoke && e.F == f && e.Resource == res &&
			(e.Value.Incarnation == inc || e.Value.Incarnation == "") && e.Value.Token == int64(msg.Token) {
			return i
		}
	}
	return -1
}

// modelReply is what a model's answer says: its code, the token and grant
// an acquire is given, the result a read finds.
type modelReply struct{ code, token, grant, pw, pt uint8 }

func replyOf(m model.Msg) modelReply { return modelReply{m.Code, m.Token, m.Grant, m.PW, m.PT} }

// answers counts the answers to req's worker and incarnation of req's kind
// in flight in s (a request's answer is the next kind), by what they say.
func answers(s *model.State, req model.Msg) map[modelReply]int {
	n := map[modelReply]int{}
	for _, m := range s.Msgs[:s.NMsgs] {
		if m.Kind == req.Kind+1 && m.Worker == req.Worker && m.Inc == req.Inc {
			n[replyOf(m)]++
		}
	}
	return n
}
