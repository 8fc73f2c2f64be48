package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// TestRunUntilTakenSendsABusyPromptAgain: a prompt the agent did not take
// is sent again until it is taken, saying so once; an error or another
// outcome ends at once; a context that ends while waiting returns the busy
// answer.
func TestRunUntilTakenSendsABusyPromptAgain(t *testing.T) {
	busy := ipc.AgentResponse{Outcome: ipc.OutcomeBusy, Text: "The agent did not take this prompt"}
	answer := ipc.AgentResponse{Outcome: ipc.OutcomeAnswer, Text: "hi"}
	var stderr bytes.Buffer
	calls := 0
	got, err := runUntilTaken(context.Background(), &stderr, func() (ipc.AgentResponse, error) {
		calls++
		if calls < 3 {
			return busy, nil
		}
		return answer, nil
	})
	if err != nil || got != answer || calls != 3 {
		t.Fatalf("got %+v, %v after %d runs; want the answer on the third", got, err, calls)
	}
	if n := strings.Count(stderr.String(), "the agent is busy"); n != 1 {
		t.Fatalf("said it waits %d times: %q", n, stderr.String())
	}

	// The kernel not admitting the prompt now — through the daemon, or in
	// process — is sent again too.
	for _, notNow := range []error{
		fmt.Errorf("agentclient: the prompt was not sent: %w", &daemonclient.Error{Code: uplinkwire.CodeBusy, Message: "CPU budget"}),
		fmt.Errorf("agentclient: the prompt was not sent: %w", dispatch.ErrNotAdmitted),
	} {
		calls = 0
		got, err = runUntilTaken(context.Background(), &stderr, func() (ipc.AgentResponse, error) {
			calls++
			if calls == 1 {
				return ipc.AgentResponse{}, notNow
			}
			return answer, nil
		})
		if err != nil || got != answer || calls != 2 {
			t.Fatalf("%v: got %+v, %v after %d runs; want the answer on the second", notNow, got, err, calls)
		}
	}
	calls = 0
	if _, err := runUntilTaken(context.Background(), &stderr, func() (ipc.AgentResponse, error) {
		calls++
		return ipc.AgentResponse{}, &daemonclient.Error{Code: uplinkwire.CodeFailed, Message: "denied"}
	}); err == nil || calls != 1 {
		t.Fatalf("a refusal that is not for now: %v after %d runs", err, calls)
	}

	calls = 0
	boom := errors.New("boom")
	if _, err := runUntilTaken(context.Background(), &stderr, func() (ipc.AgentResponse, error) { calls++; return busy, boom }); !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("an error: %v after %d runs", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	got, err = runUntilTaken(ctx, &stderr, func() (ipc.AgentResponse, error) {
		calls++
		cancel()
		return busy, nil
	})
	if err != nil || got.Outcome != ipc.OutcomeBusy || calls != 1 {
		t.Fatalf("a context ended while busy: %+v, %v after %d runs", got, err, calls)
	}
}

// TestParallelPromptsAgainstABusyAgent: sixteen `astrid -p` processes at
// once against a daemon whose capsules take one call of a principal at a
// time (queue_depth = 1) and whose agent runs one turn of a principal at a
// time (max_turns_in_flight = 1). A prompt the agent does not take —
// its queue full, or a turn of the principal running — is answered "busy"
// at once, nothing ran, and the client sends it again: every process ends
// with the answer. With the agent's own bound off (its default, 32), the
// later stages' queues of one call overflow instead and some turns end
// with an error (docs/rationale/cli.md); the bound is what keeps them within depth.
func TestParallelPromptsAgainstABusyAgent(t *testing.T) {
	ws := promptHome(t, `{"match": {"user": ""}}
{"TextDelta": "Taken "}
{"TextDelta": "in turn."}
"Done"
`)
	home := os.Getenv("ASTRID_HOME")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[limits]\nqueue_depth = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runAstrid(t, "1", "capsule", "env", "set", "astrid-capsule-react", "max_turns_in_flight"); code != 0 {
		t.Fatalf("env set max_turns_in_flight: exit %d: %s", code, errOut)
	}
	startDaemonProcess(t, home, ws, "busy", nil)
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	var retried int
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := astridProcess(home, "-p", fmt.Sprintf("question %d", i), "--provider", "replay", "--timeout", "2m")
			p.Dir = ws // the replay script is read through the caller's workspace
			var out, errOut bytes.Buffer
			p.Stdout, p.Stderr = &out, &errOut
			if err := p.Run(); err != nil || !strings.Contains(out.String(), "Taken in turn.") {
				t.Errorf("astrid -p %d: %v\nstdout: %s\nstderr: %s", i, err, out.String(), errOut.String())
			}
			if strings.Contains(errOut.String(), "the agent is busy") {
				mu.Lock()
				retried++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d prompts were sent again after a busy answer", retried, n)
	if retried == 0 {
		t.Fatal("no prompt was answered busy: the test did not press the agent")
	}
}
