package daemonclient_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// raw is a connection that speaks the wire by hand, as an attacker would.
type raw struct {
	t    *testing.T
	conn net.Conn
}

func (d *daemon) raw(t *testing.T) *raw {
	t.Helper()
	// Not listening yet at first (see dial).
	conn := testutil.WaitForValue(t, testWait, "the daemon's socket to accept", func() (net.Conn, bool) {
		conn, err := net.Dial("unix", daemonclient.SocketPath(d.home))
		return conn, err == nil
	})
	t.Cleanup(func() { conn.Close() })
	return &raw{t: t, conn: conn}
}

func (r *raw) send(f uplinkwire.Frame) {
	r.t.Helper()
	b, err := uplinkwire.Encode(f)
	if err != nil {
		r.t.Fatal(err)
	}
	r.bytes(frameOf(b))
}

func frameOf(body []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	return append(out, body...)
}

func (r *raw) bytes(b []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

func (r *raw) next() uplinkwire.Frame {
	r.t.Helper()
	body, err := uplinkwire.Read(r.conn)
	if err != nil {
		r.t.Fatalf("no frame: %v", err)
	}
	f, err := uplinkwire.Decode(body)
	if err != nil {
		r.t.Fatal(err)
	}
	return f
}

// closed asserts the daemon ends the connection (after any frames).
func (r *raw) closed() {
	r.t.Helper()
	if _, err := io.Copy(io.Discard, r.conn); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		r.t.Fatalf("reading to the end: %v", err)
	}
}

func (r *raw) hello() {
	r.t.Helper()
	r.send(uplinkwire.Frame{Op: uplinkwire.OpHello, Version: uplinkwire.Version, Client: "raw"})
	if f := r.next(); f.Op != uplinkwire.OpWelcome {
		r.t.Fatalf("handshake answered %+v", f)
	}
}

// works asserts a well-behaved client is still served: a tool call.
func (d *daemon) works(t *testing.T) {
	t.Helper()
	c := d.dial(t)
	res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
	if err != nil || res.IsError {
		t.Fatalf("a good client is not served: %+v, %v", res, err)
	}
	c.Close()
}

func wantCode(t *testing.T, f uplinkwire.Frame, code string) {
	t.Helper()
	if f.Op != uplinkwire.OpError || f.Code != code {
		t.Fatalf("frame = %+v, want an error %q", f, code)
	}
}

// A uid nobody mapped is refused; a mapped one acts as its principal.
func TestPeerUIDMapping(t *testing.T) {
	me := os.Getuid()
	t.Run("unmapped", func(t *testing.T) {
		// The daemon owner is someone else: this test's uid is "another
		// user's".
		d := boot(t, uplink.Settings{OwnerUID: me + 1})
		err := testutil.WaitForValue(t, testWait, "the daemon to listen (see dial)", func() (error, bool) {
			_, err := daemonclient.Dial(context.Background(), d.home, daemonclient.Options{Timeout: testWait})
			return err, !errors.Is(err, daemonclient.ErrNoDaemon)
		})
		var de *daemonclient.Error
		if !errors.As(err, &de) || de.Code != uplinkwire.CodeRefused {
			t.Fatalf("err = %v, want a refusal", err)
		}
	})
	t.Run("mapped", func(t *testing.T) {
		d := boot(t, uplink.Settings{OwnerUID: me + 1, Principals: map[int]string{me: "alice"}})
		c := d.dial(t)
		if c.Principal() != "alice" {
			t.Fatalf("principal = %q, want alice", c.Principal())
		}
		// Its tool call runs as alice: a result comes back on alice's
		// scoped subscription.
		res, err := toolclient.CallTool(context.Background(), c, ipc.DefaultPrincipal, "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
		if err != nil || res.IsError {
			t.Fatalf("alice's tool call = %+v, %v", res, err)
		}
	})
}

func TestBadInput(t *testing.T) {
	d := boot(t, owner())
	cases := []struct {
		name string
		run  func(t *testing.T, r *raw)
	}{
		{"wrong protocol version", func(t *testing.T, r *raw) {
			r.send(uplinkwire.Frame{Op: uplinkwire.OpHello, Version: 99})
			wantCode(t, r.next(), uplinkwire.CodeVersion)
			r.closed()
		}},
		{"no hello first", func(t *testing.T, r *raw) {
			r.send(uplinkwire.Frame{Op: uplinkwire.OpPublish, Topic: ipc.UserPromptTopic})
			wantCode(t, r.next(), uplinkwire.CodeHandshake)
			r.closed()
		}},
		{"garbage instead of a hello", func(t *testing.T, r *raw) {
			r.bytes(frameOf([]byte("\x00\xffnot json")))
			wantCode(t, r.next(), uplinkwire.CodeHandshake)
			r.closed()
		}},
		{"a frame declaring 2 GiB", func(t *testing.T, r *raw) {
			r.hello()
			r.bytes([]byte{0x80, 0, 0, 0, 'x'})
			wantCode(t, r.next(), uplinkwire.CodeTooLarge)
			r.closed()
		}},
		{"an HTTP request (its text read as a length)", func(t *testing.T, r *raw) {
			r.bytes([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			wantCode(t, r.next(), uplinkwire.CodeTooLarge)
			r.closed()
		}},
		{"garbage frames: answered, the connection survives", func(t *testing.T, r *raw) {
			r.hello()
			for _, body := range []string{"not json", "[1,2]", `{"no":"op"}`, `{"op":"launch_missiles","id":7}`, "\xff\xfe"} {
				r.bytes(frameOf([]byte(body)))
				wantCode(t, r.next(), uplinkwire.CodeBadFrame)
			}
			r.send(uplinkwire.Frame{Op: uplinkwire.OpInterceptors, ID: 8, Topic: ipc.ToolRequestExecuteTopic})
			if f := r.next(); f.Op != uplinkwire.OpOK || f.ID != 8 || len(f.IDs) == 0 {
				t.Fatalf("after garbage, a good request got %+v", f)
			}
		}},
		{"topics outside the allowlists", func(t *testing.T, r *raw) {
			r.hello()
			for i, topic := range []string{"tool.v1.execute.result", "llm.v1.request.generate.replay", "astrid.v1.admin.shutdown", "tool.v1.execute.write_file", "user.v1.*", "bad topic"} {
				r.send(uplinkwire.Frame{Op: uplinkwire.OpPublish, ID: uint64(i + 1), Topic: topic, Payload: json.RawMessage(`{}`)})
				wantCode(t, r.next(), uplinkwire.CodeNotAllowed)
			}
			for i, pattern := range []string{"*", "llm.v1.*", "tool.v1.execute.*", "astrid.v1.*", "tool.v1.request.execute"} {
				r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: uint64(i + 10), Pattern: pattern})
				wantCode(t, r.next(), uplinkwire.CodeNotAllowed)
			}
		}},
		{"a payload that is not JSON", func(t *testing.T, r *raw) {
			r.hello()
			r.bytes(frameOf([]byte(`{"op":"publish","id":3,"topic":"user.v1.prompt","payload":nope}`)))
			wantCode(t, r.next(), uplinkwire.CodeBadFrame)
		}},
		{"too many subscriptions", func(t *testing.T, r *raw) {
			r.hello()
			var last uplinkwire.Frame
			for i := 1; i <= 40; i++ {
				r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: uint64(i), Pattern: ipc.ToolExecuteResultTopic})
				last = r.next()
				if last.Op == uplinkwire.OpError {
					break
				}
			}
			wantCode(t, last, uplinkwire.CodeLimit)
		}},
		{"unsubscribe of what is not ours", func(t *testing.T, r *raw) {
			r.hello()
			r.send(uplinkwire.Frame{Op: uplinkwire.OpUnsubscribe, ID: 1, Sub: 12345})
			wantCode(t, r.next(), uplinkwire.CodeNotFound)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, d.raw(t))
			d.works(t)
		})
	}
}

// A client that sends requests and never reads its answers is disconnected
// once its queue fills, while another client keeps working.
func TestClientThatNeverReadsIsDropped(t *testing.T) {
	d := boot(t, uplink.Settings{OwnerUID: os.Getuid(), ClientQueue: 4})
	r := d.raw(t)
	r.hello()
	// Each answer quotes its 64 KiB op back: the socket's buffer fills
	// after a few, then the queue, and the client is dropped.
	big := strings.Repeat("x", 64<<10)
	for i := 0; i < 256; i++ {
		b, _ := uplinkwire.Encode(uplinkwire.Frame{Op: big, ID: uint64(i + 1)})
		if _, err := r.conn.Write(frameOf(b)); err != nil {
			break // dropped already: the daemon closed the stream
		}
		if i == 8 {
			d.works(t) // meanwhile others are served
		}
	}
	r.closed()
	// Dropped for not reading, not closed for some other reason (nor
	// after a write gave up).
	if !strings.Contains(d.logs.String(), "frames waited for it to read") {
		t.Fatalf("the client was not dropped as slow; logs:\n%s", d.logs.String())
	}
	d.works(t)
}

// A client that subscribes and never reads is disconnected once its queue
// fills, though only its subscription produces frames for it: the pump
// whose write stalls on the full socket hands its work on instead of
// waiting (the kernel would otherwise evict quietly behind it), while
// another client keeps working.
func TestSubscriberThatNeverReadsIsDropped(t *testing.T) {
	// The router's byte budget would refuse the calls (2,000 results of
	// 32 KiB) before the uplink's stall timer hands the stalled write on
	// on a fast machine: the test is about the uplink, not the budget.
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec, cfg.Limits.RateBurstBytes = 1<<30, 1<<30
	d := bootConfigured(t, uplink.Settings{OwnerUID: os.Getuid(), ClientQueue: 4}, cfg, writeScript, nil)
	// A result of 32 KiB: the socket's buffer fills after a few.
	if err := os.WriteFile(filepath.Join(d.ws, "big.txt"), []byte(strings.Repeat("x", 32<<10)), 0o600); err != nil {
		t.Fatal(err)
	}
	d.dial(t) // waits for the socket
	r := d.raw(t)
	r.hello()
	r.send(uplinkwire.Frame{Op: uplinkwire.OpSubscribe, ID: 1, Pattern: ipc.ToolExecuteResultTopic})
	if f := r.next(); f.Op != uplinkwire.OpOK {
		t.Fatalf("subscribe answered %+v", f)
	}
	// Another client of the same principal calls tools: every result
	// is also an event for r, which reads nothing more.
	c := d.dial(t)
	const maxCalls = 2000 // far more than the socket and the queue hold
	dropped := func() bool { return strings.Contains(d.logs.String(), "frames waited for it to read") }
	for i := 0; i < maxCalls && !dropped(); i++ {
		res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "read_file", json.RawMessage(`{"file_path":"big.txt"}`), testWait)
		if err != nil || res.IsError {
			t.Fatalf("call %d: %+v, %v", i, res, err)
		}
	}
	if !dropped() {
		t.Fatalf("the subscriber was not dropped as slow after %d events; logs:\n%s", maxCalls, d.logs.String())
	}
	r.closed()
	d.works(t)
}

// Many connections at once, beyond the limit: the clients within it are
// served, the rest are told why and closed, and a slot freed is usable.
func TestClientLimit(t *testing.T) {
	const limit = 4
	// The held clients never become idle enough to give up their slots
	// (TestIdleClientsGiveWayToTheOwner).
	d := boot(t, uplink.Settings{OwnerUID: os.Getuid(), MaxClients: limit, EvictIdle: time.Hour})
	var held []*daemonclient.Client
	for range limit {
		held = append(held, d.dial(t))
	}
	const extra = 200
	var wg sync.WaitGroup
	codes := make(chan string, extra)
	for range extra {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := daemonclient.Dial(context.Background(), d.home, daemonclient.Options{Timeout: testWait})
			var de *daemonclient.Error
			if errors.As(err, &de) {
				codes <- de.Code
			} else {
				codes <- "unexpected: " + errorString(err)
			}
		}()
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != uplinkwire.CodeTooManyClients {
			t.Fatalf("a client over the limit got %q", code)
		}
	}
	// The clients within the limit still work.
	res, err := toolclient.CallTool(context.Background(), held[0], held[0].Principal(), "read_file", json.RawMessage(`{"file_path":"README.md"}`), testWait)
	if err != nil || res.IsError {
		t.Fatalf("a held client: %+v, %v", res, err)
	}
	held[1].Close()
	// The slot is given back once the daemon notices the close.
	for {
		c, err := daemonclient.Dial(context.Background(), d.home, daemonclient.Options{Timeout: testWait})
		if err == nil {
			c.Close()
			break
		}
		var de *daemonclient.Error
		if !errors.As(err, &de) || de.Code != uplinkwire.CodeTooManyClients {
			t.Fatal(err)
		}
	}
}

func errorString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// A table full of clients that said hello and then went quiet does not
// lock the owner out: the owner's next command takes the slot of the one
// idle longest, which is told so and closed (docs/uplink.md, Transport).
func TestIdleClientsGiveWayToTheOwner(t *testing.T) {
	const limit = 128 // the default [uplink] max_clients
	d := boot(t, uplink.Settings{OwnerUID: os.Getuid(), MaxClients: limit, EvictIdle: 100 * time.Millisecond})
	d.dial(t).Close() // waits for the socket
	idle := make([]*raw, limit)
	for i := range idle {
		idle[i] = d.raw(t)
		idle[i].hello()
	}
	start := time.Now()
	c, err := daemonclient.Dial(context.Background(), d.home, daemonclient.Options{Timeout: testWait})
	if err != nil {
		t.Fatalf("the owner's client at a table of %d idle ones: %v", limit, err)
	}
	defer c.Close()
	res, err := toolclient.CallTool(context.Background(), c, c.Principal(), "list_directory", json.RawMessage(`{"dir_path":"."}`), testWait)
	if err != nil || res.IsError {
		t.Fatalf("the owner's tool call: %+v, %v", res, err)
	}
	t.Logf("served in %s", time.Since(start))
	// The first to say hello had been idle longest: it gave up its slot.
	wantCode(t, idle[0].next(), uplinkwire.CodeEvicted)
	idle[0].closed()
	if !strings.Contains(d.logs.String(), "evicted a client of default") {
		t.Fatalf("the eviction is not logged:\n%s", d.logs.String())
	}
	// The others still hold theirs.
	idle[1].send(uplinkwire.Frame{Op: uplinkwire.OpHoldsGrant, ID: 1, Capsule: "astrid-uplink", Grant: "uplink"})
	if f := idle[1].next(); f.Op != uplinkwire.OpOK || f.ID != 1 {
		t.Fatalf("a client still connected: %+v", f)
	}
}

// Clients of another uid than the owner's hold at most the table less
// the owner's reserve, and never take an owner's slot.
func TestOtherUIDsLeaveTheOwnersSlots(t *testing.T) {
	const limit = 16 // one slot kept for the owner
	me := os.Getuid()
	// The test's uid is mapped as "alice"; the owner is another uid.
	d := boot(t, uplink.Settings{OwnerUID: me + 1, Principals: map[int]string{me: "alice"}, MaxClients: limit, EvictIdle: time.Hour})
	d.dial(t).Close()
	for range limit - 1 {
		d.raw(t).hello()
	}
	r := d.raw(t)
	f := r.next()
	wantCode(t, f, uplinkwire.CodeTooManyClients)
	if !strings.Contains(f.Error, "1 of them only for its owner's uid") {
		t.Fatalf("the refusal does not say why: %q", f.Error)
	}
	r.closed()
}
