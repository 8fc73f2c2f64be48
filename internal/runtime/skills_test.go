package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The operator's skill library: each <name>/SKILL.md becomes a [[skill]]
// of the static-only capsule astrid-skills (allow_prompt_injection: the
// operator's own); escape attempts and oversized files are refused one
// by one, each with its reason, and the others still served.
func TestSkillLibrary(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "tidy", "SKILL.md"), "---\nname: tidy\ndescription: Tidy the imports\n---\nRun goimports.\n")
	write(filepath.Join(dir, "nameless", "SKILL.md"), "Just text.\n")
	write(filepath.Join(dir, "notes.txt"), "not a skill folder")
	write(filepath.Join(dir, "empty", "README"), "no SKILL.md here")
	write(filepath.Join(outside, "SKILL.md"), "---\nname: stolen\n---\nSECRET\n")
	write(filepath.Join(outside, "dir", "SKILL.md"), "---\nname: stolen2\n---\nSECRET\n")
	for _, tc := range []struct {
		name  string
		setup func()
	}{
		{"huge", func() { write(filepath.Join(dir, "huge", "SKILL.md"), strings.Repeat("x", 10<<20)) }},
		{"link-file-out", func() {
			_ = os.MkdirAll(filepath.Join(dir, "link-file-out"), 0o700)
			if err := os.Symlink(filepath.Join(outside, "SKILL.md"), filepath.Join(dir, "link-file-out", "SKILL.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"link-dir-out", func() {
			if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(dir, "link-dir-out")); err != nil {
				t.Fatal(err)
			}
		}},
		{"dotdot", func() {
			_ = os.MkdirAll(filepath.Join(dir, "dotdot"), 0o700)
			if err := os.Symlink("../../"+filepath.Base(outside)+"/SKILL.md", filepath.Join(dir, "dotdot", "SKILL.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"binary", func() { write(filepath.Join(dir, "binary", "SKILL.md"), "\xff\xfe\x00") }},
	} {
		tc.setup()
	}
	c, problems := SkillLibrary(dir)
	if c == nil || c.ID() != SkillsCapsuleID || !c.Builtin() || !c.Manifest.Capabilities.AllowPromptInjection {
		t.Fatalf("candidate %+v", c)
	}
	var names []string
	for _, s := range c.Manifest.Skills {
		names = append(names, s.Name+"="+s.Description)
	}
	if got := strings.Join(names, ","); got != "nameless=,tidy=Tidy the imports" {
		t.Fatalf("skills %s", got)
	}
	want := map[string]string{"huge": "larger than the 262144-byte limit", "link-file-out": "leads out of the skill library", "link-dir-out": "leads out of the skill library", "dotdot": "leads out of the skill library", "binary": "not UTF-8"}
	got := map[string]string{}
	for _, p := range problems {
		got[strings.TrimPrefix(p.ID, SkillsCapsuleID+"/")] = p.Err.Error()
	}
	for name, part := range want {
		if !strings.Contains(got[name], part) || strings.Contains(got[name], "SECRET") {
			t.Fatalf("%s: problem %q, want one containing %q (all: %v)", name, got[name], part, got)
		}
	}
	if len(problems) != len(want) {
		t.Fatalf("problems %v", got)
	}
	if c, p := SkillLibrary(filepath.Join(dir, "missing")); c != nil || p != nil {
		t.Fatalf("a missing library: %+v %v", c, p)
	}
}
