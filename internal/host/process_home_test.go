package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// TestProcessWorkDirNotInTheHome: a link in the workspace leading into
// $ASTRID_HOME is no working directory for a process (os.Root alone would
// open it); an ordinary directory is.
func TestProcessWorkDirNotInTheHome(t *testing.T) {
	l := newHomeLayout(t)
	f := newFixture(t)
	f.deps.Workspace = l.ws
	f.deps.HomesDir = filepath.Join(l.home, "home")
	f.deps.Home = l.home
	f.deps.Sandbox.Protected = []string{l.home}
	c := f.capsule(t, `
[package]
name = "lister"
version = "0.1.0"
[capabilities]
fs_read = ["*"]
host_process = ["ls"]
`)
	call, _ := c.Begin(context.Background(), "default")
	defer call.End()
	for _, dir := range []string{"dot", "src/deep/updir", "runlink", ".astrid"} {
		res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "ls", Dir: dir})
		wantHomeRefused(t, "working directory "+dir, err)
		if len(res.Stdout) > 0 {
			t.Fatalf("working directory %s listed %q", dir, res.Stdout)
		}
	}
	if res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "ls", Dir: "src"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("an ordinary working directory: %v %+v", err, res)
	}
	l.unchanged(t)
}
