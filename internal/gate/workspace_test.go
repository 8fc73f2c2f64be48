package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// WithWorkspace moves `*` and relative paths to another workspace and
// leaves the other grants alone; "" grants nothing through `*`; the root
// is refused under a `*` grant; the original gate is unchanged.
func TestWithWorkspace(t *testing.T) {
	g, err := New(manifest.Capabilities{FSRead: []string{"*", "/etc"}, FSWrite: []string{"*"}}, Env{Workspace: "/ws/a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.WithWorkspace("/ws/b")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := b.FSWrite("default", "x.txt"); err != nil || r.Path() != "/ws/b/x.txt" {
		t.Fatalf("a relative write in b: %+v, %v", r, err)
	}
	if _, err := b.FSRead("default", "/ws/a/x.txt"); err == nil {
		t.Fatal("b reads a's workspace")
	}
	if r, err := g.FSWrite("default", "x.txt"); err != nil || r.Path() != "/ws/a/x.txt" {
		t.Fatalf("the original gate changed: %+v, %v", r, err)
	}
	if _, err := b.FSRead("default", "/etc/hosts"); err != nil {
		t.Fatalf("a literal grant lost: %v", err)
	}
	none, err := g.WithWorkspace("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.FSRead("default", "x.txt"); err == nil {
		t.Fatal("a relative path without a workspace")
	}
	if _, err := none.FSRead("default", "/ws/a/x.txt"); err == nil {
		t.Fatal("* without a workspace grants something")
	}
	if read, write := none.FSDirs("default"); len(read) != 1 || len(write) != 0 {
		t.Fatalf("FSDirs without a workspace: %v %v", read, write)
	}
	if _, err := g.WithWorkspace("/"); err == nil {
		t.Fatal("the root as the workspace of a * grant")
	}
	if _, err := g.WithWorkspace("rel"); err == nil {
		t.Fatal("a relative workspace")
	}
	if same, _ := g.WithWorkspace("/ws/a"); same != g {
		t.Fatal("the same workspace made a copy")
	}
}
