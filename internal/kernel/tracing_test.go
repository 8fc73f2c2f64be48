package kernel

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/telemetry"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// approvedWriteScript is a replayed turn that reads README.md, writes a
// file (which the approval capsule asks the person about), then answers.
const approvedWriteScript = `{"match": {"tool_results": ["r1","w1"]}}
{"TextDelta": "Read and written."}
"Done"
{"match": {"user": ""}}
{"ToolCallStart": {"id": "r1", "name": "read_file"}}
{"ToolCallDelta": {"id": "r1", "args_delta": "{\"file_path\":\"README.md\"}"}}
{"ToolCallEnd": {"id": "r1"}}
{"ToolCallStart": {"id": "w1", "name": "write_file"}}
{"ToolCallDelta": {"id": "w1", "args_delta": "{\"file_path\":\"out.txt\",\"content\":\"hi\"}"}}
{"ToolCallEnd": {"id": "w1"}}
"Done"
`

// A turn on a real kernel is one trace: the turn's span is its root, and
// every other span (the provider requests, the tool calls, the approval
// wait, each capsule invocation) hangs from it through parents that are in
// the trace; a tool call's capsule invocations nest under its span.
func TestTracingOneTracePerTurn(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	k := bootAgent(t, approvedWriteScript, func(o *Options) { o.Tracer = telemetry.NewWithExporter(exp, nil) })
	final, err := agentclient.Run(context.Background(), k.Frontend(), agentclient.Prompt{SessionID: "traced", Text: "read and write"},
		func(turn *agentclient.Turn, ev agentclient.Event) {
			if ev.Kind == agentclient.EventApproval {
				if err := turn.Answer(ev.Approval.RequestID, ipc.DecisionApprove); err != nil {
					t.Errorf("answer: %v", err)
				}
			}
		})
	if err != nil || final.Outcome != ipc.OutcomeAnswer {
		t.Fatalf("turn: %+v, %v", final, err)
	}
	// The turn's span ends when the final response is published, before
	// Run returns; a handler that published it may still be returning, and
	// its span ends when it has: wait until every parent named is there.
	var (
		spans  tracetest.SpanStubs
		byName map[string]int
		ids    map[[8]byte]tracetest.SpanStub
	)
	testutil.WaitFor(t, testTimeout, "every parent span named to have ended", func() bool {
		spans, byName, ids = exp.GetSpans(), map[string]int{}, map[[8]byte]tracetest.SpanStub{}
		for _, s := range spans {
			byName[s.Name]++
			ids[s.SpanContext.SpanID()] = s
		}
		whole := true
		for _, s := range spans {
			if _, ok := ids[s.Parent.SpanID()]; s.Parent.IsValid() && !ok {
				whole = false
			}
		}
		return whole
	})
	for name, want := range map[string]int{
		telemetry.SpanTurn: 1, telemetry.SpanProviderRequest: 2, telemetry.SpanToolCall: 2, telemetry.SpanApprovalWait: 1,
	} {
		if byName[name] != want {
			t.Errorf("%d %s spans, want %d (all: %v)", byName[name], name, want, byName)
		}
	}
	if byName[telemetry.SpanCapsuleInvoke] < 10 {
		t.Errorf("only %d capsule invocation spans", byName[telemetry.SpanCapsuleInvoke])
	}
	var root tracetest.SpanStub
	for _, s := range spans {
		if s.Name == telemetry.SpanTurn {
			root = s
		}
	}
	if root.Parent.IsValid() {
		t.Fatalf("the turn's span has a parent: %v", root.Parent)
	}
	if !slices.ContainsFunc(root.Attributes, func(a attribute.KeyValue) bool {
		return string(a.Key) == telemetry.AttrOutcome && a.Value.AsString() == ipc.OutcomeAnswer
	}) {
		t.Errorf("turn span attributes %v lack the outcome", root.Attributes)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("%s is in trace %s, not the turn's %s", s.Name, s.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
		if s.Name == telemetry.SpanTurn {
			continue
		}
		// Walk up to the root: every ancestor is a span of this trace.
		cur, hops := s, 0
		for cur.Parent.IsValid() && hops < 100 {
			p, ok := ids[cur.Parent.SpanID()]
			if !ok {
				t.Fatalf("%s (%v) has a parent that is not in the trace", cur.Name, cur.Attributes)
			}
			cur, hops = p, hops+1
		}
		if cur.Name != telemetry.SpanTurn {
			t.Errorf("%s does not descend from the turn (stops at %s)", s.Name, cur.Name)
		}
		if s.Status.Code == codes.Error {
			t.Errorf("%s ended in error: %s", s.Name, s.Status.Description)
		}
	}
	// The write's tool span holds the approval wait and the fs capsule's
	// invocation on tool.v1.execute.write_file.
	var write tracetest.SpanStub
	for _, s := range spans {
		if s.Name == telemetry.SpanToolCall && hasAttr(s, telemetry.AttrTool, "write_file") {
			write = s
		}
	}
	under := func(s tracetest.SpanStub) bool {
		for cur := s; cur.Parent.IsValid(); cur = ids[cur.Parent.SpanID()] {
			if cur.Parent.SpanID() == write.SpanContext.SpanID() {
				return true
			}
		}
		return false
	}
	var approvalUnder, fsUnder bool
	for _, s := range spans {
		approvalUnder = approvalUnder || (s.Name == telemetry.SpanApprovalWait && under(s))
		fsUnder = fsUnder || (s.Name == telemetry.SpanCapsuleInvoke && hasAttr(s, telemetry.AttrTopic, "tool.v1.execute.write_file") && under(s))
	}
	if !approvalUnder || !fsUnder {
		t.Errorf("under the write_file span: approval wait %v, fs invocation %v", approvalUnder, fsUnder)
	}
}

func hasAttr(s tracetest.SpanStub, key, value string) bool {
	return slices.ContainsFunc(s.Attributes, func(a attribute.KeyValue) bool { return string(a.Key) == key && a.Value.AsString() == value })
}
