package skills_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/skills"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, skills.Manifest, skills.New())
}

// skillCapsule is a static-only capsule declaring skills (name →
// SKILL.md text), holding allow_prompt_injection when grant is set.
func skillCapsule(id string, grant bool, texts map[string]string) sdktest.Capsule {
	var b strings.Builder
	fmt.Fprintf(&b, "[package]\nname = %q\nversion = \"0.1.0\"\nastrid-version = \"^0.1\"\n\n[capabilities]\nallow_prompt_injection = %v\n", id, grant)
	files := map[string]string{}
	for name, text := range texts {
		fmt.Fprintf(&b, "\n[[skill]]\nname = %q\nfile = \"skills/%s/SKILL.md\"\n", name, name)
		files["skills/"+name+"/SKILL.md"] = text
	}
	return sdktest.Capsule{Manifest: []byte(b.String()), Files: files}
}

func boot(t testing.TB, env map[string]string, extra ...sdktest.Capsule) *sdktest.Kernel {
	t.Helper()
	caps := append([]sdktest.Capsule{
		{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		{Manifest: skills.Manifest, New: skills.New, Config: env},
	}, extra...)
	return sdktest.New(t, caps...)
}

// assembled asks the prompt builder for a prompt and returns it.
func assembled(t testing.TB, k *sdktest.Kernel, id string) promptbuilder.Response {
	t.Helper()
	replies := k.PromptListen(ipc.DefaultPrincipal, promptbuilder.ResponseTopic)
	k.PromptPublish(ipc.DefaultPrincipal, map[string]any{"request_id": id, "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
	for {
		_, body := replies.Next()
		var r promptbuilder.Response
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		if r.RequestID == id {
			return r
		}
	}
}

const reviewSkill = "---\nname: review\ndescription: Review a change for bugs and style\n---\n# Review\nRead the diff twice.\n"

// A capsule's skills are indexed in the prompt: in the system prompt when
// the capsule holds allow_prompt_injection, in the user-visible context
// when not; read_skill returns the text; an unknown name lists the
// skills.
func TestSkillsInThePromptAndReadSkill(t *testing.T) {
	k := boot(t, nil,
		skillCapsule("trusted-docs", true, map[string]string{"review": reviewSkill}),
		skillCapsule("other-docs", false, map[string]string{"deploy": "---\nname: deploy\ndescription: Ship it\n---\nRun make deploy.\n"}))
	r := assembled(t, k, "r1")
	if !strings.Contains(r.SystemPrompt, "- review: Review a change for bugs and style (from trusted-docs)") || strings.Contains(r.SystemPrompt, "deploy") {
		t.Fatalf("system prompt:\n%s", r.SystemPrompt)
	}
	if !strings.Contains(r.UserContextPrefix, "- deploy: Ship it (from other-docs)") || strings.Contains(r.UserContextPrefix, "review") {
		t.Fatalf("user context prefix:\n%s", r.UserContextPrefix)
	}
	if !hasTool(r, "read_skill") {
		t.Fatalf("read_skill is not offered: %+v", r.Tools)
	}
	res := k.CallTool("read_skill", map[string]string{"name": "review"})
	if res.IsError || !strings.Contains(res.Content, "[skill review, from trusted-docs]") || !strings.Contains(res.Content, "Read the diff twice.") {
		t.Fatalf("read_skill review: %+v", res)
	}
	res = k.CallTool("read_skill", map[string]string{"name": "nope"})
	if !res.IsError || !strings.Contains(res.Content, "no skill \"nope\"") || !strings.Contains(res.Content, "review") || !strings.Contains(res.Content, "deploy") {
		t.Fatalf("read_skill nope: %+v", res)
	}
}

func hasTool(r promptbuilder.Response, name string) bool {
	for _, d := range r.Tools {
		if d.Name == name {
			return true
		}
	}
	return false
}

// The workspace's .astrid/skills is read only when [env] workspace_skills
// allows it, and its skills never reach the system prompt; a SKILL.md of
// 10 MiB and one that is a symlink out of the workspace are refused with
// the reason (read_skill says it), the others still offered.
func TestWorkspaceSkills(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("---\nname: escape\ndescription: secrets\n---\nSTOLEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	setup := func(k *sdktest.Kernel) {
		t.Helper()
		dir := filepath.Join(k.Workspace, ".astrid", "skills")
		for _, d := range []string{"lint", "huge", "escape"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		write := func(name, text string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("lint/SKILL.md", "---\nname: lint\ndescription: \"Run the linters\"\n---\nrun golangci-lint\n")
		write("huge/SKILL.md", "---\nname: huge\n---\n"+strings.Repeat("x", 10<<20))
		if err := os.Symlink(filepath.Join(outside, "SKILL.md"), filepath.Join(dir, "escape", "SKILL.md")); err != nil {
			t.Fatal(err)
		}
	}
	off := boot(t, nil)
	setup(off)
	if r := assembled(t, off, "r1"); strings.Contains(r.UserContextPrefix+r.SystemPrompt, "lint") {
		t.Fatalf("workspace skills offered without [env] workspace_skills:\n%s\n%s", r.SystemPrompt, r.UserContextPrefix)
	}
	on := boot(t, map[string]string{"workspace_skills": "true"})
	setup(on)
	r := assembled(t, on, "r2")
	if !strings.Contains(r.UserContextPrefix, "- lint: Run the linters (from workspace)") || strings.Contains(r.SystemPrompt, "lint") {
		t.Fatalf("workspace skill:\nsystem %s\nprefix %s", r.SystemPrompt, r.UserContextPrefix)
	}
	if strings.Contains(r.UserContextPrefix, "huge") || strings.Contains(r.UserContextPrefix, "escape") {
		t.Fatalf("a refused skill is offered:\n%s", r.UserContextPrefix)
	}
	for _, tc := range []struct{ name, want string }{
		{"huge", "bytes, and a skill may have at most 262144"},
		{"escape", "is refused"},
	} {
		res := on.CallTool("read_skill", map[string]string{"name": tc.name})
		t.Logf("read_skill %s: %s", tc.name, res.Content)
		if !res.IsError || !strings.Contains(res.Content, tc.want) || strings.Contains(res.Content, "STOLEN") {
			t.Fatalf("read_skill %s: %+v", tc.name, res)
		}
	}
	if res := on.CallTool("read_skill", map[string]string{"name": "lint"}); res.IsError || !strings.Contains(res.Content, "run golangci-lint") {
		t.Fatalf("read_skill lint: %+v", res)
	}
}

// The operator's library, $ASTRID_HOME/skills/<name>/SKILL.md, reaches
// the system prompt (served by the runtime's astrid-skills capsule, the
// operator's own) and read_skill; a symlinked-out one is not offered.
func TestOperatorSkillLibrary(t *testing.T) {
	caps := []sdktest.Capsule{{Manifest: promptbuilder.Manifest, New: promptbuilder.New}, {Manifest: skills.Manifest, New: skills.New}}
	k := sdktest.New(t, caps...)
	lib := filepath.Join(k.Home(), "skills")
	if err := os.MkdirAll(filepath.Join(lib, "tidy"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "tidy", "SKILL.md"), []byte("---\nname: tidy\ndescription: Tidy the imports\n---\nRun goimports -w on every changed file.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(outside, []byte("---\nname: stolen\n---\nSECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(lib, "stolen"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(lib, "stolen", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	k = k.Restart(caps...)
	r := assembled(t, k, "r1")
	if !strings.Contains(r.SystemPrompt, "- tidy: Tidy the imports (from astrid-skills)") || strings.Contains(r.SystemPrompt+r.UserContextPrefix, "stolen") {
		t.Fatalf("system prompt:\n%s\nprefix:\n%s", r.SystemPrompt, r.UserContextPrefix)
	}
	if res := k.CallTool("read_skill", map[string]string{"name": "tidy"}); res.IsError || !strings.Contains(res.Content, "goimports -w") {
		t.Fatalf("read_skill tidy: %+v", res)
	}
	if logs := k.Logs(); !strings.Contains(logs, "leads out of the skill library") {
		t.Fatalf("the refusal is not logged:\n%s", logs)
	}
}
