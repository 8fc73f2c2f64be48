//go:build linux

package wasm

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
)

type bgAnswer struct {
	Answer  json.RawMessage `json:"answer"`
	Code    hostapi.Code    `json:"code"`
	Message string          `json:"message"`
}

// bg sends the hostile guest's bg handler one operation, each in a call of
// its own: a background process outlives the call that spawned it.
func (f *fixture) bg(t *testing.T, op, id string, req hostapi.ProcessSpawnRequest) bgAnswer {
	t.Helper()
	in, err := json.Marshal(map[string]any{"Op": op, "ID": id, "Req": req})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.invoke(t, context.Background(), "bg", string(in))
	if err != nil {
		t.Fatal(err)
	}
	var a bgAnswer
	if err := json.Unmarshal(v.Payload, &a); err != nil {
		t.Fatalf("answer %s: %v", v.Payload, err)
	}
	return a
}

// A guest spawns a background process in one call, reads its logs in the
// next and kills it in a third: SIGINT reaches its trap, SIGKILL follows,
// nothing of it remains. Another spawned process ends when the capsule
// unloads; a persistent one is refused without allow_persistent.
func TestBackgroundProcessFromAGuest(t *testing.T) {
	f := loadHostileWith(t, Options{}, grantSh)
	spawn := func(script string) string {
		a := f.bg(t, "spawn", "", hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", script}}})
		var h hostapi.ProcessHandle
		if err := json.Unmarshal(a.Answer, &h); a.Code != hostapi.CodeOK || err != nil || h.ID == "" {
			t.Fatalf("spawn: %+v %v", a, err)
		}
		return h.ID
	}
	id := spawn(`trap 'echo int >> got' INT; sleep 600 & echo "$$ $!" > pid.tmp; mv pid.tmp pid; echo ready; while :; do sleep 0.05; done`)
	pids := testutil.PidFile(t, 10*time.Second, filepath.Join(f.ws, "pid"))
	var out string
	testutil.WaitFor(t, 10*time.Second, "the guest's read of the logs", func() bool {
		a := f.bg(t, "logs", id, hostapi.ProcessSpawnRequest{})
		var l hostapi.ProcessLogs
		if err := json.Unmarshal(a.Answer, &l); a.Code != hostapi.CodeOK || err != nil || !l.Running {
			t.Fatalf("logs: %+v %v", a, err)
		}
		out += string(l.Stdout)
		return out == "ready\n"
	})
	a := f.bg(t, "kill", id, hostapi.ProcessSpawnRequest{})
	var l hostapi.ProcessLogs
	if err := json.Unmarshal(a.Answer, &l); a.Code != hostapi.CodeOK || err != nil || !l.Killed || l.Signal != "killed" {
		t.Fatalf("kill: %+v %+v %v", a, l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "got")); !strings.Contains(string(b), "int") {
		t.Error("the trap never saw SIGINT")
	}
	testutil.NoProcess(t, pids...)
	if a := f.bg(t, "logs", id, hostapi.ProcessSpawnRequest{}); a.Code != hostapi.CodeNotFound {
		t.Fatalf("logs after the kill: %+v", a)
	}

	if a := f.bg(t, "spawn", "", hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sh"}, Persistent: true}); a.Code != hostapi.CodeDenied || !strings.Contains(a.Message, "allow_persistent") {
		t.Fatalf("persistent without the grant: %+v", a)
	}
	if a := f.bg(t, "spawn", "", hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"LD_PRELOAD": "x.so"}}}); a.Code != hostapi.CodeDenied {
		t.Fatalf("LD_PRELOAD: %+v", a)
	}

	spawn(`echo $$ > left.tmp; mv left.tmp left; exec sleep 600`)
	left := testutil.PidFile(t, 10*time.Second, filepath.Join(f.ws, "left"))
	f.host.Close()
	testutil.NoProcess(t, left...)
}
