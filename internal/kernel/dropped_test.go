package kernel

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

var blockerManifest = []byte(`
[package]
name = "blocker"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.block" = { wit = "tool-execute-request", handler = "tool_execute_block" }

[publish]
"tool.v1.response.describe.blocker" = "opaque"
"tool.v1.execute.block.result" = "tool-execute-result"
`)

// quietPrincipal's calls of the blocker's tool return at once.
const quietPrincipal = "quiet"

// newBlocker's tool waits until release is closed (a test capsule, not a
// built-in: the no-channels rule is for capsules/).
func newBlocker(release <-chan struct{}) func() *sdk.Capsule {
	return func() *sdk.Capsule {
		c := sdk.New("blocks until released")
		sdk.Tool(c, "block", "waits", func(call *sdk.Call, _ struct{}) (string, error) {
			if call.Principal() == quietPrincipal {
				return "not blocked", nil
			}
			<-release
			return "released", nil
		})
		return c
	}
}

// A tool call dropped because its capsule's queue is full is answered at
// once, as that capsule, with an error saying why; no caller waits for its
// timeout, and the calls that were queued run once the capsule is free.
func TestADroppedToolCallIsAnsweredAtOnce(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.QueueDepth = 1
	release := make(chan struct{})
	k, _ := bootTestConfig(t, append(Builtins(), Builtin{Manifest: blockerManifest, New: newBlocker(release)}), cfg)

	const calls = 6
	results := make(chan ipc.ToolCallResult, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "block", []byte(`{}`), testTimeout)
			if err != nil {
				res = ipc.ToolCallResult{Content: "no answer: " + err.Error(), IsError: true}
			}
			results <- res
		}()
	}
	// At most one call runs and one waits at the tool: the rest must be
	// refused now (at the tool's queue or the router's), while the blocker
	// still holds the first.
	refused := 0
	for refused < calls-2 {
		res := <-results
		// A refusal can itself be dropped at the router's full queue; its
		// caller then hears that the answer was lost.
		if !res.IsError || !strings.Contains(res.Content, "queue is full") || !(strings.Contains(res.Content, "was not taken") || strings.Contains(res.Content, "was lost")) {
			close(release)
			t.Fatalf("while the tool was busy a call got %+v, want a queue-full refusal", res)
		}
		refused++
	}
	close(release)
	wg.Wait()
	close(results)
	ran := 0
	for res := range results {
		switch {
		case !res.IsError && res.Content == "released":
			ran++
		case res.IsError && strings.Contains(res.Content, "queue is full") && (strings.Contains(res.Content, "was not run") || strings.Contains(res.Content, "answer was lost")):
			// the router's queue may refuse too; it answers the same way
		default:
			t.Fatalf("a call got %+v, want it run or refused for a full queue", res)
		}
	}
	if ran == 0 {
		t.Fatal("no call ran once the tool was free")
	}
	st := k.Dispatcher.Stats()
	if st.QueueDrops < calls-2 || st.DropsAnswered < calls-2 || st.DropsAnswered > st.QueueDrops {
		t.Fatalf("queue drops counted %d, answered %d; want at least %d of each", st.QueueDrops, st.DropsAnswered, calls-2)
	}
}

// A principal flooding a tool gets refusals at once, while another
// principal's call of the same tool runs as if nothing happened: queues
// are per (capsule, principal), and a full one refuses only its own.
func TestAFloodingPrincipalLeavesAQuietOneUnaffected(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.QueueDepth = 2
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	k, _ := bootTestConfig(t, append(Builtins(), Builtin{Manifest: blockerManifest, New: newBlocker(release)}), cfg)

	const flood = 20
	results := make(chan ipc.ToolCallResult, flood)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := k.CallTool(context.Background(), "flood", "block", []byte(`{}`), testTimeout)
			if err != nil {
				res = ipc.ToolCallResult{Content: "no answer: " + err.Error(), IsError: true}
			}
			results <- res
		}()
	}
	// Wait until the flood is being refused, so the quiet call comes while
	// the flooding principal's queues are full.
	for refused := 0; refused < flood/2; refused++ {
		if res := <-results; !res.IsError || !strings.Contains(res.Content, "queue is full") {
			t.Fatalf("a flooding call got %+v, want a queue-full refusal", res)
		}
	}
	for i := range 3 {
		res, err := k.CallTool(context.Background(), quietPrincipal, "block", []byte(`{}`), testTimeout)
		if err != nil || res.IsError || res.Content != "not blocked" {
			t.Fatalf("quiet call %d during the flood: %+v, %v", i, res, err)
		}
	}
	close(release)
}

var waiterManifest = []byte(`
[package]
name = "waiter"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.wait" = { wit = "tool-execute-request", handler = "tool_execute_wait" }

[publish]
"tool.v1.response.describe.waiter" = "opaque"
"tool.v1.execute.wait.result" = "tool-execute-result"
`)

// newWaiter's tool waits for its call to be cancelled, saying on started
// that it runs.
func newWaiter(started chan<- struct{}) func() *sdk.Capsule {
	return func() *sdk.Capsule {
		c := sdk.New("waits for its cancellation")
		sdk.Tool(c, "wait", "waits", func(call *sdk.Call, _ struct{}) (string, error) {
			started <- struct{}{}
			<-call.Context().Done()
			return "", call.Context().Err()
		})
		return c
	}
}

// Unloading a capsule answers every call it had: the one running gets the
// failure reply its tool registered (the capsule is already gone from the
// dispatcher when the cancelled call ends, yet the reply goes out under its
// ACL), and the ones still queued are told the capsule was unloaded before
// it took them. Nobody waits for a timeout.
func TestUnloadAnswersTheCallsACapsuleHad(t *testing.T) {
	started := make(chan struct{}, 8)
	k, _ := bootTestConfig(t, append(Builtins(), Builtin{Manifest: waiterManifest, New: newWaiter(started)}), config.Default())

	const calls = 3
	results := make(chan ipc.ToolCallResult, calls)
	var wg sync.WaitGroup
	call := func() {
		defer wg.Done()
		res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "wait", []byte(`{}`), testTimeout)
		if err != nil {
			res = ipc.ToolCallResult{Content: "no answer: " + err.Error(), IsError: true}
		}
		results <- res
	}
	wg.Add(1)
	go call()
	<-started // the first call runs; the next ones queue behind it
	for range calls - 1 {
		wg.Add(1)
		go call()
	}
	for k.Dispatcher.Queued("waiter") < calls-1 {
		runtime.Gosched()
	}
	if err := k.Unload(context.Background(), "waiter"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	var cut, queuedCut int
	for res := range results {
		t.Logf("answer: %+v", res)
		switch {
		case res.IsError && strings.Contains(res.Content, "was unloaded before it took the call"):
			queuedCut++
		case res.IsError && !strings.Contains(res.Content, "no answer"):
			cut++
		default:
			t.Fatalf("a call of the unloaded capsule got %+v", res)
		}
	}
	if cut != 1 || queuedCut != calls-1 {
		t.Fatalf("running call answered %d times, queued calls %d times; want 1 and %d", cut, queuedCut, calls-1)
	}
	if st := k.Dispatcher.Stats(); st.DropsAnswered < calls-1 {
		t.Fatalf("answered drops counted %d, want %d", st.DropsAnswered, calls-1)
	}
}
