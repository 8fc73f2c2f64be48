package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// Issue 15.8: a tool whose result is over the bus's message cap answers
// saying so, not that the capsule trapped, in both engines.
func TestResultOverTheMessageCapSaysSo(t *testing.T) {
	for _, engine := range []string{"native", "wasm"} {
		t.Run(engine, func(t *testing.T) {
			builtins := Builtins()
			if engine == "wasm" {
				builtins = []Builtin{}
			}
			k, ws := bootTest(t, builtins)
			if engine == "wasm" {
				loadBuiltinsAsWasm(t, k)
			}
			big := bytes.Repeat([]byte("a"), bus.DefaultMaxMessage+1)
			if err := os.WriteFile(filepath.Join(ws, "big.txt"), big, 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "read_file", json.RawMessage(`{"file_path":"big.txt"}`), testTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Content, "over the largest message the bus carries") || strings.Contains(res.Content, "trapped") {
				t.Fatalf("got %+v, want an error saying the result is too large", res)
			}
		})
	}
}
