package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// writeArgs is write_file's arguments for content.
func writeArgs(t *testing.T, path, content string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"file_path": path, "content": content})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 15.8: arguments can come from standard input ("-") or a file
// ("@file"), past the 128 KiB a shell argument may hold.
func TestToolCallArgumentsFromStdinAndFile(t *testing.T) {
	t.Setenv(config.HomeEnv, t.TempDir())
	ws := t.TempDir()
	content := strings.Repeat("0123456789abcdef", 200<<10/16) // 200 KiB
	_, errOut, code := runAstrid(t, writeArgs(t, "from-stdin.txt", content), "tool", "call", "write_file", "-", "--yes", "--workspace", ws)
	if code != 0 {
		t.Fatalf("from stdin: exit %d: %s", code, errOut)
	}
	argsFile := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(argsFile, []byte(writeArgs(t, "from-file.txt", content)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runAstrid(t, "", "tool", "call", "write_file", "@"+argsFile, "--yes", "--workspace", ws)
	if code != 0 {
		t.Fatalf("from a file: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"from-stdin.txt", "from-file.txt"} {
		got, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil || string(got) != content {
			t.Errorf("%s: %d bytes, %v; want the %d bytes sent", name, len(got), err, len(content))
		}
	}
}

// Usage mistakes exit with status 2, as the help says, and quote no more
// of the input than a short excerpt: a secret inside malformed arguments
// does not reach the terminal or the log whole.
func TestToolCallUsageErrors(t *testing.T) {
	t.Setenv(config.HomeEnv, t.TempDir())
	const secret = "sk-live-0123456789abcdefghijklmnopqrstuvwxyz"
	malformed := `{"file_path":"notes.txt","content":"token ` + secret + `"` // no closing brace
	huge := `{"content":"` + strings.Repeat("x", maxArgumentBytes) + secret + `"}`
	missing := filepath.Join(t.TempDir(), "absent.json")
	tests := []struct {
		name, stdin string
		args        []string
		says        string
	}{
		{"malformed inline", "", []string{"tool", "call", "write_file", malformed}, "are not valid JSON"},
		{"malformed on stdin", malformed, []string{"tool", "call", "write_file", "-", "--yes"}, "standard input are not valid JSON"},
		{"over the cap on stdin", huge, []string{"tool", "call", "write_file", "-", "--yes"}, "over the 1048576-byte limit"},
		{"over the cap inline", "", []string{"tool", "call", "write_file", huge}, "over the 1048576-byte limit"},
		{"no such file", "", []string{"tool", "call", "write_file", "@" + missing}, "absent.json"},
		{"no tool name", "", []string{"tool", "call"}, "accepts between 1 and 2 arg(s)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runAstrid(t, tc.stdin, append(tc.args, "--workspace", t.TempDir())...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage)", code)
			}
			if !strings.Contains(errOut, tc.says) {
				t.Errorf("stderr lacks %q:\n%.300s", tc.says, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the secret reached the output whole:\n%.300s", out+errOut)
			}
			if len(errOut) > 1024 {
				t.Errorf("stderr is %d bytes: the input was not truncated", len(errOut))
			}
		})
	}
}

func TestToolCallHelpNamesArgumentSources(t *testing.T) {
	out, _, code := runAstrid(t, "", "tool", "call", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{`"-" to read them from`, `"@file"`, "128 KiB", "2 on a timeout or a usage error (invalid JSON arguments included)"} {
		if !strings.Contains(out, s) {
			t.Errorf("--help lacks %q:\n%s", s, out)
		}
	}
}

func TestExcerpt(t *testing.T) {
	if got := excerpt([]byte("short")); got != `"short"` {
		t.Errorf("excerpt(short) = %s", got)
	}
	long := bytes.Repeat([]byte("z"), 100)
	if got := excerpt(long); !strings.HasSuffix(got, "… (100 bytes in all)") || strings.Count(got, "z") != excerptBytes {
		t.Errorf("excerpt(100 bytes) = %s", got)
	}
}

// A mutable tool called without a terminal is denied unless --yes, and the
// output says how to allow it; a read-only one is not asked about.
func TestToolCallOfAMutableToolAsks(t *testing.T) {
	t.Setenv("ASTRID_HOME", t.TempDir())
	ws := t.TempDir()
	args := `{"file_path":"a.txt","content":"hello"}`
	_, errOut, code := runAstrid(t, "", "tool", "call", "write_file", args, "--workspace", ws)
	if code != 1 || !strings.Contains(errOut, "pass --yes to allow such calls") || !strings.Contains(errOut, "write_file was not approved by the user") {
		t.Fatalf("without --yes: exit %d, stderr:\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Fatalf("a denied write_file wrote the file: %v", err)
	}
	_, errOut, code = runAstrid(t, "", "tool", "call", "write_file", args, "--yes", "--workspace", ws)
	if code != 0 || !strings.Contains(errOut, "approved (--yes): write_file") {
		t.Fatalf("with --yes: exit %d, stderr:\n%s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("a.txt = %q, %v", b, err)
	}
	out, errOut, code := runAstrid(t, "", "tool", "call", "read_file", `{"file_path":"a.txt"}`, "--workspace", ws)
	if code != 0 || !strings.Contains(out, "hello") || strings.Contains(errOut, "approved") || strings.Contains(errOut, "denied") {
		t.Fatalf("read_file: exit %d\n%s%s", code, out, errOut)
	}
}
