package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient/toolclienttest"
	"github.com/astrid-go/astrid/ipc"
)

// Benchmarks per DESIGN §7. Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench RoundTrip -count 10 -p 1 ./internal/kernel/
//
// roundTripImpls is the table of implementations driven by the same closed
// loop. The comparisons with NATS's request/reply are in the bench module
// (bench/kernel), which shares the round trip (toolclienttest).

type roundTripImpl struct {
	name  string
	setup func(b *testing.B) (roundTrip func() error, teardown func())
}

var roundTripImpls = []roundTripImpl{{"astrid-tool-call", func(b *testing.B) (func() error, func()) {
	k, ws := bootBench(b, nil)
	return toolRoundTrip(b, k, ws)
}}}

// BenchmarkRoundTrip measures one request in flight at a time: for astrid, a
// whole tool call (tool.v1.request.execute → router → fs read_file of a
// small file → router → tool.v1.execute.result) with native capsules; for a
// peer, one request/reply.
func BenchmarkRoundTrip(b *testing.B) {
	for _, impl := range roundTripImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			roundTrip, teardown := impl.setup(b)
			defer teardown()
			testutil.ClosedLoop(b, 100, roundTrip)
		})
	}
}

// toolRoundTrip drives k's bus as an orchestrator does: one long-lived
// subscription to tool.v1.execute.result, a fresh call id per call, a
// read_file of a small file in ws.
func toolRoundTrip(b *testing.B, k *Kernel, ws string) (func() error, func()) {
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return toolclienttest.RoundTrip(b, k.Frontend(), "read_file", json.RawMessage(`{"file_path":"small.txt"}`), "")
}

// BenchmarkFileReadFloor is the part of the round trip no kernel design
// removes: the system calls of reading the benchmark's small file through
// os.Root as the fs host call does (open non-blocking, read to EOF, close),
// with nothing else. It is reported beside BenchmarkRoundTrip so the round
// trip's own cost can be told from the operating system's.
func BenchmarkFileReadFloor(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	testutil.ClosedLoop(b, 100, func() error {
		f, err := root.OpenFile("small.txt", os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, 1<<20))
		if err == nil && len(data) != 13 {
			err = fmt.Errorf("read %d bytes, want 13", len(data))
		}
		return err
	})
}

// BenchmarkReadFileSizes is the tool call round trip of BenchmarkRoundTrip
// with files of 13 B, 4 KiB and 64 KiB, natively and with router and fs as
// wasm: the content crosses the codec four times (fs's result, the router's
// decode and re-encode, the caller's decode) and the payload validator
// twice, so this is where their per-byte cost shows.
//
//	GOMAXPROCS=2 go test -run '^$' -bench ReadFileSizes -count 10 ./internal/kernel/
func BenchmarkReadFileSizes(b *testing.B) {
	for _, wasm := range []bool{false, true} {
		for _, size := range []int{13, 4 << 10, 64 << 10} {
			name := fmt.Sprintf("native/%dB", size)
			if wasm {
				name = fmt.Sprintf("wasm/%dB", size)
			}
			b.Run(name, func(b *testing.B) {
				var k *Kernel
				var ws string
				if wasm {
					k, ws = bootBench(b, []Builtin{})
					loadBuiltinsAsWasm(b, k)
				} else {
					k, ws = bootBench(b, nil)
				}
				// Lines of text, so that the content has newlines to escape.
				content := strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz\n", size/37+1)[:size]
				if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
				c, err := k.NewToolClient(ipc.DefaultPrincipal)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				args := json.RawMessage(`{"file_path":"f.txt"}`)
				b.SetBytes(int64(size))
				for b.Loop() {
					ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
					res, err := c.Call(ctx, NewCallID(), "read_file", args)
					cancel()
					if err != nil || res.IsError || len(res.Content) != size {
						b.Fatalf("read_file: %v, %+v", err, len(res.Content))
					}
				}
			})
		}
	}
}

// BenchmarkRoundTripNoIO is BenchmarkRoundTrip's tool call to a tool that
// does no I/O (echo, 13 bytes): the kernel's own share of the round trip —
// four publishes, three handler calls, the codec — to set beside the file
// read alone (BenchmarkFileReadFloor) and NATS's request/reply.
//
//	GOMAXPROCS=2 go test -run '^$' -bench RoundTripNoIO -count 10 ./internal/kernel/
func BenchmarkRoundTripNoIO(b *testing.B) {
	echo, closeEcho := echoRoundTrip(b)
	defer closeEcho()
	testutil.ClosedLoop(b, 100, echo)
}

// echoRoundTrip boots a kernel with the echo capsule and returns one
// tool call to it, as toolRoundTrip does for read_file.
func echoRoundTrip(b *testing.B) (func() error, func()) {
	k, _ := bootBench(b, append(Builtins(), Builtin{Manifest: toolclienttest.EchoManifest, New: toolclienttest.NewEcho}))
	return toolclienttest.RoundTrip(b, k.Frontend(), "echo", toolclienttest.EchoArgs, toolclienttest.EchoWant)
}
