package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// homeKey is a planted secrets key: 32 bytes, as the store wants it.
const homeKey = "SECRET-KEY-0123456789abcdefghijk"

// homeUser is a user's home directory with the default $ASTRID_HOME
// (~/.astrid) initialised inside it, the store's key in place, a symlink an
// attacker planted in ~ and an ordinary file.
func homeUser(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(homeKey) != 32 {
		t.Fatal("homeKey is not 32 bytes")
	}
	// The store's key is in place before init, which seals the host
	// signing key with it.
	home := filepath.Join(dir, ".astrid")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "secrets.key"), []byte(homeKey), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := astridAsUser(dir, "", "init").CombinedOutput(); err != nil {
		t.Fatalf("astrid init: %v\n%s", err, out)
	}
	if err := os.Symlink(".astrid/secrets.key", filepath.Join(dir, "key")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".astrid", filepath.Join(dir, "dot")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("my notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// astridAsUser is `astrid args...` run from dir as a user whose HOME is dir
// and whose $ASTRID_HOME is astridHome ("" leaves it unset: ~/.astrid), so
// the workspace is ~.
func astridAsUser(dir, astridHome string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASTRID_HOME=") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ASTRID_TEST_RUN_MAIN=1", "HOME="+dir)
	if astridHome != "" {
		cmd.Env = append(cmd.Env, "ASTRID_HOME="+astridHome)
	}
	return cmd
}

// TestHomeIsOutOfReachOfTheFileTools runs the file tools through the real
// binary started from ~ with the default $ASTRID_HOME: every way at the
// store's key, the config and the state database is refused with the home
// as the reason, nothing in the home changes, grep_search over ~ does not
// go into it, and ordinary files in ~ still work.
func TestHomeIsOutOfReachOfTheFileTools(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a kernel per call")
	}
	dir := homeUser(t)
	home := filepath.Join(dir, ".astrid")
	config, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct{ tool, args string }{
		{"read_file", `{"file_path":".astrid/secrets.key"}`},
		{"read_file", `{"file_path":".astrid/config.toml"}`},
		{"read_file", `{"file_path":".astrid/state.db"}`},
		{"read_file", `{"file_path":"` + home + `/secrets.key"}`},
		{"read_file", `{"file_path":".ASTRID/secrets.key"}`},
		{"read_file", `{"file_path":"key"}`},
		{"read_file", `{"file_path":"dot/secrets.key"}`},
		{"list_directory", `{"dir_path":".astrid"}`},
		{"list_directory", `{"dir_path":".astrid/"}`},
		{"list_directory", `{"dir_path":"dot"}`},
		{"grep_search", `{"pattern":"SECRET","dir_path":".astrid"}`},
		{"write_file", `{"file_path":".astrid/config.toml","content":"[sandbox]\nmode = \"off\"\n"}`},
		{"write_file", `{"file_path":"key","content":"replaced"}`},
		{"write_file", `{"file_path":"dot/planted","content":"x"}`},
		{"replace_in_file", `{"file_path":".astrid/config.toml","old_string":"#","new_string":"x"}`},
		{"create_directory", `{"dir_path":".astrid/evil"}`},
		{"delete_file", `{"file_path":".astrid/secrets.key"}`},
		{"delete_file", `{"file_path":"dot/state.db"}`},
		{"move_file", `{"source_path":".astrid/secrets.key","destination_path":"stolen.key"}`},
		{"move_file", `{"source_path":"notes.txt","destination_path":".astrid/notes.txt"}`},
	}
	for _, c := range refused {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			out, err := astridAsUser(dir, "", "tool", "call", c.tool, c.args, "--yes", "--timeout", "60s").CombinedOutput()
			if status := exitStatus(t, err); status != 1 {
				t.Errorf("exit %d, want 1; output:\n%s", status, out)
			}
			if strings.Contains(string(out), homeKey) {
				t.Fatalf("the key came out:\n%s", out)
			}
			if !strings.Contains(string(out), "lies in Astrid's home ($ASTRID_HOME, "+home+"), which no grant reaches") {
				t.Errorf("the refusal does not name the home:\n%s", out)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(home, "secrets.key")); err != nil || string(b) != homeKey {
		t.Errorf("secrets.key is now %q (%v)", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != string(config) {
		t.Error("config.toml changed")
	}
	for _, p := range []string{"evil", "planted", "notes.txt"} {
		if _, err := os.Lstat(filepath.Join(home, p)); err == nil {
			t.Errorf("%s appeared in the home", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "stolen.key")); err == nil {
		t.Error("the key was moved out")
	}

	// grep_search over ~ finds the key's text in a workspace file, never
	// in the home.
	if err := os.WriteFile(filepath.Join(dir, "mention.txt"), []byte("SECRET in the open\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := astridAsUser(dir, "", "tool", "call", "grep_search", `{"pattern":"SECRET"}`, "--timeout", "60s").CombinedOutput()
	if exitStatus(t, err) != 0 || !strings.Contains(string(out), "mention.txt:1:SECRET in the open") || strings.Contains(string(out), homeKey) || strings.Contains(string(out), ".astrid") {
		t.Errorf("grep_search over ~:\n%s", out)
	}

	// Controls: ~ is the workspace, and it works.
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"file_path":"notes.txt"}`, "my notes"},
		{"list_directory", `{"dir_path":"."}`, `".astrid"`},
		{"write_file", `{"file_path":"new.txt","content":"fresh"}`, "Successfully wrote"},
		{"move_file", `{"source_path":"new.txt","destination_path":"moved.txt"}`, "Successfully moved"},
	} {
		out, err := astridAsUser(dir, "", "tool", "call", c.tool, c.args, "--yes", "--timeout", "60s").CombinedOutput()
		if exitStatus(t, err) != 0 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s %s: %v\n%s", c.tool, c.args, err, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "moved.txt")); err != nil || string(b) != "fresh" {
		t.Errorf("moved.txt = %q, %v", b, err)
	}
}

// $ASTRID_HOME given as a relative path is the same directory, protected
// under every spelling.
func TestRelativeAstridHomeIsProtected(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a kernel")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := astridAsUser(dir, "state", "init").CombinedOutput(); err != nil {
		t.Fatalf("astrid init: %v\n%s", err, out)
	}
	for _, p := range []string{"state/config.toml", dir + "/state/config.toml"} {
		out, err := astridAsUser(dir, "state", "tool", "call", "read_file", `{"file_path":"`+p+`"}`, "--timeout", "60s").CombinedOutput()
		if exitStatus(t, err) != 1 || !strings.Contains(string(out), "lies in Astrid's home ($ASTRID_HOME, "+dir+"/state)") {
			t.Errorf("read %s:\n%s", p, out)
		}
	}
}
