package config

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Sandbox is how the processes capsules start are confined (DESIGN §11,
// docs/sandbox.md).
type Sandbox struct {
	// Mode is "enforce" (the default: every process a capsule starts runs
	// inside its grants, and where this kernel cannot enforce that, the
	// process is not started) or "off" (unconfined, warned about at every
	// start, in status and in the web view).
	Mode string `toml:"mode"`
	// Read is what every confined process may read besides its grants:
	// programs, libraries, certificates, locales. `astrid init` writes the
	// default out.
	Read []string `toml:"read"`
	// Devices are the device files it may read and write.
	Devices []string `toml:"devices"`
}

// Approval is what the operator lets run without asking the person.
type Approval struct {
	// ConfinedShell is "ask" (the default: every shell command is asked
	// about) or "auto" (a command that will run confined runs without a
	// question, as codex's workspace-write mode and Claude Code's
	// sandboxed bash do; one asked to run unconfined is always asked).
	ConfinedShell string `toml:"confined_shell"`
}

// The values Approval.ConfinedShell takes.
const (
	ConfinedShellAsk  = "ask"
	ConfinedShellAuto = "auto"
)

func (a Approval) validate(bad func(key, format string, args ...any)) {
	switch strings.ToLower(a.ConfinedShell) {
	case ConfinedShellAsk, ConfinedShellAuto:
	default:
		bad("approval.confined_shell", "unknown value %q; use ask or auto", a.ConfinedShell)
	}
}

// The modes Sandbox.Mode names.
const (
	SandboxEnforce = "enforce"
	SandboxOff     = "off"
)

// Off reports whether processes run unconfined.
func (s Sandbox) Off() bool { return strings.EqualFold(s.Mode, SandboxOff) }

func (s Sandbox) validate(bad func(key, format string, args ...any)) {
	switch strings.ToLower(s.Mode) {
	case SandboxEnforce, SandboxOff:
	default:
		bad("sandbox.mode", "unknown mode %q; use enforce or off", s.Mode)
	}
	for name, list := range map[string][]string{"sandbox.read": s.Read, "sandbox.devices": s.Devices} {
		for i, p := range list {
			switch {
			case !filepath.IsAbs(p):
				bad(name+"["+strconv.Itoa(i)+"]", "%q is not an absolute path", p)
			case filepath.Clean(p) == "/":
				bad(name+"["+strconv.Itoa(i)+"]", "the whole file system is never part of the system set")
			}
		}
	}
}

// Auto reports whether confined shell commands run without a question.
func (a Approval) Auto() bool { return strings.EqualFold(a.ConfinedShell, ConfinedShellAuto) }
