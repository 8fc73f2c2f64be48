package daemonclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

var _ agentclient.MatchingSubscriber = (*daemonclient.Client)(nil)

// turnIDsOf drains sub until it has been quiet for a moment, returning the
// turn id of every event it received, in order.
func turnIDsOf(t *testing.T, sub bus.Subscription) []string {
	t.Helper()
	var ids []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		d, err := sub.Recv(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return ids
		}
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			TurnID string `json:"turn_id"`
		}
		if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &v); err != nil {
			t.Fatalf("event %s: %v", d.Envelope.Topic, err)
		}
		ids = append(ids, v.TurnID)
	}
}

// TestASubscriptionMatchRelaysOnlyItsTurn: one principal, two turns run
// by one client. A client subscribed to the agent's events with a match on
// the second turn's id receives exactly that turn's events — as many as an
// unfiltered client receives of it — and none of the first's.
func TestASubscriptionMatchRelaysOnlyItsTurn(t *testing.T) {
	d := boot(t, owner())
	runner, filtered, whole := d.dial(t), d.dial(t), d.dial(t)
	only, err := filtered.SubscribeMatching(dispatch.Caller{}, "agent.v1.*", true, map[string]string{"turn_id": "turn-b"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := whole.Subscribe(dispatch.Caller{}, "agent.v1.*", true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	for _, turn := range []string{"turn-a", "turn-b"} {
		_, err := agentclient.Run(ctx, runner, agentclient.Prompt{Text: "write the notes", SessionID: agentclient.NewSessionID(), Context: ipc.PromptContext{TurnID: turn}},
			func(tr *agentclient.Turn, ev agentclient.Event) {
				if ev.Kind == agentclient.EventApproval {
					_ = tr.Answer(ev.Approval.RequestID, ipc.DecisionApprove)
				}
			})
		if err != nil {
			t.Fatalf("%s: %v", turn, err)
		}
	}
	count := map[string]int{}
	for _, id := range turnIDsOf(t, all) {
		count[id]++
	}
	if count["turn-a"] == 0 || count["turn-b"] == 0 {
		t.Fatalf("the unfiltered client saw %v", count)
	}
	got := turnIDsOf(t, only)
	for _, id := range got {
		if id != "turn-b" {
			t.Fatalf("the filtered client received an event of %q: %v", id, got)
		}
	}
	if len(got) != count["turn-b"] {
		t.Fatalf("the filtered client received %d of turn-b's %d events", len(got), count["turn-b"])
	}
}

// TestASubscriptionMatchIsBounded: a match over the bounds is refused as a
// bad frame, and the connection goes on.
func TestASubscriptionMatchIsBounded(t *testing.T) {
	d := boot(t, owner())
	r := d.raw(t)
	r.hello()
	big := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		big[k] = "x"
	}
	for i, match := range []map[string]string{big, {"": "x"}, {"turn_id": string(make([]byte, uplinkwire.MaxMatchValue+1))}} {
		r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: uint64(i + 1), Pattern: "agent.v1.*", Match: match})
		wantCode(t, r.next(), uplinkwire.CodeBadFrame)
	}
	r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: 9, Pattern: "agent.v1.*", Match: map[string]string{"turn_id": "t"}})
	if f := r.next(); f.Op != uplinkwire.OpOK {
		t.Fatalf("a match within the bounds answered %+v", f)
	}
}
