package daemonclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// burstScript answers any prompt with ten deltas: a burst of turns is then
// many stream events of one principal at the agent's queue.
var burstScript = `{"match": {"user": ""}}
` + strings.Repeat(`{"TextDelta": "word "}
`, 10) + `"Done"
`

// TestABurstPastTheQueueDepthEndsEveryTurn: one principal starts 24 turns
// at once against an agent whose queue holds 16 calls. Prompts past it are
// refused at once, and stream events past it are lost — but the agent is
// told of each lost event's request, so every turn ends now: answered, not
// taken, or cut, never left to the stream timeout (an hour here: a turn
// left waiting fails the test at its one-minute guard).
func TestABurstPastTheQueueDepthEndsEveryTurn(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.QueueDepth = 16
	cfg.Limits.CPUBudgetMsPerSec = 0 // the queue is what this tests; under -race on a loaded machine the budget could refuse prompts too
	d := bootConfigured(t, owner(), cfg, burstScript, map[string]string{"stream_timeout_secs": "3600"})
	const conns, perConn = 4, 6
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for range conns {
		c := d.dial(t)
		for range perConn {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := agentclient.Run(ctx, c, agentclient.Prompt{Text: "hello", SessionID: agentclient.NewSessionID()}, nil)
				kind := ""
				switch {
				case err != nil:
					kind = "did not end: " + err.Error()
				case resp.Outcome == ipc.OutcomeAnswer && strings.HasPrefix(resp.Text, "word word"):
					kind = "answered"
				case resp.Outcome == ipc.OutcomeBusy && strings.Contains(resp.Text, "did not take this prompt"):
					kind = "not taken"
				case strings.Contains(resp.Text, "The model's answer was cut") && strings.Contains(resp.Text, "queue_depth"):
					kind = "cut"
				default:
					kind = fmt.Sprintf("other: %s %q", resp.Outcome, resp.Text)
				}
				mu.Lock()
				outcomes[kind]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if outcomes["answered"]+outcomes["not taken"]+outcomes["cut"] != conns*perConn {
		t.Fatalf("outcomes %v: every turn should have ended answered, not taken or cut", outcomes)
	}
	if outcomes["answered"] == 0 {
		t.Fatalf("outcomes %v: no turn was answered", outcomes)
	}
	t.Logf("outcomes %v, dispatch %+v", outcomes, d.k.Dispatcher.Stats())
}

// TestALostStreamEventCutsTheTurnAtOnce: a stream longer than the agent's
// queue and its headroom (one call, sixteen for admitted work) loses
// events at the agent's queue; the kernel tells the agent, which ends the
// turn at once saying the answer was cut and what to raise — not after the
// stream timeout (an hour here; the test's guard is a minute).
func TestALostStreamEventCutsTheTurnAtOnce(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.QueueDepth = 1
	long := `{"match": {"user": ""}}
` + strings.Repeat(`{"TextDelta": "word "}
`, 200) + `"Done"
`
	d := bootConfigured(t, owner(), cfg, long, map[string]string{"stream_timeout_secs": "3600"})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	resp, err := agentclient.Run(ctx, d.dial(t), agentclient.Prompt{Text: "hello", SessionID: agentclient.NewSessionID()}, nil)
	if err != nil {
		t.Fatalf("the turn did not end: %v", err)
	}
	if resp.Outcome != ipc.OutcomeError || !strings.Contains(resp.Text, "The model's answer was cut") || !strings.Contains(resp.Text, "queue_depth") {
		t.Fatalf("the turn ended %s: %q; want it cut, naming queue_depth", resp.Outcome, resp.Text)
	}
	if s := d.k.Dispatcher.Stats(); s.QueueDrops == 0 || s.DropsAnswered == 0 {
		t.Fatalf("dispatch %+v: want stream events dropped and the agent told", s)
	}
}

// TestAPublishNotAdmittedNowIsBusy: a client over its principal's publish
// rate is answered busy — nothing was published, it may pass later — and
// the error reads as the kernel's own refusal, as in process.
func TestAPublishNotAdmittedNowIsBusy(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec, cfg.Limits.RateBurstBytes = 1024, 2048
	d := bootConfigured(t, owner(), cfg, burstScript, nil)
	c := d.dial(t)
	payload := json.RawMessage(`{"pad":"` + strings.Repeat("x", 900) + `"}`)
	var err error
	for range 10 {
		if _, err = c.Publish(dispatch.Caller{}, ipc.RegistryGetProvidersTopic, payload); err != nil {
			break
		}
	}
	var de *daemonclient.Error
	if !errors.As(err, &de) || de.Code != uplinkwire.CodeBusy || !errors.Is(err, dispatch.ErrRateLimited) {
		t.Fatalf("publishing past the rate: %v; want busy, read as dispatch.ErrRateLimited", err)
	}
}
