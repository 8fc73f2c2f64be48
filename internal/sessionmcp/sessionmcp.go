package sessionmcp

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/manifest"
)

// Server is one MCP server a session asks for: a stdio one (Command, Args,
// Env) or an HTTP one (URL, Headers).
type Server struct {
	Name    string   `json:"name"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []Var    `json:"env,omitempty"`
	URL     string   `json:"url,omitempty"`
	Headers []Var    `json:"headers,omitempty"`
}

// Var is one environment variable or HTTP header.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Rules are the operator's word on what a session may bring.
type Rules struct {
	// Commands lists the commands a session's stdio server may run: bare
	// names found on PATH, or absolute paths (config [mcp]
	// session_commands). Empty: no stdio server.
	Commands []string
	// Read lists directories such a server may read besides the
	// workspace (its own code: a node_modules, a virtualenv).
	Read []string
	// LocalAllowed says the operator allows some local endpoints (config
	// [egress] allow): an HTTP server's literal local address is then
	// left to the egress guard, which honours that list on every
	// connection; otherwise it is refused here, by name.
	LocalAllowed bool
}

// Limits on the list; each error names the one passed.
const (
	MaxServers     = 16
	MaxNameBytes   = 32
	MaxArgs        = 64
	MaxArgBytes    = 4096
	MaxVars        = 64
	MaxVarBytes    = 8192
	maxVarNameByte = 128
)

// refusedEnv are variables a session may not set: astrid sets them itself,
// or they load code into the process (before its confinement, for the
// dynamic loader) other than the command the operator allowed.
var refusedEnv = []string{"PATH", "HOME", "TMPDIR", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "BASH_ENV", "ENV", "GCONV_PATH", "JAVA_TOOL_OPTIONS"}

// refusedEnvPrefixes: the dynamic loaders' variables.
var refusedEnvPrefixes = []string{"LD_", "DYLD_"}

// ErrNotAllowed is wrapped by the error for a command the rules do not list.
var ErrNotAllowed = errors.New("not allowed by the operator's rules")

// Checked is a server as it will run.
type Checked struct {
	Server
	// Path is a stdio server's command as resolved (absolute).
	Path string
	// Host is an HTTP server's host, its net grant.
	Host string
}

// Check checks servers against rules and resolves their commands. The
// error names the server and what is wrong, for the editor.
func Check(servers []Server, rules Rules) ([]Checked, error) {
	if len(servers) > MaxServers {
		return nil, fmt.Errorf("%d MCP servers: a session may bring at most %d", len(servers), MaxServers)
	}
	out := make([]Checked, 0, len(servers))
	seen := map[string]bool{}
	for _, s := range servers {
		if err := checkName(s.Name); err != nil {
			return nil, err
		}
		key := strings.ToLower(s.Name)
		if seen[key] {
			return nil, fmt.Errorf("MCP server %q is listed twice", s.Name)
		}
		seen[key] = true
		c, err := checkServer(s, rules)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: %w", s.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// checkName: the name prefixes the server's tools (ipc.ValidateToolName).
func checkName(name string) error {
	if name == "" || len(name) > MaxNameBytes {
		return fmt.Errorf("MCP server name %.40q is %d bytes: a name is 1 to %d ASCII letters, digits, '-' or '_' (it prefixes its tools' names)", name, len(name), MaxNameBytes)
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return fmt.Errorf("MCP server name %q has %q: a name is 1 to %d ASCII letters, digits, '-' or '_' (it prefixes its tools' names)", name, b, MaxNameBytes)
		}
	}
	return nil
}

func checkServer(s Server, rules Rules) (Checked, error) {
	switch {
	case s.Command != "" && s.URL != "":
		return Checked{}, errors.New("names both a command and a URL")
	case s.URL != "":
		return checkHTTP(s, rules.LocalAllowed)
	case s.Command == "":
		return Checked{}, errors.New("names neither a command nor a URL")
	}
	path, err := resolve(s.Command, rules.Commands)
	if err != nil {
		return Checked{}, err
	}
	if len(s.Args) > MaxArgs {
		return Checked{}, fmt.Errorf("%d arguments: at most %d", len(s.Args), MaxArgs)
	}
	for i, a := range s.Args {
		if len(a) > MaxArgBytes || strings.ContainsRune(a, 0) {
			return Checked{}, fmt.Errorf("argument %d: at most %d bytes, no NUL", i, MaxArgBytes)
		}
	}
	if len(s.Env) > MaxVars {
		return Checked{}, fmt.Errorf("%d environment variables: at most %d", len(s.Env), MaxVars)
	}
	for _, v := range s.Env {
		if err := checkEnv(v); err != nil {
			return Checked{}, err
		}
	}
	return Checked{Server: s, Path: path}, nil
}

// resolve finds command among the allowed ones: a bare name on PATH, an
// absolute path as written; never a path relative to the workspace (a
// file there named like the command is not the command the operator
// allowed).
func resolve(command string, allowed []string) (string, error) {
	if !slices.Contains(allowed, command) {
		if len(allowed) == 0 {
			return "", fmt.Errorf("command %q: %w: no command is (config.toml [mcp] session_commands lists the commands an editor's servers may run, e.g. [\"npx\", \"uvx\"])", command, ErrNotAllowed)
		}
		return "", fmt.Errorf("command %q: %w: config.toml [mcp] session_commands lists %q", command, ErrNotAllowed, allowed)
	}
	if filepath.IsAbs(command) {
		fi, err := os.Stat(command)
		if err != nil {
			return "", fmt.Errorf("command %q: %w", command, err)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("command %q is not a regular file", command)
		}
		return filepath.Clean(command), nil
	}
	if strings.ContainsRune(command, '/') {
		return "", fmt.Errorf("command %q is a relative path: name it on PATH or by its absolute path", command)
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("command %q is not on astrid's PATH: %w", command, err)
	}
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("command %q resolves to %q, relative to the working directory (PATH holds a relative entry)", command, path)
	}
	return path, nil
}

func checkEnv(v Var) error {
	n := v.Name
	if n == "" || len(n) > maxVarNameByte {
		return fmt.Errorf("environment variable %.40q: a name is 1 to %d bytes", n, maxVarNameByte)
	}
	for i := 0; i < len(n); i++ {
		b := n[i]
		if !(b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b == '_' || i > 0 && b >= '0' && b <= '9') {
			return fmt.Errorf("environment variable %q: a name is ASCII letters, digits and '_', not starting with a digit", n)
		}
	}
	upper := strings.ToUpper(n)
	if slices.Contains(refusedEnv, upper) || slices.ContainsFunc(refusedEnvPrefixes, func(p string) bool { return strings.HasPrefix(upper, p) }) {
		return fmt.Errorf("environment variable %s may not be set by a session: it loads other code into the server or is astrid's to set", n)
	}
	if len(v.Value) > MaxVarBytes || strings.ContainsRune(v.Value, 0) {
		return fmt.Errorf("environment variable %s: a value is at most %d bytes, no NUL", n, MaxVarBytes)
	}
	return nil
}

// checkHTTP checks an HTTP server: its URL (an IP the egress guard
// refuses is refused here, by name; a host name is checked again on
// every connection, on the addresses it resolves to) and headers.
func checkHTTP(s Server, localAllowed bool) (Checked, error) {
	if len(s.Args) > 0 || len(s.Env) > 0 {
		return Checked{}, errors.New("an HTTP server takes no arguments or environment")
	}
	u, err := manifest.CheckMCPURL(s.URL)
	if err != nil {
		return Checked{}, fmt.Errorf("url %w", err)
	}
	host, err := egress.NormalizeHost(u.Hostname())
	if err != nil {
		return Checked{}, fmt.Errorf("url %q: %w", s.URL, err)
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && !localAllowed {
		if err := egress.CheckAddr(ip); err != nil {
			return Checked{}, fmt.Errorf("url %q: %w (config.toml [egress] allow lists the local endpoints servers may reach)", s.URL, err)
		}
	} else if err != nil && !localAllowed && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return Checked{}, fmt.Errorf("url %q: a session's server may not be on this machine (config.toml [egress] allow lists the local endpoints servers may reach)", s.URL)
	}
	if len(s.Headers) > MaxVars {
		return Checked{}, fmt.Errorf("%d headers: at most %d", len(s.Headers), MaxVars)
	}
	for _, h := range s.Headers {
		if h.Name == "" || len(h.Name) > maxVarNameByte || strings.ContainsFunc(h.Name, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?={}`, r) }) {
			return Checked{}, fmt.Errorf("header %.40q: not an HTTP header name", h.Name)
		}
		if len(h.Value) > MaxVarBytes || strings.ContainsAny(h.Value, "\r\n\x00") || strings.Contains(h.Value, "${") {
			return Checked{}, fmt.Errorf("header %s: a value is at most %d bytes, one line, with no ${…} template", h.Name, MaxVarBytes)
		}
	}
	return Checked{Server: s, Host: host}, nil
}

// Manifest is the capsule id serving checked for a session working in
// workspace: one [[mcp_server]] per server, its id the server's name and
// tag (tools are "<name>-<tag>:<tool>", so two sessions' servers of one
// name never provide the same tool), and the grants the doc names.
func Manifest(id, tag, workspace string, checked []Checked, rules Rules) (*manifest.Manifest, error) {
	if err := manifest.ValidateID(id); err != nil {
		return nil, err
	}
	m := &manifest.Manifest{
		Dir:  workspace,
		File: "session",
		Package: manifest.Package{
			Name: id, Version: "0.0.0",
			Description: "MCP servers an editor brought to one session",
		},
	}
	caps := manifest.Capabilities{FSRead: append([]string{"*"}, rules.Read...), FSWrite: []string{"*"}}
	for _, c := range checked {
		srv := manifest.MCPServer{ID: c.Name + "-" + tag}
		if c.URL != "" {
			srv.Type, srv.URL = "http", c.URL
			if len(c.Headers) > 0 {
				srv.Headers = map[string]string{}
				for _, h := range c.Headers {
					srv.Headers[h.Name] = h.Value
				}
			}
			if !slices.Contains(caps.Net, c.Host) {
				caps.Net = append(caps.Net, c.Host)
			}
		} else {
			srv.Type, srv.Command, srv.Args = "stdio", c.Path, c.Args
			if !slices.Contains(caps.HostProcess, c.Path) {
				caps.HostProcess = append(caps.HostProcess, c.Path)
			}
		}
		m.MCPServers = append(m.MCPServers, srv)
	}
	m.Capabilities = caps
	return m, nil
}

// EnvOf is a checked stdio server's environment, as the MCP engine's
// Options.Env takes it (the later of two same names wins).
func EnvOf(c Checked) map[string]string {
	if len(c.Env) == 0 {
		return nil
	}
	out := make(map[string]string, len(c.Env))
	for _, v := range c.Env {
		out[v.Name] = v.Value
	}
	return out
}
