package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/store"
)

// runAstrid runs the CLI with stdin and returns its stdout, stderr and exit
// status.
func runAstrid(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		var e exitError
		if !errors.As(err, &e) {
			errOut.WriteString(err.Error()) // what main prints
		}
	}
	return out.String(), errOut.String(), exitCode(err)
}

// astridHome points $ASTRID_HOME at a fresh directory with one installed
// capsule, "svc", that declares a secret, a select and a text value.
func astridHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	dir := filepath.Join(home, "capsules", "svc")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	manifest := `[package]
name = "svc"
version = "0.1.0"
[env]
API_KEY = { type = "secret", request = "Enter your API key" }
REGION = { type = "select", enum_values = ["us-east-1", "eu-west-1"] }
NAME = { type = "text" }
`
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestCapsuleEnvSet(t *testing.T) {
	home := astridHome(t)
	cases := []struct {
		name, key, stdin string
		code             int
		msg              string
	}{
		{"secret from a pipe", "API_KEY", "sk-secret\n", 0, "secret API_KEY of capsule svc stored"},
		{"select value", "REGION", "eu-west-1", 0, "value REGION of capsule svc stored"},
		{"select outside its values", "REGION", "mars\n", 1, `"mars" is not one of us-east-1, eu-west-1`},
		{"text keeps inner newlines", "NAME", "two\nlines\r\n", 0, "value NAME"},
		{"undeclared key", "OTHER", "x", 1, "declares no [env] key OTHER (it declares API_KEY, REGION, NAME)"},
		{"empty value", "NAME", "", 1, "the value is empty"},
		{"alice's own secret", "API_KEY --principal alice", "sk-alice\n", 0, "secret API_KEY of capsule svc stored for principal alice"},
		{"a principal that cannot be", "NAME --principal Alice/..", "x", 1, "principal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runAstrid(t, tc.stdin, append([]string{"capsule", "env", "set", "svc"}, strings.Fields(tc.key)...)...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.msg)
			}
		})
	}
	if _, errOut, code := runAstrid(t, "x", "capsule", "env", "set", "nobody", "KEY"); code == 0 || !strings.Contains(errOut, "no capsule nobody") {
		t.Errorf("unknown capsule: exit %d, %q", code, errOut)
	}
	if _, _, code := runAstrid(t, "x", "capsule", "env", "set", "svc", "API_KEY", "sk-on-argv"); code == 0 {
		t.Error("a value on the command line was accepted")
	}

	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, ok, err := st.Secrets("svc").Get("API_KEY"); err != nil || !ok || string(v) != "sk-secret" {
		t.Errorf("secret API_KEY = %q, %v, %v", v, ok, err)
	}
	if _, ok, _ := st.Config("svc").Get("API_KEY"); ok {
		t.Error("the secret is also stored in plain configuration")
	}
	if v, ok, err := st.PrincipalSecrets("alice", "svc").Get("API_KEY"); err != nil || !ok || string(v) != "sk-alice" {
		t.Errorf("alice's API_KEY = %q, %v, %v", v, ok, err)
	}
	if v, ok, _ := st.Config("svc").Get("REGION"); !ok || string(v) != "eu-west-1" {
		t.Errorf("REGION = %q, %v", v, ok)
	}
	if v, _, _ := st.Config("svc").Get("NAME"); string(v) != "two\nlines" {
		t.Errorf("NAME = %q, want the final newline dropped only", v)
	}
	raw, err := os.ReadFile(config.Layout(home).State)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("sk-secret")) {
		t.Error("the secret is in the database in the clear")
	}
}
