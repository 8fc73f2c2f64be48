package wasm_test

// The wasm engine's peer: the no-op call of internal/engine/wasm's
// BenchmarkABINoop through the Extism Go SDK. Run beside it:
//
//	GOMAXPROCS=2 go test -run '^$' -bench ABINoop -count 10 ./internal/engine/wasm/
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench ExtismNoop -count 10 ./wasm/

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/astrid-go/astrid/internal/engine/wasm"
	"github.com/astrid-go/astrid/internal/testutil"
)

// extismNoop assembles testdata/noop.wat into a temp dir with
// wat2wasm (Debian's wabt; scripts/install-bench-tools.sh installs it).
func extismNoop(b *testing.B) string {
	b.Helper()
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		b.Skip("wat2wasm not found: install Debian's wabt (scripts/install-bench-tools.sh) to run the Extism peer")
	}
	out := filepath.Join(b.TempDir(), "noop.wasm")
	if msg, err := exec.Command(wat2wasm, "testdata/noop.wat", "-o", out).CombinedOutput(); err != nil {
		b.Fatalf("wat2wasm: %v: %s", err, msg)
	}
	return out
}

// noopPayload is the payload of BenchmarkABINoop's invocation.
var noopPayload = []byte(`{"call_id":"c1","tool_name":"x","arguments":{}}`)

// BenchmarkExtismNoop is the peer a Go user would otherwise pick: the same
// no-op call through the Extism Go SDK, driven like BenchmarkABINoop (same
// loop, same kind of context, the invocation's payload as the plugin's
// input), on a wazero runtime configured like ours (close on context done,
// the same memory limit).
func BenchmarkExtismNoop(b *testing.B) {
	path := extismNoop(b)
	ctx, cancel := context.WithTimeout(context.Background(), wasm.DefaultCallDeadline)
	defer cancel()
	plugin, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmFile{Path: path}}}, extism.PluginConfig{
		RuntimeConfig: wazero.NewRuntimeConfig().
			WithCloseOnContextDone(true).
			WithMemoryLimitPages(wasm.DefaultMemoryLimitMiB * 16),
		EnableWasi: true,
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = plugin.Close(context.Background()) }()
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if rc, _, err := plugin.CallWithContext(ctx, "noop", noopPayload); err != nil || rc != 0 {
			b.Fatalf("noop: rc %d, %v", rc, err)
		}
		lat = append(lat, time.Since(start))
	}
	testutil.ReportLatency(b, lat, "")
}
