package proc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The process tracker. Every child of a process call is a session leader
// (so its own process group too), tagged with the call's cancel key. When
// the call ends, is cancelled, times out or its capsule unloads, the
// tracker signals the child's group and then kills everything attributed
// to the run: the members of its session and process group, their
// descendants, and the orphans that escaped from it. The kernel process is
// a child subreaper (PR_SET_CHILD_SUBREAPER): a process that double-forks
// and setsid()s is re-parented to the kernel instead of init, where the
// tracker finds it: a child of the kernel it did not start itself, in a
// session of its own, started after the run began (docs/rationale/host.md).

const prSetChildSubreaper = 36

var subreaper struct {
	once sync.Once
	err  error
	sid  int // the kernel's own session: escaped orphans are not in it
}

// becomeSubreaper makes the kernel process the child subreaper of its
// descendants, once.
func becomeSubreaper(log *slog.Logger) error {
	subreaper.once.Do(func() {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
			subreaper.err = fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", e)
			log.Warn("process tracker: orphans that escape a process call cannot be found", "err", subreaper.err)
		}
		sid, err := getsid(0)
		if err != nil {
			subreaper.err = errors.Join(subreaper.err, err)
		}
		subreaper.sid = sid
	})
	return subreaper.err
}

func getsid(pid int) (int, error) {
	sid, _, e := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if e != 0 {
		return 0, fmt.Errorf("getsid: %w", e)
	}
	return int(sid), nil
}

// spawning is held while a child starts and is recorded in started, and
// read-held while a run classifies processes: a child between fork and
// record would otherwise look like an escaped orphan to another run.
var spawning sync.RWMutex

// started holds the pids the tracker started and has not yet reaped, so
// that a child of another run is never taken for an escaped orphan.
var started struct {
	mu   sync.Mutex
	pids map[int]bool
}

func trackPid(pid int, on bool) {
	started.mu.Lock()
	defer started.mu.Unlock()
	if started.pids == nil {
		started.pids = map[int]bool{}
	}
	if on {
		started.pids[pid] = true
	} else {
		delete(started.pids, pid)
	}
}

func isStarted(pid int) bool {
	started.mu.Lock()
	defer started.mu.Unlock()
	return started.pids[pid]
}

// childProcAttr makes the child a session (and group) leader and kills it
// when the kernel dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// run is one tracked child.
type run struct {
	cmd   *exec.Cmd
	pid   int
	start uint64 // its start time, in clock ticks since boot
	key   string // the cancel key of the call it serves
	log   *slog.Logger
	done  chan error
	stop  chan struct{} // closed when the capsule unloads
	once  sync.Once
	// every is how often its process count is checked (monitorEvery
	// when zero): a background process lives long, so it is checked
	// less often than a call's run.
	every time.Duration
}

// startTracked starts cmd, confined by cf, as a tracked child of the call
// keyed key; cf is done once the child has been waited for (or at once
// when it did not start).
func startTracked(cmd *exec.Cmd, cf *Confined, key, capsule string, log *slog.Logger) (*run, error) {
	_ = becomeSubreaper(log)
	spawning.Lock()
	if err := cf.Start(); err != nil {
		spawning.Unlock()
		cf.Done()
		return nil, err
	}
	trackPid(cmd.Process.Pid, true)
	spawning.Unlock()
	r := &run{cmd: cmd, pid: cmd.Process.Pid, key: key, log: log.With("pid", cmd.Process.Pid, "cancel_key", key, "capsule", capsule), done: make(chan error, 1), stop: make(chan struct{})}
	if st, ok := readStat(r.pid); ok {
		r.start = st.start
	}
	go func() {
		err := cmd.Wait()
		cf.Done()
		r.done <- err
	}()
	return r, nil
}

// kill ends the run at once (the capsule unloads).
func (r *run) kill() { r.once.Do(func() { close(r.stop) }) }

// ended says why supervise returned.
type ended struct {
	ctxErr    error // the context ended first
	overLimit bool  // the run had more than its process limit
	unloaded  bool  // the capsule unloaded
}

// monitorEvery is how often a run's process count is checked.
const monitorEvery = 50 * time.Millisecond

// supervise waits for the run's child. If ctx ends first, the child's
// group gets SIGINT and, grace later, everything of the run gets SIGKILL;
// an unload kills at once. Whatever ended it, nothing of the run is left
// when it returns.
func (r *run) supervise(ctx context.Context, grace time.Duration, limit int) ended {
	defer trackPid(r.pid, false)
	every := r.every
	if every <= 0 {
		every = monitorEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var e ended
	for {
		select {
		case <-r.done:
			r.killAll()
			return e
		case <-r.stop:
			e.unloaded = true
			r.killAll()
			<-r.done
			r.killAll()
			return e
		case <-ctx.Done():
			e.ctxErr = ctx.Err()
			r.log.Info("process call ended: SIGINT to the process group", "cause", context.Cause(ctx))
			r.signal(syscall.SIGINT)
			t := time.NewTimer(grace)
			exited := false
			select {
			case <-r.done:
				exited = true
			case <-t.C:
				r.log.Info("process still running after the grace: SIGKILL")
			case <-r.stop:
			}
			t.Stop()
			r.killAll()
			if !exited {
				<-r.done
				r.killAll()
			}
			return e
		case <-tick.C:
			if n := len(r.members()); n > limit {
				r.log.Warn("process call over its process limit: SIGKILL", "processes", n, "limit", limit)
				e.overLimit = true
				r.killAll()
				<-r.done
				r.killAll()
				return e
			}
		}
	}
}

// signal sends sig to the child's process group and to every process
// attributed to the run.
func (r *run) signal(sig syscall.Signal) {
	_ = syscall.Kill(-r.pid, sig)
	for _, p := range r.members() {
		_ = syscall.Kill(p.pid, sig)
	}
}

// killAll SIGKILLs everything attributed to the run until nothing is left
// (a process forking while it is killed may need a few rounds) and reaps
// the escaped orphans re-parented to the kernel.
func (r *run) killAll() {
	self := os.Getpid()
	for round := 0; round < 200; round++ {
		alive, reaped := 0, 0
		for _, p := range r.members() {
			if p.state == 'Z' {
				// A zombie is dead; an escaped orphan's is the
				// kernel's to reap (the child itself is Wait's).
				if p.ppid == self && !isStarted(p.pid) {
					var ws syscall.WaitStatus
					if n, _ := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil); n == p.pid {
						reaped++
					}
				}
				continue
			}
			alive++
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
		if alive == 0 && reaped == 0 && round > 0 {
			return
		}
		// Killed parents re-parent their children to the kernel, and
		// dying takes a moment: look again.
		time.Sleep(2 * time.Millisecond)
	}
	r.log.Error("process tracker: processes of a run remain after 200 rounds of SIGKILL")
}

// procStat is what the tracker reads of one process.
type procStat struct {
	pid, ppid, pgid, sid int
	state                byte
	start                uint64
}

// members lists the processes attributed to the run: its child (until
// reaped), every process of its session or group, the orphans that
// escaped it (children of the kernel it did not start, in a session of
// their own, started since the run began), and their descendants.
func (r *run) members() []procStat {
	spawning.RLock()
	defer spawning.RUnlock()
	self := os.Getpid()
	all := readAllStats()
	in := map[int]bool{}
	for _, p := range all {
		switch {
		case p.pid == self:
		case p.sid == r.pid || p.pgid == r.pid:
			in[p.pid] = true
		case p.ppid == self && !isStarted(p.pid) && p.sid != subreaper.sid && p.start >= r.start:
			in[p.pid] = true
		}
	}
	for grew := true; grew; {
		grew = false
		for _, p := range all {
			if !in[p.pid] && in[p.ppid] && p.pid != self {
				in[p.pid], grew = true, true
			}
		}
	}
	out := make([]procStat, 0, len(in))
	for _, p := range all {
		if in[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

func readAllStats() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// readStat parses /proc/<pid>/stat (proc(5)); the command name may hold
// spaces and parentheses, so fields are read after its last ')'.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	st := procStat{pid: pid, state: f[0][0]}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgid, _ = strconv.Atoi(f[2])
	st.sid, _ = strconv.Atoi(f[3])
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	return st, true
}
