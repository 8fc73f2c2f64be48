package proc

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

// MaxRunsPerCapsule caps a capsule's concurrently running process
// calls; maxDescendants caps the processes one run may have at once (its
// session and what escaped from it), the fork-bomb guard.
const (
	MaxRunsPerCapsule = 8
	maxDescendants    = hostapi.MaxProcessDescendants
)

// refusedEnvKeys change how a program is loaded or how a shell starts, so a
// caller could run code the operator never granted through them.
var refusedEnvKeys = map[string]bool{
	"BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true, "PS4": true,
	"PROMPT_COMMAND": true, "IFS": true, "GCONV_PATH": true, "HOSTALIASES": true,
	"LOCALDOMAIN": true, "RES_OPTIONS": true, "NLSPATH": true, "GLIBC_TUNABLES": true,
}

var refusedEnvPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "MALLOC_"}

// Run runs cmd, confined by cf and prepared by Command, as a process call's
// child to its end, req giving its stdin and timeout: at most
// MaxRunsPerCapsule at once per instance, under ctx (the call's
// context), with the call's cancel key in its log. ended is the call's own
// error for op once ctx has ended (cancelled, its deadline passed), nil
// while it runs. Nothing of the run outlives it, its context or the
// instance's Close.
func (in *Instance) Run(ctx context.Context, op string, req hostapi.ProcessRequest, cmd *exec.Cmd, cf *Confined, key string, ended func(op string) error) (hostapi.ProcessResult, error) {
	if !in.slots.acquire() {
		cf.Done()
		return hostapi.ProcessResult{}, hostapi.Errorf(hostapi.CodeRateLimited, op, "the capsule already runs %d processes", MaxRunsPerCapsule)
	}
	defer in.slots.release()

	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	cmd.Stdin = bytes.NewReader(req.Stdin)
	stdout, stderr := &cappedBuffer{max: hostapi.MaxProcessOutput}, &cappedBuffer{max: hostapi.MaxProcessOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	run, err := startTracked(cmd, cf, key, in.id, in.log)
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeNotSupported {
			return hostapi.ProcessResult{}, err
		}
		return hostapi.ProcessResult{}, hostapi.Errorf(hostapi.CodeIO, op, "start %s: %v", req.Program, err)
	}
	defer in.addRun(run)()
	e := run.supervise(ctx, hostapi.ProcessGrace, maxDescendants)
	res := hostapi.ProcessResult{
		Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes(),
		StdoutBytes: stdout.n, StderrBytes: stderr.n,
		StdoutTruncated: stdout.n > int64(stdout.max), StderrTruncated: stderr.n > int64(stderr.max),
		Confined: cf.Summary(),
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	switch {
	case e.unloaded:
		res.Cancelled = true
		return res, hostapi.Errorf(hostapi.CodeCancelled, op, "%s was killed: the capsule unloaded", req.Program)
	case e.overLimit:
		return res, hostapi.Errorf(hostapi.CodeTooLarge, op, "%s had more than %d processes at once and was killed", req.Program, maxDescendants)
	case e.ctxErr != nil:
		if lerr := ended(op); lerr != nil {
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

// Command is the command of a checked request (CheckRequest): program, at
// path, with args and the clean environment env, run in dir (a directory
// the caller opened through its grant and closes once the command
// started), leading its own session. Confine it before Run or Spawn.
func Command(path string, args, env []string, dir *os.File) *exec.Cmd {
	cmd := exec.Command(path, args...)
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
	return cmd
}

// CheckRequest refuses what no grant can make safe and returns the child's
// environment: a clean one plus req.Env.
func CheckRequest(op string, req hostapi.ProcessRequest) ([]string, error) {
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

// ResolveProgram finds program: an absolute path as is, a bare name on
// ProcessPath. A relative path with a slash would depend on the kernel's
// working directory and is refused.
func ResolveProgram(op, program string) (string, error) {
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
