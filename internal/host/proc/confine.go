package proc

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/gate"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// Sandbox is how the host confines the processes capsules start
// (DESIGN §11, config.toml [sandbox]). The zero value enforces, with the
// default system set.
type Sandbox struct {
	// Off runs processes unconfined ([sandbox] mode = "off"); the
	// kernel warns about it at every start.
	Off bool
	// SystemRead is what every confined process may read besides its
	// grants; nil means sandbox.DefaultSystemRead.
	SystemRead []string
	// Devices are the device files it may use; nil means
	// sandbox.DefaultDevices.
	Devices []string
	// Protected are directories no confined process reaches whatever its
	// grants say: $ASTRID_HOME.
	Protected []string
	// ConfinedAuto is the operator's [approval] confined_shell = "auto":
	// capsules read it as the hostapi.ConfinedShellKey config value, "auto" only
	// while processes really run confined.
	ConfinedAuto bool
}

// ConfinedShell answers hostapi.ConfinedShellKey: "auto" only when the
// operator chose it and this machine confines processes.
func (sb Sandbox) ConfinedShell() string {
	if sb.ConfinedAuto && !sb.Off && sandbox.Need(sandbox.ABI()) == nil {
		return "auto"
	}
	return "ask"
}

// Confined is one process being started inside its capsule's grants: a
// private temporary directory (its TMPDIR and HOME) and the policy.
type Confined struct {
	cmd     *exec.Cmd
	policy  *sandbox.Policy // nil when the sandbox is off
	proxy   *egress.Proxy   // the process's way out, when its capsule holds a net grant
	summary string
	tmp     string
	release func()
}

// Confine prepares cmd to run inside g's grants (a capsule's, `*` its
// call's workspace) for principal: readable what fs_read resolves to plus
// the system set and extraRead (the program itself, an MCP server's
// install directory), writable fs_write plus a private temporary
// directory, no network unless g holds a net grant (then only through an
// egress proxy built from eo, checking g's net and net_connect grants),
// and never the Protected directories. It sets TMPDIR and HOME in
// cmd.Env. Start starts cmd; Done must follow Wait.
func (sb Sandbox) Confine(g *gate.Gate, eo egress.Options, log *slog.Logger, op string, cmd *exec.Cmd, principal string, extraRead ...string) (*Confined, error) {
	cf, err := PrivateTemp(op, cmd)
	if err != nil {
		return nil, err
	}
	if sb.Off {
		return cf, nil
	}
	read, write := g.FSDirs(principal)
	p := sandbox.Policy{
		Read:    append(append([]string(nil), or(sb.SystemRead, sandbox.DefaultSystemRead)...), read...),
		Write:   append(write, cf.tmp),
		Devices: or(sb.Devices, sandbox.DefaultDevices),
		Exclude: sb.Protected,
	}
	// A directory among extraRead is the program's own (an MCP server's
	// install directory, in Astrid's home): readable though the home is
	// protected, as sandbox.Policy.Own allows, never the home itself. A
	// file (the program) is read as any grant is.
	for _, x := range extraRead {
		if fi, err := os.Stat(x); err == nil && fi.IsDir() {
			p.Own = append(p.Own, x)
		} else if x != "" {
			p.Read = append(p.Read, x)
		}
	}
	if g.HasNetwork() {
		proxy, err := egressProxy(g, eo, log)
		if err != nil {
			cf.Done()
			return nil, hostapi.Errorf(hostapi.CodeUnavailable, op, "egress proxy: %v", err)
		}
		cf.proxy = proxy
		p.ConnectTCP = []uint16{proxy.Port()}
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			cmd.Env = setEnv(cmd.Env, k, proxy.URL())
		}
		cmd.Env = setEnv(setEnv(cmd.Env, "NO_PROXY", ""), "no_proxy", "")
	}
	cf.policy = &p
	cf.summary = summarize(read, write, g.HasNetwork())
	return cf, nil
}

// egressProxy starts the loopback proxy one confined process reaches the
// network through: each connection it asks for is checked against g's net
// (any port of a granted host: a process names its own port) or
// net_connect, and the SSRF guard.
func egressProxy(g *gate.Gate, eo egress.Options, log *slog.Logger) (*egress.Proxy, error) {
	eo.CheckHost = nil
	eo.CheckConn = func(host string, port int) error {
		if err := g.Net(host); err == nil {
			return nil
		}
		return g.NetConnect(host, port)
	}
	if eo.Logger == nil {
		eo.Logger = log
	}
	d, err := egress.NewDialer(eo)
	if err != nil {
		return nil, err
	}
	return egress.NewProxy(d, log)
}

// summarize says in a line what a confined process may reach, for the
// model reading a failure (hostapi.ProcessResult.Confined).
func summarize(read, write []string, net bool) string {
	list := func(dirs []string) string {
		if len(dirs) == 0 {
			return "nothing granted"
		}
		return strings.Join(dirs, ", ")
	}
	s := "reads " + list(read) + " and the system's programs and libraries; writes " + list(write) + " and $TMPDIR"
	if net {
		s += "; network only through Astrid's egress proxy (HTTP_PROXY), to the hosts its capsule's net grants name"
	} else {
		s += "; no network"
	}
	return s + "; Astrid's home is out of reach"
}

// Summary says what the process may reach, "" when it is unconfined.
func (cf *Confined) Summary() string { return cf.summary }

// PrivateTemp is an unconfined Confined for cmd: a private temporary
// directory made for it, as its TMPDIR and HOME (a process the person
// approved to run outside the sandbox).
func PrivateTemp(op string, cmd *exec.Cmd) (*Confined, error) {
	tmp, err := os.MkdirTemp("", "astrid-proc-")
	if err != nil {
		return nil, hostapi.Errorf(hostapi.CodeIO, op, "private temporary directory: %v", err)
	}
	cmd.Env = setEnv(setEnv(cmd.Env, "TMPDIR", tmp), "HOME", tmp)
	return &Confined{cmd: cmd, tmp: tmp}, nil
}

// Start starts the command, confined unless the sandbox is off.
func (cf *Confined) Start() error {
	if cf.policy == nil {
		return cf.cmd.Start()
	}
	release, err := sandbox.Start(cf.cmd, *cf.policy)
	if err != nil {
		return err
	}
	cf.release = release
	return nil
}

// Done releases what Start holds and removes the temporary directory;
// call it after Wait returned (or when Start failed).
func (cf *Confined) Done() {
	if cf.release != nil {
		cf.release()
	}
	if cf.proxy != nil {
		_ = cf.proxy.Close()
	}
	if cf.tmp != "" {
		_ = os.RemoveAll(cf.tmp)
	}
}

// Confined reports whether processes are started confined.
func (cf *Confined) Confined() bool { return cf.policy != nil }

func or(a, b []string) []string {
	if a == nil {
		return b
	}
	return a
}

// setEnv sets key in env, replacing an earlier value.
func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, fmt.Sprintf("%s=%s", key, value))
}
