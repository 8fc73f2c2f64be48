package daemonclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/toolclient"
)

// Many goroutines share one connection: whichever waits reads for the
// others and hands the reading on when its own answer has come; every
// call is answered.
func TestConcurrentCallsShareOneConnection(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	const callers, calls = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls)
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
				if err == nil && res.IsError {
					err = errors.New(res.Content)
				}
				if err != nil {
					errs <- err
				}
				if len(c.Interceptors("tool.v1.request.execute")) == 0 {
					errs <- errors.New("no interceptors")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// With nobody waiting on the connection, the idle reader still reads it:
// the daemon's going away is seen (Done) without a call to notice it.
func TestIdleConnectionSeesTheDaemonGo(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	if _, err := c.Subscribe(dispatch.Caller{}, "agent.v1.*", true); err != nil {
		t.Fatal(err)
	}
	d.k.Close()
	<-c.Done()
	if !errors.Is(c.Err(), daemonclient.ErrDisconnected) {
		t.Fatalf("Err = %v, want ErrDisconnected", c.Err())
	}
}

// A Recv whose context ends while it reads the socket for everyone lets
// the reading go: the connection goes on serving requests.
func TestCancelledRecvLetsTheReadingGo(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	sub, err := c.Subscribe(dispatch.Caller{}, "agent.v1.*", true)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := sub.Recv(ctx)
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv = %v, want context.Canceled", err)
	}
	res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
	if err != nil || res.IsError {
		t.Fatalf("a call after the cancelled Recv: %+v, %v", res, err)
	}
}

// Close while a Recv reads the socket for everyone ends that Recv and
// returns.
func TestCloseEndsAReadingRecv(t *testing.T) {
	d := boot(t, owner())
	c := d.dial(t)
	got := recvInBackground(t, c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err == nil {
		t.Fatal("Recv returned no error after Close")
	}
}
