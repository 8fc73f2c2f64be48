package gate

import (
	"strings"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// TestFSAttacks tries every traversal and confusion spelling against a
// capsule holding `*`, `home://` and `cwd://data`, acting for alice. Each is
// denied, except percent-encoded and other look-alike names, which are file
// names like any other: they are allowed only as that literal name inside the
// workspace, which is no escape.
func TestFSAttacks(t *testing.T) {
	g := mustGate(t, manifest.Capabilities{
		FSRead:  []string{"*", "home://", "cwd://data"},
		FSWrite: []string{"*", "home://", "cwd://data"},
	})
	attacks := []struct {
		name, principal, path string
		literal               string // "" = denied; else allowed as this Rel under /workspace
	}{
		{name: "relative dotdot", path: "../etc/passwd"},
		{name: "dotdot alone", path: ".."},
		{name: "inner dotdot", path: "a/../../x"},
		{name: "inner dotdot staying inside", path: "a/../b"},
		{name: "absolute dotdot", path: "/workspace/../etc/passwd"},
		{name: "deep dotdot", path: "/workspace/src/../../etc/passwd"},
		{name: "trailing dotdot", path: "/workspace/.."},
		{name: "trailing dotdot slash", path: "/workspace/../"},
		{name: "backslash dotdot", path: `..\etc\passwd`},
		{name: "backslash dotdot absolute", path: `/workspace/..\..\etc\passwd`},
		{name: "mixed separators", path: `/workspace/a\../../etc`},
		{name: "percent dotdot", path: "%2e%2e/%2e%2e/etc/passwd", literal: "%2e%2e/%2e%2e/etc/passwd"},
		{name: "percent dotdot absolute", path: "/workspace/%2e%2e/etc", literal: "%2e%2e/etc"},
		{name: "percent slash", path: "..%2f..%2fetc%2fpasswd", literal: "..%2f..%2fetc%2fpasswd"},
		{name: "double-encoded", path: "%252e%252e/x", literal: "%252e%252e/x"},
		{name: "unicode two-dot leader", path: "\u2025/etc", literal: "\u2025/etc"},
		{name: "fullwidth dots", path: "\uff0e\uff0e/etc", literal: "\uff0e\uff0e/etc"},
		{name: "tilde is not expanded", path: "~/x", literal: "~/x"},
		{name: "dot component", path: "/workspace/./x"},
		{name: "leading dot component", path: "./x"},
		{name: "dot-slash-dotdot", path: "./../x"},
		{name: "double slash inside", path: "/workspace//x"},
		{name: "double slash root", path: "//etc/passwd"},
		{name: "double trailing slash", path: "/workspace/x//"},
		{name: "only slashes", path: "//"},
		{name: "trailing slash outside", path: "/etc/"},
		{name: "workspace-evil", path: "/workspace-evil"},
		{name: "workspace-evil slash", path: "/workspace-evil/"},
		{name: "workspace-evil file", path: "/workspace-evil/x"},
		{name: "workspace_evil", path: "/workspace_evil/x"},
		{name: "workspace prefix", path: "/work"},
		{name: "NUL truncation", path: "/workspace\x00/../etc/passwd"},
		{name: "NUL suffix", path: "/workspace/x\x00"},
		{name: "newline", path: "/workspace/a\nb"},
		{name: "DEL", path: "/workspace/a\x7fb"},
		{name: "invalid UTF-8", path: "/workspace/\xff"},
		{name: "over-long", path: "/workspace/" + strings.Repeat("a", maxPathBytes)},
		{name: "empty", path: ""},
		{name: "cwd:///etc is not /etc", path: "cwd:///etc/passwd"},
		{name: "cwd dotdot", path: "cwd://data/../../x"},
		{name: "cwd outside its grant", path: "cwd://other"},
		{name: "another principal's home", path: "/home/user/.astrid/home/bob/secret"},
		{name: "another principal's home, scheme", path: "home://../bob/secret"},
		{name: "homes directory itself", path: "/home/user/.astrid/home"},
		{name: "home scheme triple slash dotdot", path: "home:///../bob"},
		{name: "principal with slash", principal: "alice/../bob", path: "home://x"},
		{name: "principal dotdot", principal: "..", path: "home://x"},
		{name: "principal dot", principal: ".", path: "home://x"},
		{name: "principal empty", principal: "", path: "/workspace/x"},
		{name: "principal over 64", principal: strings.Repeat("a", 65), path: "/workspace/x"},
		{name: "principal NUL", principal: "alice\x00", path: "home://x"},
		{name: "file scheme", path: "file:///etc/passwd"},
		{name: "workspace scheme", path: "workspace://x"},
		{name: "upper-case scheme", path: "HOME://x"},
		{name: "scheme further along", path: "a/home://x"},
		{name: "proc root", path: "/proc/self/root/etc/passwd"},
	}
	for _, a := range attacks {
		principal := a.principal
		if principal == "" && a.name != "principal empty" {
			principal = "alice"
		}
		for _, op := range []struct {
			capability string
			check      func(string, string) (Root, error)
		}{{"fs_read", g.FSRead}, {"fs_write", g.FSWrite}} {
			t.Run(a.name+"/"+op.capability, func(t *testing.T) {
				root, err := op.check(principal, a.path)
				if a.literal == "" {
					wantDenied(t, err, op.capability)
					return
				}
				if err != nil {
					t.Fatalf("denied a literal name: %v", err)
				}
				if root.Dir != "/workspace" || root.Rel != a.literal {
					t.Errorf("root = %+v, want Rel %q under /workspace", root, a.literal)
				}
			})
		}
	}
}
