package toolclient

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// A call's progress reaches Progress from the tool's provider only, about
// that call and tool only, in order; what is queued when the call ends is
// handed over before stop returns.
func TestProgressFromTheProviderOnly(t *testing.T) {
	d := newDispatcher(t)
	for _, acl := range []dispatch.CapsuleACL{
		{ID: "provider", Publish: []string{ipc.AgentToolProgressTopic}, Subscribe: []string{ipc.ToolExecuteTopic("slow")},
			Interceptors: []dispatch.Interceptor{{Pattern: ipc.ToolExecuteTopic("slow"), Handler: "slow"}}},
		{ID: "liar", Publish: []string{ipc.AgentToolProgressTopic}},
	} {
		if err := d.Register(acl, idle{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []ipc.AgentToolProgress
	c := &ToolClient{k: d, caller: dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal},
		Progress: func(p ipc.AgentToolProgress) { got = append(got, p) }}
	stop := c.forwardProgress(context.Background(), "c1", "slow")
	publish := func(from string, p ipc.AgentToolProgress) {
		b, _ := json.Marshal(p)
		if _, err := d.Publish(dispatch.Caller{Capsule: from, Principal: ipc.DefaultPrincipal}, ipc.AgentToolProgressTopic, b); err != nil {
			t.Fatal(err)
		}
	}
	publish("provider", ipc.AgentToolProgress{CallID: "c1", Name: "slow", Progress: 1, Total: 3})
	publish("liar", ipc.AgentToolProgress{CallID: "c1", Name: "slow", Progress: 2, Total: 3})
	publish("provider", ipc.AgentToolProgress{CallID: "c2", Name: "slow", Progress: 2, Total: 3})
	publish("provider", ipc.AgentToolProgress{CallID: "c1", Name: "other", Progress: 2, Total: 3})
	publish("provider", ipc.AgentToolProgress{CallID: "c1", Name: "slow", Progress: 3, Total: 3})
	stop()
	want := []ipc.AgentToolProgress{{CallID: "c1", Name: "slow", Progress: 1, Total: 3}, {CallID: "c1", Name: "slow", Progress: 3, Total: 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("progress handed over %+v, want %+v", got, want)
	}
}

// A call's log messages reach Log as its progress reaches Progress: from
// the tool's provider only, about that call and tool only, in order.
func TestLogsFromTheProviderOnly(t *testing.T) {
	d := newDispatcher(t)
	for _, acl := range []dispatch.CapsuleACL{
		{ID: "provider", Publish: []string{ipc.AgentToolLogTopic}, Subscribe: []string{ipc.ToolExecuteTopic("slow")},
			Interceptors: []dispatch.Interceptor{{Pattern: ipc.ToolExecuteTopic("slow"), Handler: "slow"}}},
		{ID: "liar", Publish: []string{ipc.AgentToolLogTopic}},
	} {
		if err := d.Register(acl, idle{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []ipc.AgentToolLog
	c := &ToolClient{k: d, caller: dispatch.Caller{Capsule: ClientID, Principal: ipc.DefaultPrincipal},
		Log: func(l ipc.AgentToolLog) { got = append(got, l) }}
	stop := c.forwardLogs(context.Background(), "c1", "slow")
	publish := func(from string, l ipc.AgentToolLog) {
		b, _ := json.Marshal(l)
		if _, err := d.Publish(dispatch.Caller{Capsule: from, Principal: ipc.DefaultPrincipal}, ipc.AgentToolLogTopic, b); err != nil {
			t.Fatal(err)
		}
	}
	first := ipc.AgentToolLog{CallID: "c1", Name: "slow", Level: "info", Message: "started"}
	last := ipc.AgentToolLog{CallID: "c1", Name: "slow", Level: "error", Message: "done"}
	publish("provider", first)
	publish("liar", ipc.AgentToolLog{CallID: "c1", Name: "slow", Level: "info", Message: "forged"})
	publish("provider", ipc.AgentToolLog{CallID: "c2", Name: "slow", Level: "info", Message: "another call"})
	publish("provider", ipc.AgentToolLog{CallID: "c1", Name: "other", Level: "info", Message: "another tool"})
	publish("provider", last)
	stop()
	if want := []ipc.AgentToolLog{first, last}; !slices.Equal(got, want) {
		t.Fatalf("logs handed over %+v, want %+v", got, want)
	}
}
