package sessionmcp

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// An editor's list is untrusted: every escape attempt is refused with an
// error naming what is wrong.
func TestCheckRefusesEscapes(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
	rules := Rules{Commands: []string{"sh"}}
	ok := Server{Name: "ok", Command: "sh"}
	cases := []struct {
		name string
		srv  Server
		want string
	}{
		{"dots in the name", Server{Name: "a.b", Command: "sh"}, `has '.'`},
		{"slash in the name", Server{Name: "../etc", Command: "sh"}, `has '.'`},
		{"slash alone", Server{Name: "a/b", Command: "sh"}, `has '/'`},
		{"200-byte name", Server{Name: strings.Repeat("a", 200), Command: "sh"}, "is 200 bytes"},
		{"empty name", Server{Command: "sh"}, "is 0 bytes"},
		{"command not allowed", Server{Name: "x", Command: "bash"}, "not allowed by the operator's rules"},
		{"absolute path of an allowed name", Server{Name: "x", Command: "/bin/sh"}, "not allowed"},
		{"relative path", Server{Name: "x", Command: "./sh"}, "not allowed"},
		{"LD_PRELOAD", Server{Name: "x", Command: "sh", Env: []Var{{"LD_PRELOAD", "/tmp/evil.so"}}}, "LD_PRELOAD may not be set"},
		{"lower-case ld_library_path", Server{Name: "x", Command: "sh", Env: []Var{{"ld_library_path", "/tmp"}}}, "may not be set"},
		{"NODE_OPTIONS", Server{Name: "x", Command: "sh", Env: []Var{{"NODE_OPTIONS", "--require /tmp/x.js"}}}, "NODE_OPTIONS may not be set"},
		{"PATH", Server{Name: "x", Command: "sh", Env: []Var{{"PATH", "/tmp"}}}, "PATH may not be set"},
		{"name with =", Server{Name: "x", Command: "sh", Env: []Var{{"A=B", "c"}}}, "a name is ASCII letters"},
		{"NUL in a value", Server{Name: "x", Command: "sh", Env: []Var{{"A", "b\x00c"}}}, "no NUL"},
		{"NUL in an argument", Server{Name: "x", Command: "sh", Args: []string{"a\x00b"}}, "no NUL"},
		{"metadata IP", Server{Name: "x", URL: "http://169.254.169.254/latest/meta-data/"}, "link-local"},
		{"loopback IP", Server{Name: "x", URL: "http://127.0.0.1:8080/mcp"}, "loopback"},
		{"localhost", Server{Name: "x", URL: "http://localhost:8080/mcp"}, "localhost"},
		{"private IP", Server{Name: "x", URL: "https://10.0.0.1/mcp"}, "private"},
		{"IPv6 loopback", Server{Name: "x", URL: "http://[::1]/mcp"}, "loopback"},
		{"not http", Server{Name: "x", URL: "file:///etc/passwd"}, "http:// or https://"},
		{"credentials in the URL", Server{Name: "x", URL: "https://u:p@example.com/mcp"}, "credentials"},
		{"header injection", Server{Name: "x", URL: "https://example.com/mcp", Headers: []Var{{"X-A", "v\r\nHost: evil"}}}, "one line"},
		{"header template", Server{Name: "x", URL: "https://example.com/mcp", Headers: []Var{{"Authorization", "${secret:OPENAI_API_KEY}"}}}, "template"},
		{"both command and url", Server{Name: "x", Command: "sh", URL: "https://example.com/"}, "both"},
		{"neither", Server{Name: "x"}, "neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check([]Server{c.srv}, rules)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check = %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := Check([]Server{ok, ok}, rules); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("a name listed twice: %v", err)
	}
	if _, err := Check([]Server{{Name: "x", Command: "sh"}}, Rules{}); !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "session_commands") {
		t.Fatalf("no rules: %v, want the config key named", err)
	}
}

// What passes gets the grants the list and rules say, and no more.
func TestManifestGrants(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	rules := Rules{Commands: []string{"sh"}, Read: []string{"/opt/mods"}}
	checked, err := Check([]Server{
		{Name: "local", Command: "sh", Args: []string{"-c", "x"}, Env: []Var{{"TOKEN", "t"}}},
		{Name: "remote", URL: "https://mcp.example.com/mcp", Headers: []Var{{"Authorization", "Bearer t"}}},
	}, rules)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Manifest("session-mcp-7", "s7", "/ws", checked, rules)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m.Capabilities)
	want := `{"net":["mcp.example.com"],"fs_read":["*","/opt/mods"],"fs_write":["*"],"host_process":["` + sh + `"]}`
	if string(got) != want {
		t.Fatalf("capabilities %s, want %s", got, want)
	}
	if m.MCPServers[0].ID != "local-s7" || m.MCPServers[0].Command != sh || m.MCPServers[1].ID != "remote-s7" || m.MCPServers[1].Type != "http" {
		t.Fatalf("servers %+v", m.MCPServers)
	}
	if env := EnvOf(checked[0]); env["TOKEN"] != "t" || len(env) != 1 {
		t.Fatalf("env %v", env)
	}
}

// FuzzCheck: whatever an editor sends, Check does not panic, and what it
// passes has a name that makes valid tool names and a command the rules
// list.
func FuzzCheck(f *testing.F) {
	f.Add(`[{"name":"a","command":"sh","args":["-c"],"env":[{"name":"X","value":"y"}]}]`)
	f.Add(`[{"name":"b","url":"http://169.254.169.254/","headers":[{"name":"A","value":"b"}]}]`)
	f.Add(`[{"name":"a.b/c","command":"/bin/sh"}]`)
	rules := Rules{Commands: []string{"sh", "/bin/sh"}}
	f.Fuzz(func(t *testing.T, raw string) {
		var servers []Server
		if json.Unmarshal([]byte(raw), &servers) != nil {
			return
		}
		checked, err := Check(servers, rules)
		if err != nil {
			return
		}
		for _, c := range checked {
			if checkName(c.Name) != nil {
				t.Fatalf("passed name %q", c.Name)
			}
			if c.URL == "" && c.Path == "" {
				t.Fatalf("passed %+v with nothing to run", c)
			}
			for _, v := range c.Env {
				if strings.HasPrefix(strings.ToUpper(v.Name), "LD_") {
					t.Fatalf("passed %s", v.Name)
				}
			}
		}
	})
}
