package mcp

//lint:file-ignore SA1019 roots are deprecated by SEP-2577 but still offered (roots.go says why)

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRootsOf(t *testing.T) {
	got := rootsOf([]string{"/ws", "", "relative", "/ws/", "/opt/mods", "/ws"})
	var uris []string
	for _, r := range got {
		uris = append(uris, r.URI+" "+r.Name)
	}
	if want := []string{"file:///ws ws", "file:///opt/mods mods"}; !slices.Equal(uris, want) {
		t.Fatalf("roots %q, want %q", uris, want)
	}
	if got := rootsOf([]string{"/a dir/with#hash"}); got[0].URI != "file:///a%20dir/with%23hash" {
		t.Fatalf("escaped URI %q", got[0].URI)
	}
}

// A capsule without fs grants offers its server no roots: the first
// request (initialize, or server/discover on protocol 2026-07-28) names
// the client's capabilities, roots not among them.
func TestNoGrantsNoRoots(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{})
	wire := r.wire.String()
	i := strings.Index(wire, `apabilities"`)
	if i < 0 {
		t.Fatalf("no client capabilities on the wire:\n%s", wire)
	}
	line := wire[i:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	if strings.Contains(line, `"roots"`) {
		t.Fatalf("initialize advertises roots without fs grants: %s", line)
	}
}

// The workspace a server runs in is its first root whenever a grant
// covers it, so server-filesystem resolves "." there and not in a
// read-only grant listed before it (it resolves a relative path against
// the first root that holds it). A workspace no grant covers is no root.
func TestRootsForPutTheWorkspaceFirst(t *testing.T) {
	uris := func(rs []*mcp.Root) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.URI)
		}
		return out
	}
	for _, c := range []struct {
		name, ws string
		dirs     []string
		want     []string
	}{
		{"granted after a module dir", "/ws", []string{"/opt/mods", "/ws"}, []string{"file:///ws", "file:///opt/mods"}},
		{"inside a granted parent", "/home/u/proj", []string{"/opt/mods", "/home/u"}, []string{"file:///home/u/proj", "file:///opt/mods", "file:///home/u"}},
		{"not covered", "/ws", []string{"/opt/mods"}, []string{"file:///opt/mods"}},
		{"prefix is not a parent", "/wsx", []string{"/opt/mods", "/ws"}, []string{"file:///opt/mods", "file:///ws"}},
		{"no workspace", "", []string{"/opt/mods", "/ws"}, []string{"file:///opt/mods", "file:///ws"}},
		{"root grant", "/ws", []string{"/"}, []string{"file:///ws", "file:///"}},
	} {
		if got := uris(rootsFor(c.ws, c.dirs)); !slices.Equal(got, c.want) {
			t.Errorf("%s: roots %q, want %q", c.name, got, c.want)
		}
	}
}

// TestServersSeeTheRootsInOurOrder: a server's roots/list returns the
// workspace first even when its URI sorts after a module directory's (the
// SDK keeps a client's roots sorted by URI; CI's checkout under /check
// sorted before the workspace under /tmp).
func TestServersSeeTheRootsInOurOrder(t *testing.T) {
	roots := rootsFor("/tmp/ws", []string{"/check/work/main/node_modules", "/tmp/ws"})
	if len(roots) != 2 || roots[0].URI != "file:///tmp/ws" {
		t.Fatalf("rootsFor = %v, want the workspace first", roots)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}})
	client.AddRoots(roots...)
	client.AddReceivingMiddleware(rootsInOrder(roots))
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	// The protocol server-filesystem speaks: the newest one forbids roots/list.
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got, err := ss.ListRoots(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range got.Roots {
		uris = append(uris, r.URI)
	}
	if want := []string{"file:///tmp/ws", "file:///check/work/main/node_modules"}; !slices.Equal(uris, want) {
		t.Fatalf("the server listed roots %v, want %v", uris, want)
	}
}
