package shell

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// backgroundNote is how the approval question marks a command left
// running: an allowance for it is not one for the command run to its end.
const backgroundNote = "left running in the background"

// registerBackground adds the tools of spec §5.3 for commands that keep
// running: a server, a watcher, a long build. The host owns the process
// (the caller's principal and this capsule alone can read or stop it; it
// ends with the capsule or the kernel, 1 MiB of unread output kept per
// stream), so the tools only translate.
func registerBackground(c *sdk.Capsule) {
	sdk.Tool(c, "spawn_background_process", "Start a command with bash -c in the background and return its id at once, for a command that keeps running (a server, a watcher, a long build). "+
		"The person approves it first, as for run_shell_command; the same catastrophic commands are refused. "+
		"Read what it printed with read_process_logs and stop it with kill_process; it is stopped when the session's kernel stops. At most 8 run at once.",
		spawnBackground, sdk.Mutable())
	sdk.Tool(c, "read_process_logs", "Return what a background process (an id from spawn_background_process) printed since the last read, and whether it still runs or how it ended. "+
		"Output not read in time is dropped past 1 MiB per stream, which the answer says.", readProcessLogs)
	sdk.Tool(c, "kill_process", "Stop a background process (an id from spawn_background_process): SIGINT, then SIGKILL after 2 s, for it and everything it started. Returns its last output and how it ended. "+
		"No new approval is asked: the person approved the process when it started.", killProcess, sdk.Mutable())
}

type spawnArgs struct {
	Command          string `json:"command" desc:"the command line, run as bash -c <command> in the background"`
	WorkingDirectory string `json:"working_directory,omitempty" desc:"directory to run in, relative to the workspace (default: the workspace)"`
}

type processArgs struct {
	ID string `json:"id" desc:"the id spawn_background_process returned"`
}

func spawnBackground(c *sdk.Call, a spawnArgs) (string, error) {
	if err := approve(c, a.Command, a.WorkingDirectory, backgroundNote, false); err != nil {
		return "", err
	}
	h, err := c.ProcessSpawn(hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{
		Program: Program,
		Args:    []string{"-c", a.Command},
		Dir:     a.WorkingDirectory,
	}})
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeRateLimited {
			return "", modelError("Command '%s' was not started: %d background processes already run; stop one with kill_process (or read the logs of one that ended): %w", a.Command, hostapi.MaxBackgroundProcesses, err)
		}
		return "", modelError("Command '%s' could not be started: %w", a.Command, err)
	}
	return fmt.Sprintf("Background process started with id: %s\nRead its output with read_process_logs and stop it with kill_process.", h.ID), nil
}

func readProcessLogs(c *sdk.Call, a processArgs) (string, error) {
	if a.ID == "" {
		return "", fmt.Errorf("id is empty: pass the id spawn_background_process returned")
	}
	logs, err := c.ProcessLogs(a.ID)
	if err != nil {
		return "", processError("read", a.ID, err)
	}
	return describeLogs(logs), nil
}

func killProcess(c *sdk.Call, a processArgs) (string, error) {
	if a.ID == "" {
		return "", fmt.Errorf("id is empty: pass the id spawn_background_process returned")
	}
	logs, err := c.ProcessKill(a.ID)
	if err != nil {
		return "", processError("stop", a.ID, err)
	}
	return describeLogs(logs), nil
}

// processError says why an id did not work; an unknown id is the common
// case (a typo, a process of another session's principal, or one whose end
// was already reported, which frees its id).
func processError(verb, id string, err error) error {
	if hostapi.CodeOf(err) == hostapi.CodeNotFound {
		return fmt.Errorf("cannot %s background process %s: no such process (ids come from spawn_background_process; a process whose end was reported is gone): %w", verb, id, err)
	}
	return fmt.Errorf("cannot %s background process %s: %w", verb, id, err)
}

// describeLogs is the answer for a read or a kill: the state first, then
// what was printed (cut as run_shell_command cuts it), then what was lost.
func describeLogs(l hostapi.ProcessLogs) string {
	var b strings.Builder
	switch {
	case l.Running:
		b.WriteString("Status: running")
	case l.TimedOut:
		b.WriteString("Status: ended: its time limit passed")
	case l.OverLimit:
		fmt.Fprintf(&b, "Status: ended: it ran more than %d processes at once", hostapi.MaxProcessDescendants)
	case l.Killed:
		b.WriteString("Status: stopped (SIGINT, then SIGKILL)")
	case l.Signal != "":
		fmt.Fprintf(&b, "Status: ended by signal %s", l.Signal)
	default:
		fmt.Fprintf(&b, "Status: exited with code %d", l.ExitCode)
	}
	if !l.Running && l.Signal != "" && (l.Killed || l.TimedOut || l.OverLimit) {
		fmt.Fprintf(&b, " (signal %s)", l.Signal)
	}
	b.WriteString("\n")
	out := shownStream("stdout", l.Stdout, int64(len(l.Stdout)), false, maxStdoutShown)
	errText := shownStream("stderr", l.Stderr, int64(len(l.Stderr)), false, maxStderrShown)
	if printed := joinOutput(out, errText); printed != "" {
		b.WriteString("--- new output ---\n" + printed)
		if !strings.HasSuffix(printed, "\n") {
			b.WriteString("\n")
		}
	} else {
		b.WriteString("(no new output)\n")
	}
	if l.StdoutDropped > 0 || l.StderrDropped > 0 {
		fmt.Fprintf(&b, "[not read in time and dropped: %d bytes of stdout, %d of stderr]\n", l.StdoutDropped, l.StderrDropped)
	}
	return strings.TrimRight(b.String(), "\n")
}
