//go:build !linux

package proc

import (
	"context"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// Elsewhere than Linux there is no child subreaper to catch what escapes a
// child's group, so the process call is not offered at all rather than
// offered with a leak (docs/rationale/host.md).

type run struct {
	cmd   *exec.Cmd
	every time.Duration
}

type ended struct {
	ctxErr    error
	overLimit bool
	unloaded  bool
}

func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startTracked(_ *exec.Cmd, cf *Confined, _, _ string, _ *slog.Logger) (*run, error) {
	cf.Done()
	return nil, hostapi.Errorf(hostapi.CodeNotSupported, "process_run", "process calls are only supported on Linux")
}

func (*run) kill() {}

func (*run) supervise(context.Context, time.Duration, int) ended { return ended{} }
