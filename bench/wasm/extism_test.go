//go:build bench

package wasm

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// extismNoop assembles testdata/extism/noop.wat into a temp dir with
// wat2wasm (Debian's wabt; scripts/install-bench-tools.sh installs it).
func extismNoop(b *testing.B) string {
	b.Helper()
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		b.Skip("wat2wasm not found: install Debian's wabt (scripts/install-bench-tools.sh) to run the Extism peer")
	}
	out := filepath.Join(b.TempDir(), "noop.wasm")
	if msg, err := exec.Command(wat2wasm, "testdata/extism/noop.wat", "-o", out).CombinedOutput(); err != nil {
		b.Fatalf("wat2wasm: %v: %s", err, msg)
	}
	return out
}

// BenchmarkExtismNoop is the peer a Go user would otherwise pick: the same
// no-op call through the Extism Go SDK, driven like BenchmarkABINoop (same
// loop, same kind of context, the invocation's payload as the plugin's
// input), on a wazero runtime configured like ours (close on context done,
// the same memory limit).
func BenchmarkExtismNoop(b *testing.B) {
	path := extismNoop(b)
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCallDeadline)
	defer cancel()
	plugin, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmFile{Path: path}}}, extism.PluginConfig{
		RuntimeConfig: wazero.NewRuntimeConfig().
			WithCloseOnContextDone(true).
			WithMemoryLimitPages(DefaultMemoryLimitMiB * 16),
		EnableWasi: true,
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = plugin.Close(context.Background()) }()
	lat := new(latencies)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if rc, _, err := plugin.CallWithContext(ctx, "noop", noopInv.Payload); err != nil || rc != 0 {
			b.Fatalf("noop: rc %d, %v", rc, err)
		}
		lat.add(time.Since(start))
	}
	lat.report(b)
}
