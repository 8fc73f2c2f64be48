package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// A tool's progress is a line on stderr while the call runs (an event
// with --json); one that comes after the call's result is not shown.
func TestTurnPrinterShowsProgressOfRunningCalls(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		var out, errOut strings.Builder
		p := newTurnPrinter(&out, &errOut, asJSON)
		p.toolStarted(ipc.AgentToolStarted{CallID: "c1", Name: "srv:slow", Arguments: json.RawMessage(`{}`)})
		p.toolProgress(ipc.AgentToolProgress{CallID: "c1", Name: "srv:slow", Progress: 1, Total: 3, Message: "copying"})
		p.toolFinished(ipc.AgentToolFinished{CallID: "c1", Name: "srv:slow", Summary: "done"})
		p.toolProgress(ipc.AgentToolProgress{CallID: "c1", Name: "srv:slow", Progress: 3, Total: 3})
		shown := errOut.String()
		if asJSON {
			shown = out.String()
		}
		want := "… srv:slow: 1/3 copying\n"
		if asJSON {
			want = `{"event":"tool_progress","data":{"call_id":"c1","name":"srv:slow","progress":1,"total":3,"message":"copying"}}`
		}
		if !strings.Contains(shown, want) || strings.Contains(shown, "3/3") || strings.Contains(shown, `"progress":3`) {
			t.Errorf("json=%v: shown\n%s\nwant %q and no late 3/3", asJSON, shown, want)
		}
	}
}
