//go:build linux

package host

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// unixCapsule makes a directory with an ok/ subdirectory and a capsule
// granted unix sockets under ok/ only, and opens a call of default on it.
// The capsule is closed at cleanup (Close is idempotent).
func unixCapsule(t *testing.T) (dir string, c *Capsule, call *Call) {
	t.Helper()
	dir, _ = filepath.EvalSymlinks(t.TempDir())
	if err := os.Mkdir(filepath.Join(dir, "ok"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	c = f.capsule(t, `
[package]
name = "uplink"
version = "0.1.0"
[capabilities]
net_bind = ["unix:`+dir+`/ok/*"]
`)
	call, _ = c.Begin(context.Background(), "default")
	t.Cleanup(func() { call.End(); c.Close() })
	return dir, c, call
}

// A unix listener is 0600, serves a local client whose uid and pid the
// accept reports, and removes its socket file when closed.
func TestNetUnixListener(t *testing.T) {
	dir, _, call := unixCapsule(t)

	sock := filepath.Join(dir, "ok", "astrid.sock")
	ln, err := call.NetBind("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	if ln.Addr != "unix:"+sock {
		t.Fatalf("bound %q", ln.Addr)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file: %v %v", fi.Mode(), err)
	}
	client, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	acc, err := call.NetAccept(ln.Handle, 0)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Peer.UID != os.Getuid() || acc.Peer.PID != os.Getpid() || acc.Peer.Addr != "" {
		t.Fatalf("peer %+v, want uid %d pid %d", acc.Peer, os.Getuid(), os.Getpid())
	}
	if _, err := client.Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	if b, err := call.NetRead(acc.Handle, 64, 0); err != nil || string(b) != "frame" {
		t.Fatalf("read %q %v", b, err)
	}
	// A second bind of the same path while it is served is refused and
	// leaves the live socket alone.
	if _, err := call.NetBind("unix:" + sock); hostapi.CodeOf(err) != hostapi.CodeExists {
		t.Fatalf("bind over a live socket: %v, want exists", err)
	}
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("the live socket was removed: %v", err)
	}
	if err := call.NetClose(ln.Handle); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file after close: %v", err)
	}
}

// A stale socket file (its listener gone without removing it) is replaced;
// anything else at the path is left alone and refused.
func TestNetUnixStaleSocketIsReplacedOnlyIfDead(t *testing.T) {
	dir, _, call := unixCapsule(t)
	ok := filepath.Join(dir, "ok")

	stale := filepath.Join(ok, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = l.Close()
	if _, err := os.Lstat(stale); err != nil {
		t.Fatal("the stale socket should still exist")
	}
	if _, err := call.NetBind("unix:" + stale); err != nil {
		t.Fatalf("bind over a stale socket: %v", err)
	}

	regular := filepath.Join(ok, "file.sock")
	if err := os.WriteFile(regular, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := call.NetBind("unix:" + regular); hostapi.CodeOf(err) != hostapi.CodeExists || !strings.Contains(err.Error(), "regular file") {
		t.Fatalf("bind over a regular file: %v, want exists", err)
	}
	if b, _ := os.ReadFile(regular); string(b) != "precious" {
		t.Fatal("the regular file was touched")
	}
	target := filepath.Join(dir, "target")
	if err := os.Symlink(target, filepath.Join(ok, "link.sock")); err != nil {
		t.Fatal(err)
	}
	if _, err := call.NetBind("unix:" + filepath.Join(ok, "link.sock")); hostapi.CodeOf(err) != hostapi.CodeExists {
		t.Fatalf("bind over a symlink: %v, want exists", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatal("a socket was created through the symlink")
	}
}

// Unix paths the grant does not cover, or that leave it by "..", a
// symlinked directory or a path too long to connect to, are refused and
// create nothing.
func TestNetUnixEscapes(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(dir, "ok"), outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// ok/sub is a symlink to outside: a pattern ok/* would not match
	// ok/sub/x anyway, so grant it explicitly to test the walk.
	if err := os.Symlink(outside, filepath.Join(dir, "ok", "sub")); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	c := f.capsule(t, `
[package]
name = "uplink"
version = "0.1.0"
[capabilities]
net_bind = ["unix:`+dir+`/ok/*", "unix:`+dir+`/ok/sub/*", "unix:`+dir+`/missing/*", "unix:/`+strings.Repeat("x", 120)+`"]
`)
	defer c.Close()
	call, _ := c.Begin(context.Background(), "default")
	defer call.End()
	cases := []struct {
		name string
		addr string
		code hostapi.Code
	}{
		{"outside the grant", "unix:" + outside + "/x.sock", hostapi.CodeDenied},
		{"dot-dot out", "unix:" + dir + "/ok/../outside/x.sock", hostapi.CodeDenied},
		{"relative", "unix:ok/x.sock", hostapi.CodeDenied},
		{"through a symlinked directory", "unix:" + dir + "/ok/sub/x.sock", hostapi.CodeDenied},
		{"missing directory", "unix:" + dir + "/missing/x.sock", hostapi.CodeNotFound},
		{"too long to connect to", "unix:/" + strings.Repeat("x", 120), hostapi.CodeInvalid},
		{"NUL", "unix:" + dir + "/ok/x\x00.sock", hostapi.CodeDenied},
		{"empty", "unix:", hostapi.CodeDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := call.NetBind(tc.addr); hostapi.CodeOf(err) != tc.code {
				t.Fatalf("got %v, want %v", err, tc.code)
			}
		})
	}
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Fatalf("a refused bind created %v", es)
	}
	if n := c.nets.Len(); n != 0 {
		t.Fatalf("refused binds left %d handles", n)
	}
}

// Unloading the capsule closes its unix listener and removes the file.
func TestNetUnixListenerEndsWithTheCapsule(t *testing.T) {
	dir, c, call := unixCapsule(t)
	sock := filepath.Join(dir, "ok", "a.sock")
	ln, err := call.NetBind("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file after unload: %v", err)
	}
	if _, err := call.NetAccept(ln.Handle, 1); hostapi.CodeOf(err) != hostapi.CodeClosed {
		t.Fatalf("accept after unload: %v, want closed", err)
	}
}
