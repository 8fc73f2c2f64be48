package host

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/host/proc"
)

// ProcessRun implements hostapi.Process: the request checked and confined
// here, run and tracked by internal/host/proc.
func (call *Call) ProcessRun(req hostapi.ProcessRequest) (hostapi.ProcessResult, error) {
	defer call.leave(call.enter(opProcessRun))
	const op = "process_run"
	if err := call.live(op); err != nil {
		return hostapi.ProcessResult{}, err
	}
	cmd, dir, cf, err := call.prepareProcess(op, req)
	if err != nil {
		call.auditRefusal(op, req.Program, err)
		return hostapi.ProcessResult{}, err
	}
	defer dir.Close()
	return call.c.procs.Run(call.ctx, op, req, cmd, cf, call.cancelKeyNow(), call.live)
}

// ProcessSpawn implements hostapi.Process.
func (call *Call) ProcessSpawn(req hostapi.ProcessSpawnRequest) (hostapi.ProcessHandle, error) {
	defer call.leave(call.enter(opProcessSpawn))
	const op = "process_spawn"
	if err := call.live(op); err != nil {
		return hostapi.ProcessHandle{}, err
	}
	if req.Persistent {
		if err := call.c.gate.Persistent(req.Program); err != nil {
			err := hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
			call.auditRefusal(op, req.Program, err)
			return hostapi.ProcessHandle{}, err
		}
	}
	cmd, dir, cf, err := call.prepareProcess(op, req.ProcessRequest)
	if err != nil {
		call.auditRefusal(op, req.Program, err)
		return hostapi.ProcessHandle{}, err
	}
	defer dir.Close()
	return call.c.procs.Spawn(op, req, orDefault(call.principal), cmd, cf)
}

// ProcessLogs implements hostapi.Process.
func (call *Call) ProcessLogs(id string) (hostapi.ProcessLogs, error) {
	defer call.leave(call.enter(opProcessLogs))
	const op = "process_logs"
	if err := call.live(op); err != nil {
		return hostapi.ProcessLogs{}, err
	}
	return call.c.procs.Logs(op, orDefault(call.principal), id)
}

// ProcessKill implements hostapi.Process.
func (call *Call) ProcessKill(id string) (hostapi.ProcessLogs, error) {
	defer call.leave(call.enter(opProcessKill))
	const op = "process_kill"
	if err := call.live(op); err != nil {
		return hostapi.ProcessLogs{}, err
	}
	return call.c.procs.Kill(op, orDefault(call.principal), id)
}

// prepareProcess checks req for op (what no grant makes safe, then
// host_process, then the working directory) and builds its command: a
// clean environment, its own session, run in the directory opened through
// the grant, which the caller closes once the command started, and
// confined to the capsule's grants (proc starts it; the run's end calls
// Done).
func (call *Call) prepareProcess(op string, req hostapi.ProcessRequest) (*exec.Cmd, *os.File, *proc.Confined, error) {
	env, err := proc.CheckRequest(op, req)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := call.c.gate.HostProcess(req.Program); err != nil {
		return nil, nil, nil, hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
	}
	path, err := proc.ResolveProgram(op, req.Program)
	if err != nil {
		return nil, nil, nil, err
	}
	dir, err := call.openWorkDir(op, req.Dir)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := proc.Command(path, req.Args, env, dir)
	if req.Unconfined && !call.c.deps.Sandbox.Off {
		if err := call.askUnconfined(op, path, req.Args); err != nil {
			dir.Close()
			return nil, nil, nil, err
		}
		cf, err := proc.PrivateTemp(op, cmd)
		if err != nil {
			dir.Close()
			return nil, nil, nil, err
		}
		return cmd, dir, cf, nil
	}
	cf, err := call.c.confine(call.gate(), op, cmd, orDefault(call.principal), path)
	if err != nil {
		dir.Close()
		return nil, nil, nil, err
	}
	return cmd, dir, cf, nil
}

// cancelKeyNow is the call's cancel key, for the log of its processes and
// the questions it asks.
func (call *Call) cancelKeyNow() string {
	call.mu.Lock()
	defer call.mu.Unlock()
	return call.cancelKey
}

// openWorkDir opens the working directory through the granted root it
// falls under (fs_read, else fs_write), so a symlink cannot lead out.
func (call *Call) openWorkDir(op, path string) (*os.File, error) {
	if path == "" {
		path = "."
	}
	r, err := call.gate().FSRead(call.principal, path)
	if err != nil {
		var werr error
		if r, werr = call.gate().FSWrite(call.principal, path); werr != nil {
			return nil, hostapi.Errorf(hostapi.CodeDenied, op, "working directory: %v", err)
		}
	}
	var dir *os.File
	rel := filepath.FromSlash(r.Rel)
	err = call.c.withGranted(op, path, r, func(root *os.Root) error {
		f, err := root.Open(rel)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil && !fi.IsDir() {
			err = hostapi.Errorf(hostapi.CodeInvalid, op, "working directory %s is not a directory", path)
		}
		if err == nil {
			// Where it really is: a link inside the workspace may lead
			// into $ASTRID_HOME, which os.Root does not stop.
			err = fsFence{r: r, capability: "fs_read", request: path}.object(f, rel)
		}
		if err != nil {
			f.Close()
			return err
		}
		dir = f
		return nil
	})
	return dir, err
}
