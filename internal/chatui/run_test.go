package chatui

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// scriptedTurn plays events through Next and says when it is closed.
type scriptedTurn struct {
	fakeTurn
	events chan agentclient.Event
	done   chan struct{}
}

func (t *scriptedTurn) Next(ctx context.Context) (agentclient.Event, error) {
	select {
	case ev := <-t.events:
		return ev, nil
	case <-ctx.Done():
		return agentclient.Event{}, ctx.Err()
	}
}

func (t *scriptedTurn) Close() { close(t.done) }

type scriptedBackend struct {
	fakeBackend
	turn *scriptedTurn
}

func (b *scriptedBackend) start(context.Context, agentclient.Prompt) (turn, error) {
	return b.turn, nil
}

// The real program loop: a prompt typed on the input runs a turn whose
// text and tool call reach the output; two Ctrl-C after it leave, with
// every goroutine ended (TestMain) and the session returned.
func TestRunDrivesAProgram(t *testing.T) {
	st := &scriptedTurn{events: make(chan agentclient.Event, 8), done: make(chan struct{})}
	for _, ev := range []agentclient.Event{
		{Kind: agentclient.EventDelta, Delta: ipc.AgentStreamDelta{Delta: "first line\n"}},
		{Kind: agentclient.EventToolStarted, ToolStarted: ipc.AgentToolStarted{CallID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"file_path":"a"}`)}},
		{Kind: agentclient.EventToolFinished, ToolFinished: ipc.AgentToolFinished{CallID: "c1", Name: "read_file", Summary: "contents of a"}},
		{Kind: agentclient.EventDelta, Delta: ipc.AgentStreamDelta{Delta: "last words"}},
		{Kind: agentclient.EventFinal, Final: ipc.AgentResponse{Outcome: ipc.OutcomeAnswer, Text: "last words", IsFinal: true}},
	} {
		st.events <- ev
	}
	be := &scriptedBackend{turn: st}
	m := newModel(context.Background(), be, Options{SessionID: "s-run"})
	in, typed := io.Pipe()
	out := &testutil.SyncBuffer{}
	type result struct {
		session string
		err     error
	}
	ended := make(chan result, 1)
	go func() {
		s, err := run(context.Background(), m, in, out)
		ended <- result{s, err}
	}()
	if _, err := typed.Write([]byte("hello\r")); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", out.String())
		}
	}()
	testutil.WaitForRecv(t, time.Minute, "the turn to end", st.done)
	if _, err := typed.Write([]byte("\x03\x03")); err != nil {
		t.Fatal(err)
	}
	r := testutil.WaitForRecv(t, time.Minute, "two Ctrl-C to leave", ended)
	_ = typed.Close()
	if r.err != nil || r.session != "s-run" {
		t.Fatalf("run: %q, %v", r.session, r.err)
	}
	for _, want := range []string{"hello", "first line", `read_file {"file_path":"a"}`, "contents of a", "last words"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("the output lacks %q:\n%q", want, out.String())
		}
	}
}
