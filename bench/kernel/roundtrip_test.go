//go:build bench

package kernel

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/benchpeer"
	"github.com/astrid-go/astrid/internal/testutil"
)

// The peer of the tool call round trip: one NATS request/reply through an
// embedded nats-server (no listener, in-process connections), with a
// 256-byte request and a reply of the same small file's size.

func init() {
	roundTripImpls = append(roundTripImpls, roundTripImpl{"nats-request-reply", setupNATSRoundTrip})
}

func setupNATSRoundTrip(b *testing.B) (func() error, func()) {
	peer := benchpeer.StartNATS(b)
	requester, responder := peer.Connect("requester"), peer.Connect("responder")
	reply := []byte(`{"type":"tool_execute_result","call_id":"x","result":{"call_id":"x","content":"a small file\n","is_error":false}}`)
	if _, err := responder.Subscribe("tool.v1.request.execute", func(m *nats.Msg) { _ = m.Respond(reply) }); err != nil {
		b.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		b.Fatal(err)
	}
	req := []byte(`{"type":"tool_execute_request","call_id":"call_0123456789abcdef0123456789abcdef","tool_name":"read_file","arguments":{"file_path":"small.txt"}}`)
	roundTrip := func() error {
		_, err := requester.Request("tool.v1.request.execute", req, 5*time.Second)
		return err
	}
	return roundTrip, func() {}
}

// BenchmarkRoundTripInterleaved is BenchmarkRoundTrip's two sides, the
// whole tool call and one NATS request/reply, taking turns call by call in
// one run: the drift of this VM over the minutes between sequential counts
// then falls on both alike. Reported: each side's mean and p50, and the
// ratios ours ÷ NATS.
//
//	GOMAXPROCS=2 go test -tags bench -run '^$' -bench RoundTripInterleaved -count 10 ./internal/kernel/
func BenchmarkRoundTripInterleaved(b *testing.B) {
	k, ws := bootBench(b, nil)
	ours, closeOurs := toolRoundTrip(b, k, ws)
	defer closeOurs()
	peer, closePeer := setupNATSRoundTrip(b)
	defer closePeer()
	testutil.Interleave(b, 100, "astrid", "nats", ours, peer)
}

// BenchmarkRoundTripNoIOInterleaved is BenchmarkRoundTripNoIO (the tool
// call without its file read: the kernel's own share) and NATS's
// request/reply taking turns call by call.
//
//	GOMAXPROCS=2 go test -tags bench -run '^$' -bench RoundTripNoIOInterleaved -count 10 ./internal/kernel/
func BenchmarkRoundTripNoIOInterleaved(b *testing.B) {
	ours, closeOurs := echoRoundTrip(b)
	defer closeOurs()
	peer, closePeer := setupNATSRoundTrip(b)
	defer closePeer()
	testutil.Interleave(b, 100, "astrid", "nats", ours, peer)
}
