package daemonclient_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/toolclient/toolclienttest"
)

// BenchmarkToolCall is a read_file round trip in-process and through the
// daemon's socket, on one kernel in the same run (issue 19: the socket at
// most 2× the in-process call).
func BenchmarkToolCall(b *testing.B) {
	d := boot(b, owner())
	c := d.dial(b)
	for _, impl := range []struct {
		name string
		k    toolclient.Kernel
	}{{"in-process", d.k.Frontend()}, {"socket", c}} {
		b.Run(impl.name, func(b *testing.B) {
			call, done := toolclienttest.RoundTrip(b, impl.k, "read_file", json.RawMessage(`{"file_path":"README.md"}`), "")
			defer done()
			testutil.ClosedLoop(b, 100, call)
		})
	}
}

// BenchmarkSocketRequest is the socket's floor: one request and its answer
// (interceptors of a topic), nothing dispatched.
func BenchmarkSocketRequest(b *testing.B) {
	d := boot(b, owner())
	c := d.dial(b)
	testutil.ClosedLoop(b, 100, func() error {
		if len(c.Interceptors("tool.v1.request.execute")) == 0 {
			return errNoRouter
		}
		return nil
	})
}

var errNoRouter = errors.New("no router")
