package kernel

import (
	"fmt"
	"log/slog"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// SandboxState says in a line how the processes capsules start are
// confined with these settings on this machine, for status and the web
// view: enforced, off, or enforced but impossible here (then no process
// starts).
func SandboxState(s config.Sandbox) string {
	if s.Off() {
		return `OFF ([sandbox] mode = "off"): processes capsules start run unconfined, with this user's full authority`
	}
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		return fmt.Sprintf("enforce, but this machine cannot confine, so no capsule process starts: %v", err)
	}
	return fmt.Sprintf("enforce (Landlock ABI %d, seccomp)", sandbox.ABI())
}

// warnSandbox says at every start what is not confined.
func warnSandbox(s config.Sandbox, log *slog.Logger) {
	if n := SandboxNotice(s); n != "" {
		log.Warn(n)
	}
}

// SandboxNotice is the standing warning to show a person (on the
// terminal, in the web view) when processes are not confined, "" when
// they are.
func SandboxNotice(s config.Sandbox) string {
	if s.Off() || sandbox.Need(sandbox.ABI()) != nil {
		return "sandbox: " + SandboxState(s)
	}
	return ""
}
