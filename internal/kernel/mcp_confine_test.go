package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// TestMCPServerConfinedToItsGrants: server-filesystem is told it may touch
// the whole file system ("/"), so it tries everything asked of it; the OS
// holds it to its capsule's grants (its code, the workspace): Astrid's
// home, /etc, and another directory are refused, the workspace works.
func TestMCPServerConfinedToItsGrants(t *testing.T) {
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	npm := mcptest.NPM(t)
	mk := bootMCPKernel(t)
	outside := t.TempDir()
	for path, body := range map[string]string{
		filepath.Join(mk.ws, "notes.txt"):          "hello from the workspace",
		filepath.Join(outside, "secret.txt"):       "OUTSIDE-SECRET",
		filepath.Join(mk.k.opts.Home, "probe.txt"): "HOME-SECRET",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mk.loadMCP(t, "mcp-root", "root", nil, npm.Filesystem, "/")
	cases := []struct {
		name, tool, args string
		ok               bool
		want             string
	}{
		{"reads the workspace", "root:read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(mk.ws, "notes.txt")), true, "hello from the workspace"},
		{"reads Astrid's home", "root:read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(mk.k.opts.Home, "probe.txt")), false, "denied"},
		{"lists Astrid's home", "root:list_directory", fmt.Sprintf(`{"path":%q}`, mk.k.opts.Home), false, "denied"},
		{"reads outside the grants", "root:read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(outside, "secret.txt")), false, "denied"},
		{"reads /etc/passwd", "root:read_text_file", `{"path":"/etc/passwd"}`, false, "denied"},
		{"writes outside the grants", "root:write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(outside, "planted.txt")), false, "denied"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mk.call(t, fmt.Sprintf("c-root-%d", i), c.tool, c.args)
			if res.IsError == c.ok {
				t.Fatalf("%s: error %v, want ok %v: %q", c.tool, res.IsError, c.ok, res.Content)
			}
			if strings.Contains(res.Content, "SECRET") {
				t.Fatalf("a secret came back: %q", res.Content)
			}
			if !strings.Contains(strings.ToLower(res.Content), c.want) {
				t.Fatalf("%s: %q, want %q in it", c.tool, res.Content, c.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Fatal("the server wrote outside its grants")
	}
}
