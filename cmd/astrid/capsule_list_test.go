package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/runtime"
)

func TestCapsuleList(t *testing.T) {
	home := astridHome(t)
	// svc was copied in by hand: approved as an operator would.
	if _, errOut, code := runAstrid(t, "", "capsule", "approve", "svc", "--yes"); code != 0 {
		t.Fatalf("approve svc: exit %d: %s", code, errOut)
	}
	broken := filepath.Join(home, "capsules", "broken")
	if err := os.MkdirAll(broken, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "Capsule.toml"), []byte("[package]\nname = \"broken\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	out, _, code := runAstrid(t, "", "capsule", "list", "--json", "--workspace", ws)
	if code != 1 {
		t.Errorf("exit %d, want 1 (a capsule failed)", code)
	}
	var list []runtime.Status
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	byID := map[string]runtime.Status{}
	for _, s := range list {
		byID[s.ID] = s
	}
	fs := byID["astrid-capsule-fs"]
	if fs.State != "ready" || !fs.Builtin || !slices.Contains(fs.Tools, "read_file") || !slices.Equal(fs.Engines, []string{"native", "static"}) {
		t.Errorf("fs = %+v", fs)
	}
	// svc declares required [env] values that nobody set: it fails alone,
	// naming the command that sets them.
	if s := byID["svc"]; s.State != "failed" || s.Dir == "" || !strings.Contains(s.Error, "astrid capsule env set svc API_KEY") {
		t.Errorf("svc = %+v", s)
	}
	if s := byID["broken"]; s.State != "failed" || !strings.Contains(s.Error, "no version") {
		t.Errorf("broken = %+v", s)
	}

	out, _, _ = runAstrid(t, "", "capsule", "list", "--workspace", ws, "-v")
	for _, want := range []string{"CAPSULE", "astrid-capsule-fs", "native,static", "read_file", "built-in", "broken: "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
