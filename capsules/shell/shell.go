package shell

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the capsule's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// ID is the capsule's id (its manifest's package name).
const ID = "astrid-capsule-shell"

// Program is what the capsule runs, as host_process grants it.
const Program = "bash"

// Timeouts of a run, in seconds: the default and the most a call may ask.
// The call's own deadline (the kernel's call_deadline, 5 minutes by
// default, and the orchestrator's tool-round limit through a cancel) caps
// it further; the result then says the command timed out or was
// cancelled.
const (
	defaultTimeoutSecs = 120
	maxTimeoutSecs     = 3600
)

// What a result shows of each stream: the first and last half of these
// many bytes. A result must fit, JSON-escaped (up to six bytes a byte for
// control characters) and carried again by the router, in the bus's 1 MiB
// message; the host keeps the first 1 MiB of each stream.
const (
	maxStdoutShown = 64 << 10
	maxStderrShown = 16 << 10
)

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Run shell commands in the workspace, each approved by the person")
	sdk.Tool(c, "run_shell_command", "Run a command with bash -c and return its standard output (and standard error, if any). "+
		"The person is asked to approve each command before it runs; a few catastrophic commands (rm -rf /, mkfs, shutdown, dd onto a disk, ...) are always refused. "+
		"working_directory is relative to the workspace (default: the workspace). A command that exits non-zero is an error that shows its exit code and output. "+
		"Long output is cut in the middle, saying how much was left out.", runShellCommand, sdk.Mutable())
	registerBackground(c)
	return c
}

type runArgs struct {
	Command          string `json:"command" desc:"the command line, run as bash -c <command>"`
	WorkingDirectory string `json:"working_directory,omitempty" desc:"directory to run in, relative to the workspace (default: the workspace)"`
	TimeoutSecs      *int   `json:"timeout_secs,omitempty" desc:"seconds before the command is stopped (SIGINT, then SIGKILL): default 120, at most 3600; the agent's limit on a round of tool calls and the kernel's call deadline (5 minutes unless configured) may stop it sooner"`
	Unconfined       bool   `json:"unconfined,omitempty" desc:"run outside the sandbox (commands run confined to the workspace with no network by default); the person is asked every time and usually says no: set it only after a confined run failed because the sandbox refused something the task truly needs"`
}

func runShellCommand(c *sdk.Call, a runArgs) (string, error) {
	command := a.Command
	timeout := defaultTimeoutSecs
	if a.TimeoutSecs != nil {
		if *a.TimeoutSecs < 1 || *a.TimeoutSecs > maxTimeoutSecs {
			return "", fmt.Errorf("timeout_secs is %d; it must be between 1 and %d", *a.TimeoutSecs, maxTimeoutSecs)
		}
		timeout = *a.TimeoutSecs
	}
	if err := approve(c, command, a.WorkingDirectory, "", a.Unconfined); err != nil {
		return "", err
	}
	res, err := c.ProcessRun(hostapi.ProcessRequest{
		Program: Program,
		Args:    []string{"-c", command},
		Dir:     a.WorkingDirectory,
		Timeout: time.Duration(timeout) * time.Second,
		// The kernel asks the person about this separately, every time.
		Unconfined: a.Unconfined,
	})
	return outcome(command, timeout, res, err)
}

// approve checks a command and its working directory, refuses what the
// deny list names, and asks the person about the exact command (where it
// runs, and how: note says it runs in the background), in that order: no
// question is asked about a command that could not run or may never run.
func approve(c *sdk.Call, command, workDir, note string, unconfined bool) error {
	if err := checkArgument(command); err != nil {
		return err
	}
	if strings.IndexByte(workDir, 0) >= 0 {
		return fmt.Errorf("working_directory holds a NUL byte")
	}
	if workDir != "" {
		// Checked before the person is asked, so nobody approves a
		// command that cannot run there; the host checks it again
		// (through the grant's root) when it starts the command.
		fi, err := c.FSStat(workDir)
		if err != nil {
			return fmt.Errorf("working_directory %s cannot be used (it must be a directory inside the workspace, not reached through a symlink out of it): %w", workDir, err)
		}
		if !fi.IsDir {
			return fmt.Errorf("working_directory %s is not a directory", workDir)
		}
	}
	if why := denyReason(command); why != "" {
		c.Log(hostapi.LogInfo, "shell: refused without asking: "+why)
		return modelError("Command '%s' is refused and was not run: %s. No approval can allow it", command, why)
	}
	if !unconfined {
		if v, _ := c.Config(hostapi.ConfinedShellKey); v == "auto" {
			// The operator lets confined commands run unasked; the
			// kernel says "auto" only while it really confines them.
			c.Log(hostapi.LogInfo, "shell: runs confined without a question ([approval] confined_shell = \"auto\")")
			return nil
		}
	}
	resource := command
	if workDir != "" {
		// The person approves where it runs too; an allowance for a
		// command in one directory is not one for another.
		resource = fmt.Sprintf("%s\n(in %s)", command, workDir)
	}
	if note != "" {
		// And how: an allowance for a command run to its end is not one
		// for the same command left running.
		resource += "\n(" + note + ")"
	}
	if n := len(ipc.ApprovalText(resource, 0)); n > ipc.MaxApprovalResource {
		return fmt.Errorf("command and working directory are %d bytes as the approval question shows them; at most %d can be shown, and a person must see all of what they approve: write a long script to a file (write_file) and run the file", n, ipc.MaxApprovalResource)
	}
	approved, err := c.RequestApproval(actionOf(command), resource)
	if err != nil {
		switch hostapi.CodeOf(err) {
		case hostapi.CodeTimeout:
			return modelError("Command '%s' was not run: nobody answered the approval question in time: %w", command, err)
		case hostapi.CodeCancelled:
			return modelError("Command '%s' was not run: the call was cancelled while the person was asked: %w", command, err)
		}
		return modelError("Command '%s' was not run: the person could not be asked: %w", command, err)
	}
	if !approved {
		return modelError("Command '%s' was not approved by user", command)
	}
	return nil
}

// checkArgument refuses what cannot be run or cannot be asked about: an
// empty command, a NUL byte (no argument can hold one), and a command too
// long for the approval question to show whole (a person must see all of
// what they approve; the resource is checked again as the question shows
// it, escapes included).
func checkArgument(command string) error {
	if strings.TrimSpace(command) == "" {
		return fmt.Errorf("command is empty")
	}
	if i := strings.IndexByte(command, 0); i >= 0 {
		return fmt.Errorf("command holds a NUL byte (at byte %d); no program argument can carry one", i)
	}
	if len(command) > ipc.MaxApprovalResource {
		return fmt.Errorf("command is %d bytes; at most %d can be shown in the approval question, and a person must see all of what they approve: write a long script to a file (write_file) and run the file", len(command), ipc.MaxApprovalResource)
	}
	return nil
}

// outcome is the tool's answer for a run: stdout (and stderr) on exit 0;
// otherwise an error naming the exit code, signal, timeout or cancel, with
// what the command printed.
func outcome(command string, timeout int, res hostapi.ProcessResult, err error) (string, error) {
	out := shownStream("stdout", res.Stdout, res.StdoutBytes, res.StdoutTruncated, maxStdoutShown)
	errText := shownStream("stderr", res.Stderr, res.StderrBytes, res.StderrTruncated, maxStderrShown)
	printed := joinOutput(out, errText)
	if err != nil {
		var what string
		switch {
		case res.TimedOut || hostapi.CodeOf(err) == hostapi.CodeTimeout:
			what = fmt.Sprintf("Command timed out after %d s (or the call's deadline) and was stopped (SIGINT, then SIGKILL)", timeout)
		case res.Cancelled || hostapi.CodeOf(err) == hostapi.CodeCancelled:
			what = "Command was cancelled and stopped (SIGINT, then SIGKILL)"
		default:
			what = "Command could not be run"
		}
		return "", fmt.Errorf("%s: %w%s", what, err, section("output before it stopped", printed))
	}
	switch {
	case res.Signal != "":
		return "", modelError("Command was killed by signal %s%s", res.Signal, section("output", printed))
	case res.ExitCode != 0:
		msg := fmt.Sprintf("Command failed with exit code %d: %s", res.ExitCode, strings.TrimRight(errText, "\n"))
		if out != "" {
			msg += "\n--- stdout ---\n" + out
		}
		return "", fmt.Errorf("%s%s", msg, sandboxNote(res))
	}
	if printed == "" {
		return "(no output)", nil
	}
	return printed, nil
}

// sandboxNote tells the model, when a confined command failed on a
// refusal, that the sandbox refused it and what the box is: "Permission
// denied" reads like a file's mode otherwise, and the model would retry
// with sudo or chmod instead of working inside the workspace.
func sandboxNote(res hostapi.ProcessResult) string {
	if res.Confined == "" {
		return ""
	}
	text := strings.ToLower(string(res.Stderr) + string(res.Stdout))
	for _, refused := range []string{"permission denied", "operation not permitted", "eacces", "eperm", "read-only file system"} {
		if strings.Contains(text, refused) {
			return "\n--- sandbox ---\nThe command ran confined by Astrid's sandbox, which refuses what its grants do not cover: a \"permission denied\" or \"operation not permitted\" on anything outside them was the sandbox, not a file mode, and retrying with sudo or chmod will not help. It " + res.Confined + "."
		}
	}
	// A lookup that cannot be made (UDP is refused) reads like a DNS
	// outage; say it is the sandbox's network rule.
	for _, offline := range []string{"could not resolve host", "temporary failure in name resolution", "name or service not known", "network is unreachable", "getaddrinfo"} {
		if strings.Contains(text, offline) {
			return "\n--- sandbox ---\nThe command ran confined by Astrid's sandbox: a failed name lookup or an unreachable network was the sandbox, not an outage. It " + res.Confined + "."
		}
	}
	return ""
}

// joinOutput is stdout, then stderr under its own heading.
func joinOutput(out, errText string) string {
	switch {
	case errText == "":
		return out
	case out == "":
		return "--- stderr ---\n" + errText
	}
	return out + "\n--- stderr ---\n" + errText
}

func section(title, text string) string {
	if text == "" {
		return ""
	}
	return "\n--- " + title + " ---\n" + text
}

// shownStream is what a result shows of one stream: all of it when it is
// short, else its first and last halves around a line saying how much
// was left out (and that the host kept only the first part of it).
func shownStream(name string, kept []byte, total int64, hostCut bool, max int) string {
	s := string(kept)
	if len(s) <= max && !hostCut {
		return s
	}
	half := max / 2
	if len(s) <= max {
		return s + fmt.Sprintf("\n[%s cut: %d bytes in all; the host kept the first %d, shown above]", name, total, len(kept))
	}
	head, tail := cutAt(s, half, false), cutAt(s, half, true)
	note := fmt.Sprintf("\n[... %s cut: %d bytes in all; shown: the first %d and the last %d", name, total, len(head), len(tail))
	if hostCut {
		note += fmt.Sprintf(" of the first %d, which is all the host kept", len(kept))
	}
	return head + note + " ...]\n" + tail
}

// cutAt keeps n bytes of s, from its start or (fromEnd) its end, on a
// UTF-8 boundary.
func cutAt(s string, n int, fromEnd bool) string {
	if fromEnd {
		i := len(s) - n
		for i < len(s) && i > 0 && s[i]&0xC0 == 0x80 {
			i++
		}
		return s[i:]
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// modelError is an error the model reads as the tool's answer, worded as
// upstream's shell words it ("Command 'x' was not approved by user"): a
// capitalised sentence, unlike a Go error string that is wrapped into
// others, so the linter's rule for those does not apply here.
func modelError(format string, a ...any) error { return fmt.Errorf(format, a...) }
