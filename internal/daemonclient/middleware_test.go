package daemonclient_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// Every event says whether its source held tool_middleware when the
// daemon relayed it: the router's consolidated result does, a tool's own
// describe answer does not.
func TestEventsSayWhetherTheirSourceHoldsToolMiddleware(t *testing.T) {
	d := boot(t, owner())
	d.dial(t) // waits for the socket
	r := d.raw(t)
	r.hello()
	r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: 1, Pattern: ipc.ToolExecuteResultTopic})
	if f := r.next(); f.Op != uplinkwire.OpOK || f.Sub == 0 {
		t.Fatalf("subscribe answered %+v", f)
	}
	r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: 2, Pattern: "tool.v1.response.describe.*"})
	if f := r.next(); f.Op != uplinkwire.OpOK || f.Sub == 0 {
		t.Fatalf("subscribe answered %+v", f)
	}
	d.works(t) // a tool call by another client of the same principal: its result reaches r too
	r.send(uplinkwire.Frame{Op: uplinkwire.OpPublish, ID: 3, Topic: ipc.ToolRequestDescribeTopic, Payload: json.RawMessage(`{}`)})
	var sawResult, sawDescribe bool
	for !sawResult || !sawDescribe {
		f := r.next()
		if f.Op != uplinkwire.OpEvent {
			continue
		}
		if f.ToolMiddleware == nil {
			t.Fatalf("an event without tool_middleware: %+v", f)
		}
		switch {
		case f.Topic == ipc.ToolExecuteResultTopic:
			if !*f.ToolMiddleware {
				t.Fatalf("the router's result says its source %q does not hold tool_middleware", f.Source)
			}
			sawResult = true
		case f.Source == "astrid-capsule-fs":
			if *f.ToolMiddleware {
				t.Fatalf("the fs capsule's describe answer says it holds tool_middleware: %+v", f)
			}
			sawDescribe = true
		}
	}
}

// fakeDaemon speaks the wire by hand on the daemon's side: it welcomes one
// client, opens subscription 1, sends events, and answers every
// holds_grant with answer (the opposite of what the events said, so a
// round trip shows).
func fakeDaemon(t *testing.T, events []uplinkwire.Frame, answer bool) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		write := func(f uplinkwire.Frame) bool {
			b, _ := uplinkwire.Encode(f)
			return uplinkwire.Write(conn, b) == nil
		}
		for {
			body, err := uplinkwire.Read(conn)
			if err != nil {
				return
			}
			f, _ := uplinkwire.Decode(body)
			switch f.Op {
			case uplinkwire.OpHello:
				write(uplinkwire.Frame{Op: uplinkwire.OpWelcome, Version: uplinkwire.Version, Principal: "default"})
			case uplinkwire.OpSubscribe:
				write(uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID, Sub: 1})
				for _, ev := range events {
					write(ev)
				}
			case uplinkwire.OpHoldsGrant:
				write(uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID, Held: answer})
			default:
				write(uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID})
			}
		}
	}()
	return path
}

// A tool client asks whether the source of the result it just received
// holds tool_middleware: the answer is the one that result carried, with
// no round trip; a source no event came from is asked about.
func TestHoldsToolMiddlewareAnswersFromTheEvents(t *testing.T) {
	yes, no := true, false
	path := fakeDaemon(t, []uplinkwire.Frame{
		{Op: uplinkwire.OpEvent, Sub: 1, Topic: ipc.ToolExecuteResultTopic, Source: "forger", ToolMiddleware: &no, Payload: json.RawMessage(`{}`)},
		{Op: uplinkwire.OpEvent, Sub: 1, Topic: ipc.ToolExecuteResultTopic, Source: "router", ToolMiddleware: &yes, Payload: json.RawMessage(`{}`)},
		// An event that does not say (an older daemon): nothing is assumed.
		{Op: uplinkwire.OpEvent, Sub: 1, Topic: ipc.ToolExecuteResultTopic, Source: "quiet", Payload: json.RawMessage(`{}`)},
	}, true)
	c, err := daemonclient.DialSocket(context.Background(), path, daemonclient.Options{Timeout: testWait})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(dispatch.Caller{}, ipc.ToolExecuteResultTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for range 3 {
		if _, err := sub.Recv(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The fake answers every holds_grant "held": only a round trip says so.
	for source, want := range map[string]bool{"forger": false, "router": true, "quiet": true, "unseen": true} {
		if got := c.HoldsToolMiddleware(source); got != want {
			t.Errorf("HoldsToolMiddleware(%q) = %v, want %v", source, got, want)
		}
	}
}
