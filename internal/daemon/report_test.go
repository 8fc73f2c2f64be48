package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/testutil"
)

// A principal's view of the capsule list keeps what using the daemon shows
// (id, engines, state, tools) and drops the owner's paths and the errors;
// the owner's view is the list as it is.
func TestCapsulesForCutsPathsAndErrors(t *testing.T) {
	list := []runtime.Status{
		{ID: "fs", Builtin: true, Engines: []string{"native"}, State: "ready", Tools: []string{"read_file"}},
		{ID: "notes", Dir: "/home/owner/.astrid/capsules/notes", Engines: []string{"static"}, State: "failed",
			Error: "open /home/owner/.astrid/capsules/notes/secret.toml: permission denied"},
	}
	owner := capsulesFor(Viewer{Principal: "default", Owner: true}, list)
	if !slices.EqualFunc(owner, list, func(a, b runtime.Status) bool { return a.Dir == b.Dir && a.Error == b.Error }) {
		t.Fatalf("the owner's list was cut: %+v", owner)
	}
	alice := capsulesFor(Viewer{Principal: "alice"}, list)
	for i, s := range alice {
		if s.Dir != "" || s.Error != "" {
			t.Errorf("alice sees %s's dir %q and error %q", s.ID, s.Dir, s.Error)
		}
		if s.ID != list[i].ID || s.State != list[i].State || !slices.Equal(s.Tools, list[i].Tools) || !slices.Equal(s.Engines, list[i].Engines) {
			t.Errorf("alice's view of %s lost what it may see: %+v", list[i].ID, s)
		}
	}
	if list[1].Dir == "" || list[1].Error == "" {
		t.Fatal("cutting the view changed the daemon's own list")
	}
}

// The live status through a Reporter attached to a running daemon: the
// owner sees every principal's turns, CPU and socket traffic, the bus and
// the dispatcher; alice (another uid) sees her own turn, CPU, clients and
// bytes and nothing of default's or of the bus; bob, who never ran
// anything, sees no principal at all. Before the daemon serves and after it
// stopped, a query is ErrNotServing.
func TestReporterViews(t *testing.T) {
	rep := &Reporter{}
	if _, err := rep.Status(Viewer{Principal: "default", Owner: true}, nil); !errors.Is(err, ErrNotServing) {
		t.Fatalf("before Run: %v, want ErrNotServing", err)
	}
	started := make(chan struct{}, 1)
	d := startDaemonWith(t, blockScript, rep, kernel.Builtin{Manifest: []byte(blockerManifest), New: newBlocker(started)})
	turn, err := agentclient.Start(context.Background(), d.k.Frontend(), agentclient.Prompt{Principal: "alice", SessionID: "s1", Text: "block"})
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Close()
	testutil.WaitForRecv(t, patience, "the tool to run", started)
	socket := map[string]SocketTraffic{"alice": {Clients: 1, BytesIn: 10, BytesOut: 20}, "default": {Clients: 2, BytesIn: 30, BytesOut: 40}}
	ownerView := Viewer{Principal: "default", Owner: true}
	// The tracker learns of the turn from the bus, on its own goroutine.
	owner := testutil.WaitForValue(t, patience, "the owner's status to show alice's turn", func() (Status, bool) {
		owner, err := rep.Status(ownerView, socket)
		if err != nil {
			t.Fatal(err)
		}
		return owner, owner.Turns == 1
	})
	if owner.Scope != "" || owner.Bus == nil || owner.Dispatch == nil || owner.Workspace == "" || owner.Home == "" || owner.Clients != 3 {
		t.Fatalf("the owner's view is cut: %+v", owner)
	}
	if a := owner.Principals["alice"]; a.CPUMicros == 0 || a.Clients != 1 || a.BytesIn != 10 || a.BytesOut != 20 {
		t.Fatalf("the owner's line of alice: %+v", a)
	}
	if d := owner.Principals["default"]; d.Clients != 2 || d.BytesOut != 40 {
		t.Fatalf("the owner's line of default: %+v", d)
	}

	alice, err := rep.Status(Viewer{Principal: "alice"}, socket)
	if err != nil {
		t.Fatal(err)
	}
	if alice.Scope != ScopePrincipal || alice.Turns != 1 || alice.Clients != 1 || alice.Bus != nil || alice.Dispatch != nil ||
		alice.Workspace != "" || alice.Home != "" || alice.Pid != owner.Pid || !alice.Started.Equal(owner.Started) {
		t.Fatalf("alice's view: %+v", alice)
	}
	if got := slices.Collect(maps.Keys(alice.Principals)); !slices.Equal(got, []string{"alice"}) || alice.Principals["alice"].BytesIn != 10 || alice.Principals["alice"].CPUMicros == 0 {
		t.Fatalf("alice sees the principals %v: %+v", got, alice.Principals)
	}
	if len(alice.Capsules) != len(owner.Capsules) {
		t.Fatalf("alice sees %d capsules, the owner %d", len(alice.Capsules), len(owner.Capsules))
	}
	// What goes over the wire: no key of the owner's.
	b, _ := json.Marshal(alice)
	for _, key := range []string{`"bus"`, `"dispatch"`, `"workspace"`, `"home"`, `"default"`, `"dir"`, `"error"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("alice's status carries %s: %s", key, b)
		}
	}

	bob, err := rep.Status(Viewer{Principal: "bob"}, socket)
	if err != nil {
		t.Fatal(err)
	}
	if bob.Turns != 0 || bob.Clients != 0 || len(bob.Principals) != 0 {
		t.Fatalf("bob's view shows others' work: %+v", bob)
	}
	capsules, err := rep.Capsules(Viewer{Principal: "bob"})
	if err != nil || len(capsules) != len(owner.Capsules) {
		t.Fatalf("bob's capsule list: %d, %v", len(capsules), err)
	}

	turn.Close()
	if err := d.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if _, err := rep.Capsules(ownerView); !errors.Is(err, ErrNotServing) {
		t.Fatalf("after shutdown: %v, want ErrNotServing", err)
	}
}
