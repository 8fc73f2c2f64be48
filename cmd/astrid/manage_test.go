package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/sessionclient"
)

var sessionLine = regexp.MustCompile(`session (s-[0-9a-f]+) \(continue`)

// -p names its session; the test reads it back.
func promptSession(t *testing.T, args ...string) string {
	t.Helper()
	_, errOut, code := runAstrid(t, "", args...)
	m := sessionLine.FindStringSubmatch(errOut)
	if code != 0 || m == nil {
		t.Fatalf("%v: exit %d, stderr:\n%s", args, code, errOut)
	}
	return m[1]
}

// session list is ordered by time, newest last; -p --continue resumes the
// newest session of its own workspace, and says plainly when there is
// none.
func TestPromptContinueResumesNewestOfWorkspace(t *testing.T) {
	// The built-in demo (it reads README.md), which runs in any workspace.
	wsA := promptHome(t, "")
	wsB := t.TempDir()
	if err := os.WriteFile(filepath.Join(wsB, "README.md"), []byte("# B\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a1 := promptSession(t, "-p", "plain", "--workspace", wsA)
	b1 := promptSession(t, "-p", "plain", "--workspace", wsB)
	a2 := promptSession(t, "-p", "plain", "--workspace", wsA)
	b2 := promptSession(t, "-p", "plain", "--workspace", wsB)

	out, errOut, code := runAstrid(t, "", "session", "list", "--json", "--workspace", wsA)
	var list []sessionclient.Summary
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("session list: exit %d\n%s%s", code, out, errOut)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.SessionID)
	}
	if strings.Join(ids, " ") != strings.Join([]string{a1, b1, a2, b2}, " ") {
		t.Fatalf("session list order %v, want oldest first: %v", ids, []string{a1, b1, a2, b2})
	}
	if list[2].Workspace == "" || list[3].Workspace == list[2].Workspace {
		t.Fatalf("workspaces not recorded: %+v", list)
	}
	table, _, _ := runAstrid(t, "", "session", "list", "--workspace", wsA)
	if strings.Index(table, a1) > strings.Index(table, b2) {
		t.Fatalf("the table is not newest last:\n%s", table)
	}

	// --continue from A resumes a2, not b2 (newer, but B's).
	if got := promptSession(t, "-p", "plain", "--continue", "--workspace", wsA); got != a2 {
		t.Fatalf("--continue in A resumed %s, want %s", got, a2)
	}
	show, _, _ := runAstrid(t, "", "session", "show", a2, "--workspace", wsA)
	if strings.Count(show, "user: plain") != 2 {
		t.Fatalf("%s was not continued:\n%s", a2, show)
	}
	// From a subdirectory spelled through a symlink: the same workspace.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(wsB, link); err != nil {
		t.Fatal(err)
	}
	if got := promptSession(t, "-p", "plain", "--continue", "--workspace", link); got != b2 {
		t.Fatalf("--continue through a symlink to B resumed %s, want %s", got, b2)
	}

	_, errOut, code = runAstrid(t, "", "-p", "plain", "--continue", "--workspace", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "--continue: no session of") {
		t.Fatalf("--continue with no session here: exit %d, stderr:\n%s", code, errOut)
	}
	_, errOut, code = runAstrid(t, "", "-p", "plain", "--continue", "--session", a1, "--workspace", wsA)
	if code != 2 || !strings.Contains(errOut, "give one") {
		t.Fatalf("--continue with --session: exit %d, stderr:\n%s", code, errOut)
	}
}

// A warning of the in-process kernel goes to $ASTRID_HOME/logs/cli.log,
// not between the answer's lines; -v shows it on stderr too.
func TestWarningsGoToTheLog(t *testing.T) {
	ws := promptHome(t, plainScript)
	home := os.Getenv(config.HomeEnv)
	// [sandbox] mode = "off" is warned about at every start.
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[sandbox]\nmode = \"off\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runAstrid(t, "", "-p", "plain", "--workspace", ws)
	if code != 0 || out != "Just an answer.\n" || strings.Contains(errOut, "level=WARN") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	logged, err := os.ReadFile(filepath.Join(home, "logs", "cli.log"))
	if err != nil || !strings.Contains(string(logged), "level=WARN") || !strings.Contains(string(logged), "sandbox") {
		t.Fatalf("cli.log (%v):\n%s", err, logged)
	}
	_, errOut, code = runAstrid(t, "", "-p", "plain", "--workspace", ws, "-v")
	if code != 0 || !strings.Contains(errOut, "level=WARN") {
		t.Fatalf("-v: exit %d, stderr:\n%s", code, errOut)
	}
}

// A huge tool name is refused as a usage error, quoted briefly once.
func TestToolCallHugeNameQuotedBriefly(t *testing.T) {
	ws := promptHome(t, "")
	name := strings.Repeat("a", 10<<10)
	out, errOut, code := runAstrid(t, "", "tool", "call", name, "{}", "--workspace", ws)
	if code != 2 || out != "" || len(errOut) > 300 || !strings.Contains(errOut, "10240 bytes") {
		t.Fatalf("exit %d, stdout %d bytes, stderr %d bytes: %.300s", code, len(out), len(errOut), errOut)
	}
}

// tool list is a table that fits 100 columns; -v adds the schemas.
func TestToolListTable(t *testing.T) {
	ws := promptHome(t, "")
	out, errOut, code := runAstrid(t, "", "tool", "list", "--workspace", ws)
	if code != 0 || !strings.HasPrefix(out, "TOOL ") || strings.Contains(out, "schema") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > tableWidth {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	out, _, code = runAstrid(t, "", "tool", "list", "--workspace", ws, "-v")
	if code != 0 || !strings.Contains(out, "read_file schema: {") {
		t.Fatalf("-v: exit %d\n%s", code, out)
	}
}
