package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/metrics"
	"github.com/astrid-go/astrid/internal/telemetry"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient/toolclienttest"
	"github.com/astrid-go/astrid/ipc"
)

// observeModes are what BenchmarkObserved turns on in the observed kernel.
var observeModes = []struct {
	name             string
	tracing, metrics bool
}{
	{"tracing", true, false},
	{"metrics", false, true},
	{"tracing+metrics", true, true},
}

// observed boots the agent stack with tracing (stdout exporter into
// /dev/null: the batcher and the JSON encoding are paid as in production)
// and/or metrics (the handler built, so its observer runs) as mode says.
func observed(b *testing.B, tracing, withMetrics bool) *kernel.Kernel {
	b.Helper()
	var edit []func(*kernel.Options)
	if tracing {
		var tc config.Telemetry
		switch os.Getenv("OBS_EXPORTER") {
		case "stdout":
			tc = config.Telemetry{Tracing: config.TracingStdout, TraceFile: "/dev/null"}
		default:
			sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
			}))
			b.Cleanup(sink.Close)
			tc = config.Telemetry{Tracing: config.TracingOTLP, OTLPEndpoint: sink.URL}
		}
		tr, err := telemetry.New(tc, b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		edit = append(edit, func(o *kernel.Options) { o.Tracer = tr })
	}
	k := kernel.BootAgentForTest(b, kernel.FiveReadsScript(), edit...)
	if withMetrics {
		_ = metrics.New(k)
	}
	return k
}

// BenchmarkObserved is issue 21's Show benchmark: the kernel with tracing
// and/or metrics on against the same kernel with both off, in the same run,
// the two taking turns call by call (testutil.Interleave); ratio-mean is
// on/off latency, so throughput on/off is its inverse (goal: ≥ 0.9×, i.e.
// ratio-mean ≤ 1.11). Two loads: a tool call round trip (read_file through
// the approval layer and the router; not part of a turn, so tracing only
// looks at each publish) and a whole replayed agent turn with five tool
// calls (every hop traced: ~40 spans a turn). Run:
//
//	GOMAXPROCS=2 go test -run '^$' -bench Observed -count 5 -p 1 ./internal/kernel/
func BenchmarkObserved(b *testing.B) {
	for _, mode := range observeModes {
		b.Run("load=tool-call/mode="+mode.name, func(b *testing.B) {
			off, on := observed(b, false, false), observed(b, mode.tracing, mode.metrics)
			args := json.RawMessage(`{"file_path":"README.md"}`)
			offCall, closeOff := toolclienttest.RoundTrip(b, off.Frontend(), "read_file", args, "")
			defer closeOff()
			onCall, closeOn := toolclienttest.RoundTrip(b, on.Frontend(), "read_file", args, "")
			defer closeOn()
			testutil.Interleave(b, 100, "on", "off", onCall, offCall)
		})
		b.Run("load=agent-turn/mode="+mode.name, func(b *testing.B) {
			off, on := observed(b, false, false), observed(b, mode.tracing, mode.metrics)
			turn := func(k *kernel.Kernel) func() error {
				i := 0
				return func() error {
					i++
					final, err := agentclient.Run(context.Background(), k.Frontend(), agentclient.Prompt{SessionID: fmt.Sprintf("b%d", i), Text: "read it five times"}, nil)
					if err == nil && final.Outcome != ipc.OutcomeAnswer {
						err = fmt.Errorf("turn %d: %+v", i, final)
					}
					return err
				}
			}
			testutil.Interleave(b, 5, "on", "off", turn(on), turn(off))
		})
	}
}
