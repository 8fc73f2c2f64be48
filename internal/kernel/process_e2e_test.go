//go:build linux

package kernel

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// A wasm tool running `sleep 600` behind a shell that traps SIGINT is
// cancelled by a cancel request naming its call id, through the kernel's
// one listener: the shell sees SIGINT, SIGKILL follows
// the grace, the call answers cancelled and no process of the run remains.
func TestCancelRequestKillsAGuestsProcess(t *testing.T) {
	k, ws := bootTest(t, []Builtin{})
	ctx := context.Background()
	loadHostileWasmWith(t, k, func(m *manifest.Manifest) {
		m.Capabilities.HostProcess = []string{"sh"}
		// Its script writes its pid file in the workspace, confined.
		m.Capabilities.FSWrite = []string{"*"}
	})
	c, _ := k.Registry.Get("hostile")
	in, _ := json.Marshal(map[string]any{"Key": "call-proc-cancel", "Req": hostapi.ProcessRequest{Program: "sh", Args: []string{"-c",
		`trap 'echo int >> got' INT; sleep 600 & echo "$$ $!" > pid.tmp; mv pid.tmp pid; while :; do sleep 0.05; done`}}})
	type answer struct {
		v   hostapi.Verdict
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := c.Invoke(ctx, hostapi.Invocation{Handler: "run", Topic: "hostile.v1.run", Principal: ipc.DefaultPrincipal, Payload: in})
		done <- answer{v, err}
	}()
	pids := testutil.PidFile(t, 30*time.Second, filepath.Join(ws, "pid"))
	publishCancel(t, k, ipc.DefaultPrincipal, "call-proc-cancel")
	a := <-done
	said := ""
	if a.err != nil {
		said = a.err.Error()
	} else {
		said = string(a.v.Payload)
	}
	if !strings.Contains(said, "cancelled") {
		t.Fatalf("cancelled call answered %q", said)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "got")); !strings.Contains(string(b), "int") {
		t.Error("the shell never saw SIGINT")
	}
	testutil.NoProcess(t, pids...)
}
