package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// maxChildrenPerCapsule caps a capsule's concurrently running process
// calls; maxDescendants caps the processes one run may have at once (its
// session and what escaped from it), the fork-bomb guard.
const (
	maxChildrenPerCapsule = 8
	maxDescendants        = hostapi.MaxProcessDescendants
)

// refusedEnvKeys change how a program is loaded or how a shell starts, so a
// caller could run code the operator never granted through them.
var refusedEnvKeys = map[string]bool{
	"BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true, "PS4": true,
	"PROMPT_COMMAND": true, "IFS": true, "GCONV_PATH": true, "HOSTALIASES": true,
	"LOCALDOMAIN": true, "RES_OPTIONS": true, "NLSPATH": true, "GLIBC_TUNABLES": true,
}

var refusedEnvPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "MALLOC_"}

// ProcessRun implements hostapi.Process.
func (call *Call) ProcessRun(req hostapi.ProcessRequest) (hostapi.ProcessResult, error) {
	defer call.leave(call.enter(opProcessRun))
	const op = "process_run"
	if err := call.live(op); err != nil {
		return hostapi.ProcessResult{}, err
	}
	cmd, dir, cf, err := call.prepareProcess(op, req)
	if err != nil {
		return hostapi.ProcessResult{}, err
	}
	defer dir.Close()
	if !call.c.procs.acquire() {
		cf.Done()
		return hostapi.ProcessResult{}, hostapi.Errorf(hostapi.CodeRateLimited, op, "the capsule already runs %d processes", maxChildrenPerCapsule)
	}
	defer call.c.procs.release()

	ctx := call.ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	cmd.Stdin = bytes.NewReader(req.Stdin)
	stdout, stderr := &cappedBuffer{max: hostapi.MaxProcessOutput}, &cappedBuffer{max: hostapi.MaxProcessOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	run, err := startTracked(cmd, cf, call.cancelKeyNow(), call.c.id, call.c.log)
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeNotSupported {
			return hostapi.ProcessResult{}, err
		}
		return hostapi.ProcessResult{}, hostapi.Errorf(hostapi.CodeIO, op, "start %s: %v", req.Program, err)
	}
	defer call.c.addRun(run)()
	ended := run.supervise(ctx, hostapi.ProcessGrace, maxDescendants)
	res := hostapi.ProcessResult{
		Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes(),
		StdoutBytes: stdout.n, StderrBytes: stderr.n,
		StdoutTruncated: stdout.n > int64(stdout.max), StderrTruncated: stderr.n > int64(stderr.max),
		Confined: cf.Summary(),
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	switch {
	case ended.unloaded:
		res.Cancelled = true
		return res, hostapi.Errorf(hostapi.CodeCancelled, op, "%s was killed: the capsule unloaded", req.Program)
	case ended.overLimit:
		return res, hostapi.Errorf(hostapi.CodeTooLarge, op, "%s had more than %d processes at once and was killed", req.Program, maxDescendants)
	case ended.ctxErr != nil:
		if lerr := call.live(op); lerr != nil {
			if hostapi.CodeOf(lerr) == hostapi.CodeCancelled {
				res.Cancelled = true
			} else {
				res.TimedOut = true
			}
			return res, lerr
		}
		res.TimedOut = true
		return res, hostapi.Errorf(hostapi.CodeTimeout, op, "%s ran past its %v timeout and was killed", req.Program, req.Timeout)
	}
	return res, nil
}

// prepareProcess checks req for op (what no grant makes safe, then
// host_process, then the working directory) and builds its command: a
// clean environment, its own session, run in the directory opened through
// the grant, which the caller closes once the command started, and
// confined to the capsule's grants (startTracked starts it; the run's end
// calls Done).
func (call *Call) prepareProcess(op string, req hostapi.ProcessRequest) (*exec.Cmd, *os.File, *Confined, error) {
	env, err := checkProcessRequest(op, req)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := call.c.gate.HostProcess(req.Program); err != nil {
		return nil, nil, nil, hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
	}
	path, err := resolveProgram(op, req.Program)
	if err != nil {
		return nil, nil, nil, err
	}
	dir, err := call.openWorkDir(op, req.Dir)
	if err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(path, req.Args...)
	cmd.Env = env
	// The child changes into the directory before exec, while it still
	// holds the kernel's descriptors: the directory opened through the
	// grant's root, not a path that could be swapped for a symlink since.
	cmd.Dir = fmt.Sprintf("/proc/self/fd/%d", dir.Fd())
	cmd.SysProcAttr = childProcAttr()
	// Wait returns shortly after the child exited even if something it
	// left behind still holds the pipes: that is killed as the run ends,
	// so its output is not worth waiting for.
	cmd.WaitDelay = 200 * time.Millisecond
	if req.Unconfined && !call.c.deps.Sandbox.Off {
		if err := call.askUnconfined(op, path, req.Args); err != nil {
			dir.Close()
			return nil, nil, nil, err
		}
		cf, err := withPrivateTemp(op, cmd)
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

// cancelKeyNow is the call's cancel key, for the log of its processes.
func (call *Call) cancelKeyNow() string {
	call.mu.Lock()
	defer call.mu.Unlock()
	return call.cancelKey
}

// checkProcessRequest refuses what no grant can make safe and returns the
// child's environment: a clean one plus req.Env.
func checkProcessRequest(op string, req hostapi.ProcessRequest) ([]string, error) {
	size := len(req.Program)
	if strings.IndexByte(req.Program, 0) >= 0 {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "the program name holds a NUL byte")
	}
	for i, a := range req.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "argument %d holds a NUL byte", i+1)
		}
		size += len(a) + 1
	}
	if len(req.Stdin) > hostapi.MaxProcessStdin {
		return nil, hostapi.Errorf(hostapi.CodeTooLarge, op, "stdin is over %d bytes", hostapi.MaxProcessStdin)
	}
	// HOME and TMPDIR are the call's private directory (Confine).
	env := []string{"PATH=" + hostapi.ProcessPath, "LANG=C.UTF-8"}
	keys := make([]string, 0, len(req.Env))
	for k := range req.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := req.Env[k]
		if reason := refusedEnvKey(k); reason != "" {
			return nil, hostapi.Errorf(hostapi.CodeDenied, op, "environment key %q %s", k, reason)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "environment value of %s holds a NUL byte", k)
		}
		size += len(k) + len(v) + 2
		env = append(env, k+"="+v)
	}
	if size > hostapi.MaxProcessArgs {
		return nil, hostapi.Errorf(hostapi.CodeTooLarge, op, "program, arguments and environment are %d bytes, over %d", size, hostapi.MaxProcessArgs)
	}
	return env, nil
}

// refusedEnvKey says why k may not be set, or "".
func refusedEnvKey(k string) string {
	if k == "" {
		return "is empty"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return "is not a name of letters, digits and _"
		}
	}
	upper := strings.ToUpper(k)
	if refusedEnvKeys[upper] {
		return "changes how programs or shells start and is refused"
	}
	for _, p := range refusedEnvPrefixes {
		if strings.HasPrefix(upper, p) {
			return "changes how programs are loaded and is refused"
		}
	}
	return ""
}

// resolveProgram finds program: an absolute path as is, a bare name on
// ProcessPath. A relative path with a slash would depend on the kernel's
// working directory and is refused.
func resolveProgram(op, program string) (string, error) {
	switch {
	case filepath.IsAbs(program):
		return program, nil
	case strings.ContainsRune(program, '/'):
		return "", hostapi.Errorf(hostapi.CodeNotSupported, op, "%s: a relative program path is not supported; grant a bare name or an absolute path", program)
	}
	for _, d := range filepath.SplitList(hostapi.ProcessPath) {
		p := filepath.Join(d, program)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", hostapi.Errorf(hostapi.CodeNotFound, op, "%s is not on %s", program, hostapi.ProcessPath)
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

// exitStatus reads how a process ended: its exit code, or -1 and the
// signal that killed it.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}

// cappedBuffer keeps the first max bytes written and counts the rest, so
// that a program's output never grows the kernel's memory past max while
// the program is still drained (it never blocks on a full pipe).
type cappedBuffer struct {
	buf bytes.Buffer
	max int
	n   int64
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// procSlots counts a capsule's running process calls.
type procSlots struct {
	n chan struct{}
}

func (s *procSlots) acquire() bool {
	select {
	case s.n <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s *procSlots) release() { <-s.n }
