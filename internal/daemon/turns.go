package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the daemon's own identity on the bus: it hears every
// principal's prompts and final responses, to know which turns run, and may
// publish a prompt, to cancel them at shutdown. Nothing else.
const ClientID = "astrid-daemon"

// ACL is the daemon's frontend identity (kernel.Options.Frontends).
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        ClientID,
		Publish:   []string{ipc.UserPromptTopic},
		Subscribe: []string{ipc.UserPromptTopic, ipc.AgentResponseTopic},
		// A final response is a reply to the frontend that asked; the
		// tracker hears every principal's.
		ReadsReplies: true,
	}
}

// turnKey is one running turn: a session of a principal, and the turn id
// its frontend chose ("" for a frontend that sends none).
type turnKey struct{ principal, session, turn string }

// turns tracks the agent turns running on the daemon's kernel, from the
// prompts that start them and the final responses that end them, so that a
// shutdown can cancel each and wait for its answer (docs/agent.md:
// every turn ends with exactly one final response). It learns of a turn
// only from the bus, as any frontend would: it needs no hook in the agent.
type turns struct {
	k   Kernel
	log *slog.Logger

	mu      sync.Mutex
	running map[turnKey]bool
	// used sums, per principal, the turns that ended and their usage
	// (their final responses'), for status.
	used    map[string]turnUsage
	changed time.Time     // when a turn last started or ended
	ended   chan struct{} // signalled at every final response

	routes []bus.Subscription
	wg     sync.WaitGroup
	stop   context.CancelFunc
	closed sync.Once
}

// Kernel is what the tracker needs of the kernel: kernel.Frontend is one.
type Kernel interface {
	Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error)
	Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error)
}

func startTurns(k Kernel, log *slog.Logger) (*turns, error) {
	t := &turns{k: k, log: log, running: map[turnKey]bool{}, used: map[string]turnUsage{}, ended: make(chan struct{}, 1)}
	// Unscoped: every principal's turns.
	self := dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}
	for _, topic := range []string{ipc.UserPromptTopic, ipc.AgentResponseTopic} {
		r, err := k.Subscribe(self, topic, false)
		if err != nil {
			t.closeRoutes()
			return nil, err
		}
		t.routes = append(t.routes, r)
	}
	ctx, stop := context.WithCancel(context.Background())
	t.stop = stop
	for _, r := range t.routes {
		t.wg.Add(1)
		go t.listen(ctx, r)
	}
	return t, nil
}

func (t *turns) listen(ctx context.Context, r bus.Subscription) {
	defer t.wg.Done()
	for {
		d, err := r.Recv(ctx)
		if err != nil {
			return
		}
		if d.Lost > 0 {
			t.log.Warn("turn tracker lost events; a turn may not be cancelled at shutdown", "lost", d.Lost)
		}
		t.observe(d.Envelope)
	}
}

// observe records a prompt that starts a turn, or a final response that
// ends one.
func (t *turns) observe(e *ipc.Envelope) {
	body := ipc.GuestBytes(e.Payload)
	switch e.Topic {
	case ipc.UserPromptTopic:
		var in ipc.UserInput
		if json.Unmarshal(body, &in) != nil || in.Text == "" || in.SessionID == "" {
			return // a cancel, or not a turn the agent will run
		}
		var pc ipc.PromptContext
		if len(in.Context) > 0 {
			_ = json.Unmarshal(in.Context, &pc)
		}
		if pc.Action != "" {
			return
		}
		t.mu.Lock()
		t.running[turnKey{e.Principal, in.SessionID, pc.TurnID}] = true
		t.changed = time.Now()
		t.mu.Unlock()
	case ipc.AgentResponseTopic:
		var r ipc.AgentResponse
		if r.UnmarshalJSON(body) != nil || !r.IsFinal {
			return
		}
		t.mu.Lock()
		delete(t.running, turnKey{e.Principal, r.SessionID, r.TurnID})
		t.changed = time.Now()
		if _, known := t.used[e.Principal]; known || len(t.used) < maxUsagePrincipals {
			t.used[e.Principal] = t.used[e.Principal].add(r)
		}
		t.mu.Unlock()
		select {
		case t.ended <- struct{}{}:
		default:
		}
	}
}

// activity is the number of turns running and when one last started or
// ended (the idle timer's).
func (t *turns) activity() (int, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.running), t.changed
}

// Running is the number of turns running.
func (t *turns) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.running)
}

// cancelAll asks the agent to cancel every running turn and waits, up to
// grace, until each has had its final response. It returns how many turns
// were cancelled and how many had no final response in time.
func (t *turns) cancelAll(grace time.Duration) (cancelled, unanswered int) {
	t.mu.Lock()
	keys := make([]turnKey, 0, len(t.running))
	for k := range t.running {
		keys = append(keys, k)
	}
	t.mu.Unlock()
	for _, k := range keys {
		pc, _ := json.Marshal(ipc.PromptContext{Action: ipc.ActionCancelTurn, TurnID: k.turn})
		payload, err := ipc.EncodePayload(ipc.UserInput{SessionID: k.session, Context: pc})
		if err == nil {
			// A cancel stops work: never refused by the CPU budget.
			_, err = t.k.Publish(dispatch.Caller{Capsule: ClientID, Principal: k.principal, Continues: true}, ipc.UserPromptTopic, payload)
		}
		if err != nil {
			t.log.Warn("turn not cancelled", "principal", k.principal, "session", k.session, "turn", k.turn, "err", err)
		}
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for t.Running() > 0 {
		select {
		case <-t.ended:
		case <-deadline.C:
			return len(keys), t.Running()
		}
	}
	return len(keys), 0
}

func (t *turns) close() {
	t.closed.Do(func() {
		t.stop()
		t.closeRoutes()
		t.wg.Wait()
	})
}

func (t *turns) closeRoutes() {
	for _, r := range t.routes {
		r.Close()
	}
}

// RunningFor is the number of principal's turns running.
func (t *turns) RunningFor(principal string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k := range t.running {
		if k.principal == principal {
			n++
		}
	}
	return n
}

// turnUsage is what one principal's ended turns used.
type turnUsage struct {
	turns  uint64
	tokens ipc.Usage
	cost   float64
	priced bool
}

// maxUsagePrincipals bounds the principals whose usage is kept: beyond it
// a new principal's turns are not summed (status says nothing of them).
const maxUsagePrincipals = 4096

func (u turnUsage) add(r ipc.AgentResponse) turnUsage {
	u.turns++
	if r.Usage != nil {
		u.tokens = u.tokens.Add(*r.Usage)
	}
	if r.CostUSD != nil {
		u.cost += *r.CostUSD
		u.priced = true
	}
	return u
}

// usage puts each principal's ended turns, tokens and cost into s.
func (t *turns) usage(s *Status) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, u := range t.used {
		pu := s.Principals[p]
		pu.Turns, pu.InputTokens, pu.OutputTokens, pu.CachedTokens = u.turns, u.tokens.InputTokens, u.tokens.OutputTokens, u.tokens.CachedTokens
		if u.priced {
			cost := u.cost
			pu.CostUSD = &cost
		}
		if s.Principals == nil {
			s.Principals = map[string]PrincipalUsage{}
		}
		s.Principals[p] = pu
	}
}
