//go:build linux

package wasm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/manifest"
)

type netidFixture struct {
	*harness
	eng *Engine
	dir string // where the capsule may bind unix sockets
}

type netidAnswer struct {
	Code    hostapi.Code               `json:"code"`
	Message string                     `json:"message"`
	Handle  hostapi.NetHandle          `json:"handle"`
	Addr    string                     `json:"addr"`
	Peer    *hostapi.NetPeer           `json:"peer"`
	Data    string                     `json:"data"`
	Found   bool                       `json:"found"`
	User    *hostapi.IdentityUser      `json:"user"`
	Links   []hostapi.IdentityLinkInfo `json:"links"`
}

func loadNetid(t *testing.T) *netidFixture {
	t.Helper()
	logs := &syncBuffer{}
	h, _ := newHarness(t, logs)
	h.deps.Egress.AllowLocal = []string{"127.0.0.1/32"}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/netid/Capsule.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, diags := manifest.Parse(data, "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	m = withComponent(m, guest(t, "testdata/netid"))
	m.Capabilities.NetBind = []string{"unix:" + dir + "/*", "127.0.0.1:*"}
	m.Capabilities.NetConnect = []string{"127.0.0.1:*", "169.254.169.254:80"}
	m.Capabilities.Identity = []string{"admin"}
	eng, err := h.load(t, newRuntime(t, Options{Logger: h.log}), m, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &netidFixture{harness: h, eng: eng, dir: dir}
}

// script runs steps in one guest call for principal.
func (f *netidFixture) script(t *testing.T, principal string, steps ...map[string]any) []netidAnswer {
	t.Helper()
	in, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.eng.Invoke(context.Background(), hostapi.Invocation{
		Handler: "script", Pattern: "netid.v1.script", Topic: "netid.v1.script",
		SourceID: "test", Principal: principal, Payload: in,
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []netidAnswer
	if err := json.Unmarshal(v.Payload, &out); err != nil {
		t.Fatalf("answer %s: %v", v.Payload, err)
	}
	return out
}

func wantCodes(t *testing.T, got []netidAnswer, want ...hostapi.Code) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d answers, want %d: %+v", len(got), len(want), got)
	}
	for i, a := range got {
		if a.Code != want[i] {
			t.Errorf("step %d: code %v (%s), want %v", i+1, a.Code, a.Message, want[i])
		}
	}
}

// Every net import from a guest: a unix listener a real client reaches
// (peer uid and pid, frames both ways), loopback TCP across two calls,
// refusals with the host's codes, a silent peer, and handles that another
// principal cannot use.
func TestNetFromAGuest(t *testing.T) {
	f := loadNetid(t)
	sock := filepath.Join(f.dir, "uplink.sock")
	open := f.script(t, "default",
		map[string]any{"op": "bind", "addr": "unix:" + sock},
		map[string]any{"op": "bind", "addr": "127.0.0.1:0"},
		map[string]any{"op": "bind", "addr": "0.0.0.0:0"},
		map[string]any{"op": "bind", "addr": "unix:" + f.dir + "/../x.sock"},
		map[string]any{"op": "connect", "host": "169.254.169.254", "port": 80},
		map[string]any{"op": "connect", "host": "2852039166", "port": 80},
		map[string]any{"op": "connect", "host": "example.com", "port": 443},
	)
	wantCodes(t, open, 0, 0, hostapi.CodeDenied, hostapi.CodeDenied, hostapi.CodeDenied, hostapi.CodeDenied, hostapi.CodeDenied)
	unixLn, tcpLn := open[0].Handle, open[1].Handle
	_, port, _ := net.SplitHostPort(open[1].Addr)
	p, _ := strconv.Atoi(port)

	client, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	frame := func(s string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
		return append(b, s...)
	}
	if _, err := client.Write(frame("hello kernel")); err != nil {
		t.Fatal(err)
	}

	// Another principal sees none of default's handles.
	wantCodes(t, f.script(t, "alice", map[string]any{"op": "accept", "handle": unixLn, "timeout_ms": 1}), hostapi.CodeNotFound)

	// A later call of the same principal uses them.
	got := f.script(t, "default",
		map[string]any{"op": "accept", "handle": unixLn},
		map[string]any{"op": "read_frame", "handle_of": 1},
		map[string]any{"op": "write_frame", "handle_of": 1, "data": "hello client"},
		map[string]any{"op": "connect", "host": "127.0.0.1", "port": p},
		map[string]any{"op": "accept", "handle": tcpLn},
		map[string]any{"op": "write", "handle_of": 4, "data": "over tcp"},
		map[string]any{"op": "read", "handle_of": 5, "max": 1 << 40},
		map[string]any{"op": "read", "handle_of": 4, "max": 10, "timeout_ms": 1},
		map[string]any{"op": "close", "handle_of": 4},
		map[string]any{"op": "read", "handle_of": 5, "max": 10},
		map[string]any{"op": "close", "handle_of": 5},
		map[string]any{"op": "close", "handle": tcpLn},
		map[string]any{"op": "read", "handle": tcpLn, "max": 10},
	)
	wantCodes(t, got, 0, 0, 0, 0, 0, 0, 0, hostapi.CodeTimeout, 0, hostapi.CodeClosed, 0, 0, hostapi.CodeNotFound)
	if pe := got[0].Peer; pe == nil || pe.UID != os.Getuid() || pe.PID != os.Getpid() {
		t.Errorf("unix peer %+v, want uid %d pid %d", pe, os.Getuid(), os.Getpid())
	}
	if got[1].Data != "hello kernel" || got[6].Data != "over tcp" {
		t.Errorf("data %q, %q", got[1].Data, got[6].Data)
	}
	if pe := got[4].Peer; pe == nil || !strings.HasPrefix(pe.Addr, "127.0.0.1:") {
		t.Errorf("tcp peer %+v", pe)
	}
	var head [4]byte
	if _, err := io.ReadFull(client, head[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(head[:]))
	if _, err := io.ReadFull(client, body); err != nil || string(body) != "hello client" {
		t.Fatalf("frame to the client: %q %v", body, err)
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file %v %v", fi, err)
	}
}

// Every identity import from a guest, with the host's codes.
func TestIdentityFromAGuest(t *testing.T) {
	f := loadNetid(t)
	link := func(account, user string) map[string]any {
		return map[string]any{"op": "link", "link": map[string]any{"platform": "discord", "platform_user_id": account, "user_id": user, "method": "code"}}
	}
	got := f.script(t, "default",
		map[string]any{"op": "create_user", "new_user": map[string]any{"user_id": "alice", "display_name": "Alice"}},
		map[string]any{"op": "create_user", "new_user": map[string]any{"user_id": "alice"}},
		map[string]any{"op": "create_user", "new_user": map[string]any{"user_id": "a b"}},
		link("42", "alice"),
		link("42", "alice"),
		link("43", "nobody"),
		link("bad\x07", "alice"),
		map[string]any{"op": "resolve", "platform": "discord", "account": "42"},
		map[string]any{"op": "links", "user": "alice"},
		map[string]any{"op": "unlink", "platform": "discord", "account": "42"},
		map[string]any{"op": "resolve", "platform": "discord", "account": "42"},
		map[string]any{"op": "unlink", "platform": "discord", "account": "42"},
		map[string]any{"op": "links", "user": "alice"},
	)
	wantCodes(t, got, 0, hostapi.CodeExists, hostapi.CodeInvalid, 0, hostapi.CodeExists, hostapi.CodeNotFound, hostapi.CodeInvalid,
		0, 0, 0, 0, hostapi.CodeNotFound, 0)
	if u := got[7].User; !got[7].Found || u == nil || u.UserID != "alice" || u.DisplayName != "Alice" {
		t.Errorf("resolve: %+v", got[7])
	}
	if l := got[8].Links; len(l) != 1 || l[0].LinkedBy != "netid" || l[0].PlatformUserID != "42" {
		t.Errorf("links: %+v", l)
	}
	if got[10].Found || len(got[12].Links) != 0 {
		t.Errorf("after unlink: %+v %+v", got[10], got[12])
	}
}
