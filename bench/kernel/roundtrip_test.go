package kernel_test

// The tool call round trip against its peer, one NATS request/reply through
// an embedded nats-server (no listener, in-process connections), with a
// 256-byte request and a reply of the same small file's size. Our side is
// internal/kernel's round trip (toolclienttest), on a kernel booted as
// cmd/astrid boots it.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/bench/natspeer"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/toolclient/toolclienttest"
)

// boot boots a kernel with the built-ins and extra, and the per-(capsule,
// principal) rate limit (10 MiB/s by default) raised: a closed loop of tool
// calls publishes more than that, and the benchmark measures the round
// trip, not the limiter.
func boot(b *testing.B, extra ...kernel.Builtin) (*kernel.Kernel, string) {
	b.Helper()
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec = 1 << 40
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	builtins := append([]kernel.Builtin{
		{Manifest: router.Manifest, New: router.New},
		{Manifest: fs.Manifest, New: fs.New},
	}, extra...)
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: b.TempDir(), Workspace: ws, Config: cfg,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Builtins:  builtins,
		Frontends: []dispatch.CapsuleACL{toolclient.ACL()},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	return k, ws
}

// BenchmarkNATSRequestReply is the peer alone, in the closed loop of
// internal/kernel's BenchmarkRoundTrip.
func BenchmarkNATSRequestReply(b *testing.B) {
	roundTrip, teardown := setupNATSRoundTrip(b)
	defer teardown()
	testutil.ClosedLoop(b, 100, roundTrip)
}

func setupNATSRoundTrip(b *testing.B) (func() error, func()) {
	peer := natspeer.StartNATS(b)
	return toolRequestReply(b, peer.Connect("requester"), peer.Connect("responder"), "tool.v1.request.execute"), func() {}
}

// toolRequestReply has responder answer requests on subject with a small
// file's tool result and returns one request of a tool call's size from
// requester.
func toolRequestReply(b *testing.B, requester, responder *nats.Conn, subject string) func() error {
	b.Helper()
	reply := []byte(`{"type":"tool_execute_result","call_id":"x","result":{"call_id":"x","content":"a small file\n","is_error":false}}`)
	if _, err := responder.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond(reply) }); err != nil {
		b.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		b.Fatal(err)
	}
	req := []byte(`{"type":"tool_execute_request","call_id":"call_0123456789abcdef0123456789abcdef","tool_name":"read_file","arguments":{"file_path":"small.txt"}}`)
	return func() error {
		_, err := requester.Request(subject, req, 5*time.Second)
		return err
	}
}

// BenchmarkRoundTripInterleaved is internal/kernel's BenchmarkRoundTrip
// (native built-ins) and one NATS request/reply, taking turns call by call in
// one run: the drift of this VM over the minutes between sequential counts
// then falls on both alike. Reported: each side's mean and p50, and the
// ratios ours ÷ NATS.
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench RoundTripInterleaved -count 10 ./kernel/
func BenchmarkRoundTripInterleaved(b *testing.B) {
	k, ws := boot(b)
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	ours, closeOurs := toolclienttest.RoundTrip(b, k.Frontend(), "read_file", json.RawMessage(`{"file_path":"small.txt"}`), "")
	defer closeOurs()
	peer, closePeer := setupNATSRoundTrip(b)
	defer closePeer()
	testutil.Interleave(b, 100, "astrid", "nats", ours, peer)
}

// BenchmarkRoundTripNoIOInterleaved is internal/kernel's
// BenchmarkRoundTripNoIO (the tool call without its file read: the
// kernel's own share) and NATS's request/reply taking turns call by call.
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench RoundTripNoIOInterleaved -count 10 ./kernel/
func BenchmarkRoundTripNoIOInterleaved(b *testing.B) {
	k, _ := boot(b, kernel.Builtin{Manifest: toolclienttest.EchoManifest, New: toolclienttest.NewEcho})
	ours, closeOurs := toolclienttest.RoundTrip(b, k.Frontend(), "echo", toolclienttest.EchoArgs, toolclienttest.EchoWant)
	defer closeOurs()
	peer, closePeer := setupNATSRoundTrip(b)
	defer closePeer()
	testutil.Interleave(b, 100, "astrid", "nats", ours, peer)
}
