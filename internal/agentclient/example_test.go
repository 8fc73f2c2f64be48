package agentclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
)

// Run one turn and print its events as they come; this agent (a test
// fixture) streams a delta and then waits, so the turn is cancelled, and
// its final response says so.
func ExampleRun() {
	home, _ := os.MkdirTemp("", "agentclient-example")
	defer os.RemoveAll(home)
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: home, Workspace: home, Config: config.Default(),
		Logger:    slog.New(slog.DiscardHandler),
		Builtins:  []kernel.Builtin{{Manifest: fakeAgentManifest, New: newFakeAgent}},
		Frontends: []dispatch.CapsuleACL{agentclient.ACL()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close()

	prompt := agentclient.Prompt{SessionID: agentclient.NewSessionID(), Text: "hang"}
	final, err := agentclient.Run(context.Background(), k.Frontend(), prompt, func(t *agentclient.Turn, ev agentclient.Event) {
		line, _ := json.Marshal(ev.Value())
		fmt.Printf("%d %s\n", ev.Kind, trimIDs(line))
		if ev.Kind == agentclient.EventDelta {
			_ = t.Cancel()
		}
	})
	fmt.Println(final.Outcome, err)
	// Output:
	// 1 {"delta":"working"}
	// 5 {"is_final":true,"outcome":"cancelled","text":"Cancelled."}
	// cancelled <nil>
}

// trimIDs drops the random ids and the type tag from an event's JSON, so
// the example's output is fixed.
func trimIDs(line []byte) []byte {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	for _, k := range []string{"session_id", "turn_id", "request_id", "type"} {
		delete(m, k)
	}
	out, _ := json.Marshal(m)
	return out
}
