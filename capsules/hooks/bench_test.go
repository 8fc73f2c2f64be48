package hooks_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/hooks"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// What the hooks capsule adds to a read-only call: nothing configured
// (one more chain link that reads its config and lets the call by), and
// one PreToolUse hook (a confined bash run that reads its input and exits
// 0), against the router alone.
func BenchmarkToolCallThroughHooks(b *testing.B) {
	principals := make([]string, 16)
	for i := range principals {
		principals[i] = "p" + strconv.Itoa(i)
	}
	withHooks := func(cfg hooks.Config) sdktest.Capsule {
		raw, err := json.Marshal(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return sdktest.Capsule{Manifest: hooks.Manifest, New: hooks.New, Config: map[string]string{hooks.ConfigKey: string(raw)}}
	}
	for _, tc := range []struct {
		name     string
		capsules []sdktest.Capsule
	}{
		{"router", []sdktest.Capsule{{Manifest: fs.Manifest, New: fs.New}}},
		{"hooks-none+router", []sdktest.Capsule{withHooks(hooks.Config{}), {Manifest: fs.Manifest, New: fs.New}}},
		{"hooks-one+router", []sdktest.Capsule{withHooks(hooks.Config{PreToolUse: []hooks.Hook{{Command: "cat >/dev/null"}}}), {Manifest: fs.Manifest, New: fs.New}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			k := sdktest.New(b, tc.capsules...)
			args := map[string]string{"dir_path": "."}
			b.ResetTimer()
			for i := range b.N {
				if res := k.CallToolAs(principals[i%len(principals)], "list_directory", args); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// What the after-tool hook adds to a turn of one read_file call (prompt,
// two model requests, the call, the answer): the agent stack without the
// hooks capsule, with it and no hook configured (one more round trip per
// call, answered at once), and with one PostToolUse hook (a confined bash
// run).
func BenchmarkTurnThroughAfterToolHook(b *testing.B) {
	script := toolTurn("read it", "c1", "read_file", map[string]string{"file_path": "a.txt"})
	for _, tc := range []struct {
		name string
		boot func(b *testing.B) *sdktest.Kernel
	}{
		{"no-hooks-capsule", func(b *testing.B) *sdktest.Kernel {
			k := sdktest.NewAgent(b, sdktest.AgentOptions{}, agentStack()...)
			write(b, k, "script.jsonl", script)
			return k
		}},
		{"hooks-none", func(b *testing.B) *sdktest.Kernel { return bootAgent(b, hooks.Config{}, script, nil) }},
		{"post-tool-use-one", func(b *testing.B) *sdktest.Kernel {
			return bootAgent(b, hooks.Config{PostToolUse: []hooks.Hook{{Command: "cat >/dev/null"}}}, script, nil)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			k := tc.boot(b)
			write(b, k, "a.txt", "text")
			b.ResetTimer()
			for i := range b.N {
				r := k.RunPrompt(ipc.DefaultPrincipal, "s"+strconv.Itoa(i), "read it", ipc.PromptContext{})
				if r.Final.Outcome != ipc.OutcomeAnswer {
					b.Fatalf("turn %+v", r.Final)
				}
			}
		})
	}
}
