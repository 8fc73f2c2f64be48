package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The fault harness (issue 31 item 4, docs/nats.md "Fault harness"): three
// `astrid daemon` processes, each in its own network namespace, joined into
// one embedded NATS cluster over a bridge in a fourth ("hub") namespace.
// Each host's link to the bridge is a pair of TAP devices whose frames this
// test process relays, so the test can delay them (latency), drop them all
// (a silent partition) or take the hub's end down (link down); the kernels
// this runs on have no sch_netem (docs/rationale/nats.md "Why does the fault
// harness relay its links itself instead of using tc netem?").

// faultDirEnv, set in a daemon's environment to a directory, adds the
// capsule fault-<host> to its built-ins: its tool work_<host> records every
// run in <dir>/<host>.runs. faultHostEnv names the host.
const (
	faultDirEnv  = "ASTRID_TEST_FAULT_DIR"
	faultHostEnv = "ASTRID_TEST_FAULT_HOST"
	// faultNSPrefix starts every namespace the harness makes; the rest
	// of the name is the making process's pid, a random tag and a role,
	// so a later run can tell and remove what a killed run left.
	faultNSPrefix = "astrid-fault-"
	faultSubnet   = "10.213.0."
	faultNATSPort = "6222"
)

func init() {
	if dir := os.Getenv(faultDirEnv); dir != "" {
		testBuiltins = append(testBuiltins, faultToolBuiltin(dir, os.Getenv(faultHostEnv)))
	}
}

// faultTool is the tool host serves: work_<host, lower case>.
func faultTool(host string) string { return "work_" + strings.ToLower(host) }

// faultArgs are work_<host>'s arguments: the run's id, and how long to hold
// before answering (0: at once) unless cancelled first.
type faultArgs struct {
	ID     string `json:"id"`
	HoldMS int    `json:"hold_ms"`
}

// faultToolBuiltin is capsule fault-<host> with tool work_<host>. Each run
// appends "start <id>" to <dir>/<host>.runs, then "end <id>" when it
// answers, or "cancelled <id>" when its call is cancelled first: the file
// is how the test sees, on that host, what ran there and how often.
func faultToolBuiltin(dir, host string) kernel.Builtin {
	lower := strings.ToLower(host)
	tool := faultTool(host)
	manifest := fmt.Sprintf(`
[package]
name = "fault-%[1]s"
version = "0.1.0"
[subscribe]
"tool.v1.execute.%[2]s" = { wit = "opaque", handler = "tool_execute_%[2]s" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
[publish]
"tool.v1.execute.%[2]s.result" = "opaque"
"tool.v1.response.describe.fault-%[1]s" = "opaque"
`, lower, tool)
	runs := filepath.Join(dir, host+".runs")
	record := func(event, id string) error {
		f, err := os.OpenFile(runs, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "%s %s\n", event, id)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return kernel.Builtin{Manifest: []byte(manifest), New: func() *sdk.Capsule {
		c := sdk.New("test fixture: a tool that records its runs")
		sdk.Tool(c, tool, "records each run in a file; holds hold_ms unless cancelled", func(call *sdk.Call, a faultArgs) (string, error) {
			if err := record("start", a.ID); err != nil {
				return "", err
			}
			if a.HoldMS > 0 {
				hold := time.NewTimer(time.Duration(a.HoldMS) * time.Millisecond)
				defer hold.Stop()
				select {
				case <-call.Context().Done():
					if err := record("cancelled", a.ID); err != nil {
						return "", err
					}
					return "", errors.New("cancelled")
				case <-hold.C:
				}
			}
			if err := record("end", a.ID); err != nil {
				return "", err
			}
			return "done " + a.ID + " on " + host, nil
		})
		return c
	}}
}

// faultNet is the harness's network: the hub namespace with its bridge,
// and one namespace per host linked to it.
type faultNet struct {
	prefix string // namespace names: prefix + "-" + role
	hub    string
	links  map[string]*faultLink // by host id
}

// needNetns skips t unless this process may make network namespaces (root,
// with `ip netns` working); in CI, where it must run, a root process that
// cannot fails instead.
func needNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the netns fault harness needs root (ip netns add, veth/TAP devices, a bridge); run it as root, as CI does")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skipf("the netns fault harness needs iproute2's ip (ip netns): %v", err)
	}
	probe := faultNSPrefix + "probe-" + strconv.Itoa(os.Getpid())
	out, err := exec.Command(ip, "netns", "add", probe).CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("the netns fault harness needs `ip netns add`, which failed here: %v: %s", err, strings.TrimSpace(string(out)))
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal(msg + " (CI runs as root and must run it)")
		}
		t.Skip(msg)
	}
	_ = exec.Command(ip, "netns", "del", probe).Run()
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Fatalf("the netns fault harness relays its links through TAP devices: %v", err)
	}
	return ip
}

// runIP runs `ip args...`, failing t with its output.
func runIP(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// removeStaleFaultNamespaces deletes the namespaces (and ends the
// processes in them) that an earlier run of the harness left, its process
// killed before its cleanups ran: those whose making process is gone.
func removeStaleFaultNamespaces(t *testing.T) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], faultNSPrefix) {
			continue
		}
		name := f[0]
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(name, faultNSPrefix), "-", 2)[0])
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue // not ours to judge, ours, or its run still going
		}
		t.Logf("removing namespace %s left by an earlier run", name)
		deleteNamespace(name)
	}
}

// deleteNamespace kills every process in namespace name (the harness's
// daemons: only the harness starts processes there), then deletes it.
func deleteNamespace(name string) {
	if out, err := exec.Command("ip", "netns", "pids", name).Output(); err == nil {
		for _, p := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
}

// newFaultNet makes the hub namespace with its bridge and, for each host,
// a namespace whose eth0 (faultSubnet + its index + 1) is linked to the
// bridge through a relayed TAP pair. Everything is removed in t.Cleanup.
func newFaultNet(t *testing.T, hosts ...string) *faultNet {
	t.Helper()
	needNetns(t)
	removeStaleFaultNamespaces(t)
	var tag [3]byte
	_, _ = rand.Read(tag[:])
	n := &faultNet{prefix: fmt.Sprintf("%s%d-%s", faultNSPrefix, os.Getpid(), hex.EncodeToString(tag[:])), links: map[string]*faultLink{}}
	n.hub = n.prefix + "-hub"
	var made []string
	t.Cleanup(func() {
		for _, l := range n.links {
			l.close()
		}
		for _, ns := range slices.Backward(made) {
			deleteNamespace(ns)
		}
	})
	runIP(t, "netns", "add", n.hub)
	made = append(made, n.hub)
	runIP(t, "-n", n.hub, "link", "add", "br0", "type", "bridge")
	runIP(t, "-n", n.hub, "link", "set", "br0", "up")
	for i, id := range hosts {
		ns := n.ns(id)
		runIP(t, "netns", "add", ns)
		made = append(made, ns)
		runIP(t, "-n", ns, "link", "set", "lo", "up")
		// Made in this namespace under names unique to this run, then
		// moved: the test keeps each TAP's file, which the move does not
		// close, and the devices go when the files close.
		tmp := fmt.Sprintf("aft%s%d", hex.EncodeToString(tag[:]), i)
		hostTap, err := openTap(tmp + "h")
		if err != nil {
			t.Fatalf("TAP device: %v", err)
		}
		hubTap, err := openTap(tmp + "b")
		if err != nil {
			hostTap.Close()
			t.Fatalf("TAP device: %v", err)
		}
		l := &faultLink{host: id, hubNS: n.hub, hubIf: "v-" + id, hostTap: hostTap, hubTap: hubTap}
		n.links[id] = l
		runIP(t, "link", "set", tmp+"h", "netns", ns, "name", "eth0")
		runIP(t, "link", "set", tmp+"b", "netns", n.hub, "name", l.hubIf)
		runIP(t, "-n", n.hub, "link", "set", l.hubIf, "master", "br0", "up")
		runIP(t, "-n", ns, "addr", "add", n.addr(i)+"/24", "dev", "eth0")
		runIP(t, "-n", ns, "link", "set", "eth0", "up")
		l.start()
	}
	return n
}

func (n *faultNet) ns(host string) string { return n.prefix + "-" + strings.ToLower(host) }

func (n *faultNet) addr(i int) string { return faultSubnet + strconv.Itoa(i+1) }

// openTap opens a new TAP device name (frames without a packet header);
// it lasts as long as the file.
func openTap(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// faultLink is one host's link to the bridge: the frames between its
// namespace's eth0 (hostTap) and the hub's port (hubTap), relayed by this
// process in both directions, each delayed by delay, or all dropped.
type faultLink struct {
	host, hubNS, hubIf string
	hostTap, hubTap    *os.File
	delay              atomic.Int64 // nanoseconds, each way
	drop               atomic.Bool
	wg                 sync.WaitGroup
	closeOnce          sync.Once
}

// setDelay delays every frame by d, each way, from now on (the frames
// already held keep their time: order is kept).
func (l *faultLink) setDelay(d time.Duration) { l.delay.Store(int64(d)) }

// setDrop drops every frame, each way (a partition no socket notices), or
// carries them again.
func (l *faultLink) setDrop(drop bool) { l.drop.Store(drop) }

// setHubSide takes the hub's end of the link down or up (ip link set).
func (l *faultLink) setHubSide(t *testing.T, up bool) {
	t.Helper()
	state := map[bool]string{true: "up", false: "down"}[up]
	runIP(t, "-n", l.hubNS, "link", "set", l.hubIf, state)
}

func (l *faultLink) start() {
	l.wg.Add(2)
	go l.pump(l.hostTap, l.hubTap)
	go l.pump(l.hubTap, l.hostTap)
}

func (l *faultLink) close() {
	l.closeOnce.Do(func() {
		l.hostTap.Close()
		l.hubTap.Close()
		l.wg.Wait()
	})
}

// pump relays from's frames to to until from is closed. A writer goroutine
// holds each frame until its time; a frame that finds the queue full is
// lost, as on a congested link.
func (l *faultLink) pump(from, to *os.File) {
	defer l.wg.Done()
	type frame struct {
		at time.Time
		b  []byte
	}
	queue := make(chan frame, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range queue {
			if wait := time.Until(f.at); wait > 0 {
				time.Sleep(wait)
			}
			_, _ = to.Write(f.b) // a frame the other side cannot take is lost
		}
	}()
	buf := make([]byte, 65536)
	for {
		n, err := from.Read(buf)
		if err != nil {
			close(queue)
			<-done
			return
		}
		if l.drop.Load() {
			continue
		}
		select {
		case queue <- frame{time.Now().Add(time.Duration(l.delay.Load())), slices.Clone(buf[:n])}:
		default:
		}
	}
}

// faultHost is one daemon of the harness, in its own namespace.
type faultHost struct {
	id, ns, addr, home, ws string
	args                   []string // the daemon's arguments
	env                    []string
	mu                     sync.Mutex
	cmd                    *exec.Cmd
	exited                 chan struct{}
	logs                   []*testutil.SyncBuffer // one per start
}

// faultCluster is the harness: hosts[0] (hostA) is where calls are made;
// the others serve tool work_<host>, each its own.
type faultCluster struct {
	net    *faultNet
	hosts  map[string]*faultHost
	order  []string
	runDir string
	caller *faultHost
	seen   *resultWatch
}

// newFaultCluster starts the daemons of hosts (the first one the caller)
// in their namespaces, each routing to the others, and waits until every
// host hears the others and the caller hears each tool.
func newFaultCluster(t *testing.T, hosts ...string) *faultCluster {
	t.Helper()
	n := newFaultNet(t, hosts...)
	secret := filepath.Join(t.TempDir(), "cluster.secret")
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := os.WriteFile(secret, []byte(hex.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &faultCluster{net: n, hosts: map[string]*faultHost{}, order: hosts, runDir: t.TempDir()}
	for i, id := range hosts {
		var routes []string
		for j := range hosts {
			if j != i {
				routes = append(routes, "nats-route://"+n.addr(j)+":"+faultNATSPort)
			}
		}
		h := &faultHost{id: id, ns: n.ns(id), addr: n.addr(i), home: t.TempDir(), ws: t.TempDir()}
		h.args = []string{"daemon", "--workspace", h.ws, "--nats-host-id", id,
			"--nats-listen", h.addr + ":" + faultNATSPort, "--nats-routes", strings.Join(routes, ","),
			"--nats-cluster-secret-file", secret}
		if i > 0 {
			h.env = []string{faultDirEnv + "=" + c.runDir, faultHostEnv + "=" + id}
		}
		c.hosts[id] = h
	}
	c.caller = c.hosts[hosts[0]]
	t.Cleanup(func() {
		if t.Failed() {
			for host, lines := range c.runs(t) {
				t.Logf("%s recorded:\n%s", host, strings.Join(lines, "\n"))
			}
		}
	})
	for _, id := range hosts {
		c.hosts[id].start(t)
	}
	for _, id := range hosts {
		c.hosts[id].waitReady(t)
	}
	c.waitWhole(t)
	c.seen = watchResults(t, c.caller.home)
	return c
}

// start runs the host's daemon in its namespace (`ip netns exec`, which
// execs the daemon in place: the process is the daemon). t.Cleanup kills
// it, and shows its logs if t failed.
func (h *faultHost) start(t *testing.T) {
	t.Helper()
	cmd := astridProcess(h.home, h.args...)
	cmd.Env = append(cmd.Env, h.env...)
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Path, cmd.Args = ip, append([]string{"ip", "netns", "exec", h.ns}, cmd.Args...)
	logs := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	h.mu.Lock()
	h.cmd, h.exited = cmd, exited
	h.logs = append(h.logs, logs)
	run := len(h.logs)
	h.mu.Unlock()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("daemon %s (start %d):\n%s", h.id, run, logs.String())
		}
	})
}

// waitReady waits until the daemon's socket takes a client (a pathname
// socket: the test, in the root namespace, reaches it).
func (h *faultHost) waitReady(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	exited, logs := h.exited, h.logs[len(h.logs)-1]
	h.mu.Unlock()
	testutil.WaitFor(t, daemonPatience, "daemon "+h.id+" to accept a client", func() bool {
		select {
		case <-exited:
			t.Fatalf("daemon %s exited:\n%s", h.id, logs.String())
		default:
		}
		cl, err := dialDaemon(context.Background(), h.home)
		if err == nil {
			cl.Close()
		}
		return err == nil
	})
}

// kill9 sends SIGKILL to the host's daemon and waits until it is gone.
func (h *faultHost) kill9(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	cmd, exited := h.cmd, h.exited
	h.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitForRecv(t, daemonPatience, "daemon "+h.id+" to die of SIGKILL", exited)
}

// heard is what the daemon of from hears: host id -> the capsules it
// serves (nil when its socket does not answer the status query).
func heard(from *faultHost) map[string][]string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := dialDaemon(ctx, from.home)
	if err != nil {
		return nil
	}
	defer cl.Close()
	var st daemon.Status
	if err := cl.Query(uplinkwire.QueryStatus, &st); err != nil || st.NATS == nil {
		return nil
	}
	out := map[string][]string{}
	for _, h := range st.NATS.Hosts {
		out[h.ID] = h.Capsules
	}
	return out
}

// waitWhole waits until every host hears every other, and the caller hears
// each tool host serving its capsule: the cluster is whole (after a fault,
// it healed). It returns how long that took.
func (c *faultCluster) waitWhole(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	testutil.WaitForValue(t, daemonPatience, "every host to hear the others", func() (string, bool) {
		var missing []string
		for _, from := range c.order {
			hosts := heard(c.hosts[from])
			for _, id := range c.order {
				capsule := "fault-" + strings.ToLower(id)
				switch _, ok := hosts[id]; {
				case id == from:
				case !ok:
					missing = append(missing, from+" does not hear "+id)
				case from == c.caller.id && !slices.Contains(hosts[id], capsule):
					missing = append(missing, from+" does not hear "+id+" serving "+capsule)
				}
			}
		}
		return strings.Join(missing, "\n"), len(missing) == 0
	})
	return time.Since(start)
}

// faultCall is the outcome of one tool call made on the caller's host.
type faultCall struct {
	id   string
	res  ipc.ToolCallResult
	err  error
	took time.Duration
}

// call makes a call of work_<host> with id through the caller's daemon,
// with timeout as its deadline; ctx may cancel it.
func (c *faultCluster) call(ctx context.Context, host, id string, hold time.Duration, timeout time.Duration) faultCall {
	start := time.Now()
	out := faultCall{id: id}
	cl, err := dialDaemon(ctx, c.caller.home)
	if err != nil {
		out.err, out.took = err, time.Since(start)
		return out
	}
	defer cl.Close()
	args, _ := json.Marshal(faultArgs{ID: id, HoldMS: int(hold / time.Millisecond)})
	out.res, out.err = toolclient.CallToolWithID(ctx, cl, cl.Principal(), id, faultTool(host), args, timeout)
	out.took = time.Since(start)
	return out
}

// callAsync is call on its own goroutine; the channel delivers its outcome.
func (c *faultCluster) callAsync(ctx context.Context, host, id string, hold, timeout time.Duration) <-chan faultCall {
	ch := make(chan faultCall, 1)
	go func() { ch <- c.call(ctx, host, id, hold, timeout) }()
	return ch
}

// mustSucceed fails t unless call was answered by host's tool.
func mustSucceed(t *testing.T, call faultCall, host string) {
	t.Helper()
	if call.err != nil || call.res.IsError || call.res.Content != "done "+call.id+" on "+host {
		t.Fatalf("call %s of %s: %+v, %v after %s; want it done on %s", call.id, faultTool(host), call.res, call.err, call.took, host)
	}
}

// answeredNaming fails t unless call was answered before its deadline with
// the tool's result or a failure naming host: not the caller giving up.
func answeredNaming(t *testing.T, call faultCall, host string) {
	t.Helper()
	switch {
	case call.err != nil:
		t.Fatalf("call %s to %s: no answer within its deadline (%s): %v", call.id, host, call.took, call.err)
	case call.res.IsError && !strings.Contains(call.res.Content, host):
		t.Fatalf("call %s to %s failed without naming the host after %s: %q", call.id, host, call.took, call.res.Content)
	case !call.res.IsError && call.res.Content != "done "+call.id+" on "+host:
		t.Fatalf("call %s to %s answered %q", call.id, host, call.res.Content)
	}
}

// runs reads what each tool host recorded: host -> lines ("start <id>", ...).
func (c *faultCluster) runs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, id := range c.order[1:] {
		b, err := os.ReadFile(filepath.Join(c.runDir, id+".runs"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			out[id] = append(out[id], sc.Text())
		}
	}
	return out
}

// recorded reports whether host recorded event for id.
func (c *faultCluster) recorded(t *testing.T, host, event, id string) bool {
	t.Helper()
	return slices.Contains(c.runs(t)[host], event+" "+id)
}

// startedOn counts, per host, the runs of id.
func (c *faultCluster) startedOn(t *testing.T, id string) map[string]int {
	t.Helper()
	n := map[string]int{}
	for host, lines := range c.runs(t) {
		for _, l := range lines {
			if l == "start "+id {
				n[host]++
			}
		}
	}
	return n
}

// ranOnceOn fails t unless id ran exactly once, on host.
func (c *faultCluster) ranOnceOn(t *testing.T, id, host string) {
	t.Helper()
	if n := c.startedOn(t, id); len(n) != 1 || n[host] != 1 {
		t.Fatalf("call %s ran %v times by host, want once on %s", id, n, host)
	}
}

// nothingRanTwice fails t if any id started more than once across hosts.
func (c *faultCluster) nothingRanTwice(t *testing.T) {
	t.Helper()
	count := map[string][]string{}
	for host, lines := range c.runs(t) {
		for _, l := range lines {
			if id, ok := strings.CutPrefix(l, "start "); ok {
				count[id] = append(count[id], host)
			}
		}
	}
	for id, hosts := range count {
		if len(hosts) > 1 {
			t.Errorf("call %s ran %d times: on %v", id, len(hosts), hosts)
		}
	}
}

// resultWatch counts every consolidated tool result the caller's daemon
// delivers to its principal, by call id: each call must be answered once.
type resultWatch struct {
	mu      sync.Mutex
	answers map[string][]ipc.ToolCallResult
}

func watchResults(t *testing.T, home string) *resultWatch {
	t.Helper()
	w := &resultWatch{answers: map[string][]ipc.ToolCallResult{}}
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := dialDaemon(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cl.Subscribe(dispatch.Caller{Capsule: toolclient.ClientID, Principal: cl.Principal()}, ipc.ToolExecuteResultTopic, true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
	go func() {
		defer close(done)
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			var res ipc.ToolExecuteResult
			if res.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)) != nil {
				continue
			}
			w.mu.Lock()
			w.answers[res.CallID] = append(w.answers[res.CallID], res.Result)
			w.mu.Unlock()
		}
	}()
	return w
}

// count is how many answers call id got.
func (w *resultWatch) count(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.answers[id])
}

// answeredTwice fails t for each call answered more than once.
func (w *resultWatch) answeredTwice(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, a := range w.answers {
		if len(a) > 1 {
			t.Errorf("call %s answered %d times: %+v", id, len(a), a)
		}
	}
}
