package kernel

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

var tickerManifest = []byte(`
[package]
name = "ticker"
version = "0.1.0"

[capabilities]
kv = ["ticks"]

[subscribe]
"astrid.v1.watchdog.tick" = { wit = "opaque", handler = "on_tick" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.ticks" = { wit = "opaque", handler = "tool_execute_ticks" }

[publish]
"tool.v1.response.describe.ticker" = "opaque"
"tool.v1.execute.ticks.result" = "opaque"
`)

// newTicker counts the watchdog ticks it sees in the KV of the principal
// each tick runs for; its tool answers that count for the caller.
func newTicker() *sdk.Capsule {
	c := sdk.New("counts watchdog ticks")
	c.Handle(ipc.WatchdogTickTopic, "on_tick", func(call *sdk.Call) error {
		n, err := readCount(call)
		if err != nil {
			return err
		}
		return call.KVSet("~ticks", []byte(strconv.Itoa(n+1)))
	})
	sdk.Tool(c, "ticks", "ticks seen for the caller", func(call *sdk.Call, _ struct{}) (string, error) {
		n, err := readCount(call)
		return strconv.Itoa(n), err
	})
	return c
}

func readCount(call *sdk.Call) (int, error) {
	v, ok, err := call.KVGet("~ticks")
	if err != nil || !ok {
		return 0, err
	}
	return strconv.Atoi(string(v))
}

// The watchdog ticks every principal the kernel has admitted work for, as
// that principal (so a handler reaches that principal's state), and the
// default principal; a principal that never acted gets none.
func TestWatchdogTicksEveryPrincipalThatActed(t *testing.T) {
	cfg := config.Default()
	cfg.WatchdogInterval.Duration = 10 * time.Millisecond
	k, _ := bootTestConfig(t, append(Builtins(), Builtin{Manifest: tickerManifest, New: newTicker}), cfg)
	count := func(principal string) int {
		t.Helper()
		res, err := k.CallTool(context.Background(), principal, "ticks", []byte(`{}`), testTimeout)
		if err != nil || res.IsError {
			t.Fatalf("ticks as %s: %v %+v", principal, err, res)
		}
		n, err := strconv.Atoi(res.Content)
		if err != nil {
			t.Fatalf("ticks as %s: %q", principal, res.Content)
		}
		return n
	}
	// The first call admits alice; ticks reach her after it.
	count("alice")
	for _, p := range []string{"alice", ipc.DefaultPrincipal} {
		testutil.WaitFor(t, testTimeout, "a watchdog tick to reach principal "+p, func() bool { return count(p) != 0 })
	}
	if got := k.tickPrincipals(); len(got) != 2 || got[0] != ipc.DefaultPrincipal || got[1] != "alice" {
		t.Fatalf("tick principals = %v, want [default alice]", got)
	}
}

// With the interval at zero there is no watchdog.
func TestWatchdogOff(t *testing.T) {
	cfg := config.Default()
	cfg.WatchdogInterval.Duration = 0
	k, _ := bootTestConfig(t, append(Builtins(), Builtin{Manifest: tickerManifest, New: newTicker}), cfg)
	// A negative, so only time shows it: a slow machine only makes it
	// weaker, never fail.
	time.Sleep(30 * time.Millisecond)
	res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "ticks", []byte(`{}`), testTimeout)
	if err != nil || res.Content != "0" {
		t.Fatalf("ticks with the watchdog off = %q, %v; want 0", res.Content, err)
	}
}

var loadWatchManifest = []byte(`
[package]
name = "loadwatch"
version = "0.1.0"

[capabilities]
kv = ["loaded"]

[subscribe]
"astrid.v1.capsules_loaded" = { wit = "opaque", handler = "on_loaded" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.loaded" = { wit = "opaque", handler = "tool_execute_loaded" }

[publish]
"tool.v1.response.describe.loadwatch" = "opaque"
"tool.v1.execute.loaded.result" = "opaque"
`)

// newLoadWatch counts, in the KV of the principal each event runs for, the
// capsules_loaded events it hears; its tool answers the caller's count.
func newLoadWatch() *sdk.Capsule {
	c := sdk.New("counts capsules_loaded events")
	c.Handle(ipc.CapsulesLoadedTopic, "on_loaded", func(call *sdk.Call) error {
		v, _, err := call.KVGet("~loaded")
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(string(v))
		return call.KVSet("~loaded", []byte(strconv.Itoa(n+1)))
	})
	sdk.Tool(c, "loaded", "capsules_loaded events seen for the caller", func(call *sdk.Call, _ struct{}) (string, error) {
		v, ok, err := call.KVGet("~loaded")
		if !ok {
			v = []byte("0")
		}
		return string(v), err
	})
	return c
}

// A change of the capsule set reaches every principal that has acted, as
// that principal, so per-principal caches of tools are cleared for all.
func TestCapsulesLoadedReachesEveryPrincipalThatActed(t *testing.T) {
	cfg := config.Default()
	cfg.WatchdogInterval.Duration = 0
	k, _ := bootTestConfig(t, append(Builtins(), Builtin{Manifest: loadWatchManifest, New: newLoadWatch}), cfg)
	count := func(principal string) string {
		t.Helper()
		res, err := k.CallTool(context.Background(), principal, "loaded", []byte(`{}`), testTimeout)
		if err != nil || res.IsError {
			t.Fatalf("loaded as %s: %v %+v", principal, err, res)
		}
		return res.Content
	}
	if got := count("alice"); got != "0" {
		t.Fatalf("alice saw %s capsules_loaded events before acting", got)
	}
	if err := k.LoadNative(context.Background(), Builtin{Manifest: tickerManifest, New: newTicker}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, testTimeout, "alice's capsules to hear the capsule set changed", func() bool { return count("alice") != "0" })
}
