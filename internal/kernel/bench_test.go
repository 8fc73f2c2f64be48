package kernel

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// Benchmarks per DESIGN §7. Run (the NATS peer needs the bench tag):
//
//	GOMAXPROCS=2 go test -tags bench -run '^$' -bench RoundTrip -count 10 -p 1 ./internal/kernel/
//
// roundTripImpls is the table of implementations driven by the same closed
// loop; nats_bench_test.go adds NATS request/reply under the bench tag.

type roundTripImpl struct {
	name  string
	setup func(b *testing.B) (roundTrip func() error, teardown func())
}

var roundTripImpls = []roundTripImpl{{"astrid-tool-call", setupToolRoundTrip}}

// BenchmarkRoundTrip measures one request in flight at a time: for astrid, a
// whole tool call (tool.v1.request.execute → router → fs read_file of a
// small file → router → tool.v1.execute.result) with native capsules; for a
// peer, one request/reply.
func BenchmarkRoundTrip(b *testing.B) {
	for _, impl := range roundTripImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			roundTrip, teardown := impl.setup(b)
			defer teardown()
			for range 100 { // warm up
				if err := roundTrip(); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if err := roundTrip(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Nanoseconds()) }
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
}

// setupToolRoundTrip drives the bus as an orchestrator does: one long-lived
// subscription to tool.v1.execute.result, a fresh call id per call.
func setupToolRoundTrip(b *testing.B) (func() error, func()) {
	k, ws := bootTest(b, nil)
	if err := os.WriteFile(filepath.Join(ws, "small.txt"), []byte("a small file\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	caller := dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal}
	sub, err := k.Dispatcher.Subscribe(caller, ipc.ToolExecuteResultTopic, true)
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"file_path":"small.txt"}`)
	ctx := context.Background()
	roundTrip := func() error {
		id := NewCallID()
		req, err := ipc.EncodePayload(ipc.ToolExecuteRequest{CallID: id, ToolName: "read_file", Arguments: args})
		if err != nil {
			return err
		}
		if _, err := k.Dispatcher.Publish(caller, ipc.ToolRequestExecuteTopic, req); err != nil {
			return err
		}
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return err
			}
			var res ipc.ToolExecuteResult
			if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &res); err != nil {
				return err
			}
			if res.CallID == id {
				if res.Result.IsError {
					b.Fatalf("tool error: %s", res.Result.Content)
				}
				return nil
			}
		}
	}
	return roundTrip, sub.Close
}
