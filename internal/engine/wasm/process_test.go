//go:build linux

package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/manifest"
)

// grantSh grants the hostile guest the one program its run handler uses.
// grantSh lets the guest run sh, whose scripts write their pid files in
// the workspace: confined (DESIGN §11), that needs fs_write too.
func grantSh(m *manifest.Manifest) {
	m.Capabilities.HostProcess = []string{"sh"}
	m.Capabilities.FSWrite = []string{"*"}
}

type runAnswer struct {
	Result  hostapi.ProcessResult `json:"result"`
	Code    hostapi.Code          `json:"code"`
	Message string                `json:"message"`
}

func (f *fixture) run(t *testing.T, ctx context.Context, key string, req hostapi.ProcessRequest) (runAnswer, error) {
	t.Helper()
	in, err := json.Marshal(map[string]any{"Key": key, "Req": req})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.invoke(t, ctx, "run", string(in))
	if err != nil {
		return runAnswer{}, err
	}
	var a runAnswer
	if err := json.Unmarshal(v.Payload, &a); err != nil {
		t.Fatalf("answer %s: %v", v.Payload, err)
	}
	return a, nil
}

// A guest's process_run reaches the host: a granted program runs, with its
// output and exit status; an ungranted one and a refused environment are
// denied with the host's codes.
func TestProcessRunFromAGuest(t *testing.T) {
	f := loadHostileWith(t, Options{}, grantSh)
	cases := []struct {
		name string
		req  hostapi.ProcessRequest
		code hostapi.Code
		out  string
		exit int
	}{
		{"runs", hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", "echo hi; exit 4"}}, hostapi.CodeOK, "hi\n", 4},
		{"not granted", hostapi.ProcessRequest{Program: "sleep", Args: []string{"1"}}, hostapi.CodeDenied, "", 0},
		{"LD_PRELOAD", hostapi.ProcessRequest{Program: "sh", Env: map[string]string{"LD_PRELOAD": "x.so"}}, hostapi.CodeDenied, "", 0},
		{"NUL", hostapi.ProcessRequest{Program: "sh", Args: []string{"a\x00"}}, hostapi.CodeInvalid, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := f.run(t, context.Background(), "", tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if a.Code != tc.code || string(a.Result.Stdout) != tc.out || a.Result.ExitCode != tc.exit {
				t.Fatalf("got %+v", a)
			}
		})
	}
}

// A guest running `sleep 600` behind a shell that traps SIGINT is cancelled
// through its cancel key: SIGINT reaches the shell, SIGKILL follows the
// grace, the guest hears cancelled, and no process of the run remains.
func TestProcessCancelledFromAGuest(t *testing.T) {
	f := loadHostileWith(t, Options{}, grantSh)
	done := make(chan error, 1)
	var a runAnswer
	go func() {
		var err error
		a, err = f.run(t, context.Background(), "call-proc", hostapi.ProcessRequest{Program: "sh", Args: []string{"-c",
			`trap 'echo int >> got' INT; sleep 600 & echo "$$ $!" > pid.tmp; mv pid.tmp pid; while :; do sleep 0.05; done`}})
		done <- err
	}()
	pids := testutil.PidFile(t, 10*time.Second, filepath.Join(f.ws, "pid"))
	if n := f.cancels.Cancel(errors.New("cancelled by tool.v1.request.cancel"), "call-proc"); n != 1 {
		t.Fatalf("cancel reached %d calls", n)
	}
	err := <-done
	// The guest is interrupted with its call: the engine answers
	// cancelled, or the guest's own answer says so if it got to write it.
	if err == nil && (a.Code != hostapi.CodeCancelled || !strings.Contains(a.Message, "cancelled")) {
		t.Fatalf("answer %+v", a)
	}
	if err != nil && !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("call error %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "got")); !strings.Contains(string(b), "int") {
		t.Error("the shell never saw SIGINT")
	}
	testutil.NoProcess(t, pids...)
	f.mustWork(t)
}
