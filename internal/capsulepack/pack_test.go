package capsulepack

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// capsuleDir writes a capsule with a (fake) component vouched for by
// meta.json, a context file, Go sources and a hidden file.
func capsuleDir(t testing.TB, extraToml string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	wasm := []byte("\x00asm fake component bytes")
	files := map[string]string{
		"Capsule.toml": "[package]\nname = \"notes\"\nversion = \"0.2.0\"\n" + extraToml +
			"[[component]]\nid = \"notes\"\nfile = \"bin/notes.wasm\"\n" +
			"[[context_file]]\nname = \"notes\"\nfile = \"docs/notes.md\"\n",
		"bin/notes.wasm": string(wasm),
		"meta.json":      `{"wasm_hash":"` + digest(wasm) + `","file":"bin/notes.wasm","abi_version":1}`,
		"docs/notes.md":  "remember",
		"docs/extra.txt": "more",
		"notes.go":       "package notes",
		"go.mod":         "module x",
		".env":           "SECRET=1",
		"old.capsule":    "an earlier archive",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func names(a *Archive) string {
	var out []string
	for _, f := range a.Meta.Files {
		out = append(out, f.Path)
	}
	return strings.Join(out, " ")
}

func mustRead(t *testing.T, b []byte) *Archive {
	t.Helper()
	a, err := Read(bytes.NewReader(b), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The same files give the same bytes, whatever their times, modes and
// directory; a changed byte gives other bytes.
func TestPackIsDeterministic(t *testing.T) {
	dir := capsuleDir(t, "")
	first, err := Pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	copyDir := capsuleDir(t, "")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(copyDir, "docs", "notes.md"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(copyDir, "docs", "notes.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := Pack(copyDir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes, second.Bytes) {
		t.Fatal("packing the same files twice gave different bytes")
	}
	if err := os.WriteFile(filepath.Join(copyDir, "docs", "notes.md"), []byte("remembeR"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := Pack(copyDir)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first.Bytes, third.Bytes) {
		t.Fatal("a changed file gave the same archive")
	}
	a := mustRead(t, first.Bytes)
	if got, want := names(a), "Capsule.toml bin/notes.wasm docs/extra.txt docs/notes.md"; got != want {
		t.Errorf("packed %q, want %q (no Go sources, hidden files or archives by default)", got, want)
	}
	if a.Meta.WasmHash == "" || a.Meta.Name != "notes" || a.Meta.Version != "0.2.0" || a.Meta.ABIVersion != 1 {
		t.Errorf("meta.json lost the build record: %+v", a.Meta)
	}
}

func TestPackHonoursIncludeAndExclude(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"include = [\"docs/notes.md\"]\n", "Capsule.toml bin/notes.wasm docs/notes.md"},
		{"include = [\"*.md\", \"notes.go\"]\n", "Capsule.toml bin/notes.wasm docs/notes.md notes.go"},
		{"exclude = [\"*.txt\"]\n", "Capsule.toml bin/notes.wasm docs/notes.md"},
		{"exclude = [\"docs\"]\n", "Capsule.toml bin/notes.wasm"},
		{"include = [\"docs/\"]\nexclude = [\"docs/extra.*\"]\n", "Capsule.toml bin/notes.wasm docs/notes.md"},
	} {
		// [package] keys come right after version.
		p, err := Pack(capsuleDir(t, tc.toml))
		if err != nil {
			t.Fatalf("%q: %v", tc.toml, err)
		}
		if got := names(mustRead(t, p.Bytes)); got != tc.want {
			t.Errorf("%q packed %q, want %q", tc.toml, got, tc.want)
		}
	}
}

func TestPackRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, toml, want string
		change           func(dir string) error
	}{
		{name: "exclude of the component", toml: "exclude = [\"bin\"]\n", want: "which the capsule needs to load"},
		{name: "bad pattern", toml: "include = [\"[\"]\n", want: "syntax error in pattern"},
		{name: "manifest error", toml: "bogus = 1\nname2 = [\n", want: "the manifest has errors"},
		{name: "unbuilt component", want: "build it first", change: func(dir string) error {
			return os.Remove(filepath.Join(dir, "bin", "notes.wasm"))
		}},
		{name: "stale meta.json", want: "rebuild it", change: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "bin", "notes.wasm"), []byte("other"), 0o644)
		}},
		{name: "no hash vouches", want: "no sha256 vouches", change: func(dir string) error {
			return os.Remove(filepath.Join(dir, "meta.json"))
		}},
		{name: "selected symlink", want: "not a regular file", change: func(dir string) error {
			return os.Symlink("/etc/passwd", filepath.Join(dir, "docs", "passwd"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := capsuleDir(t, tc.toml)
			if tc.change != nil {
				if err := tc.change(dir); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Pack(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pack: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestExtractWritesWhatWasPacked(t *testing.T) {
	p, err := Pack(capsuleDir(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := mustRead(t, p.Bytes).Extract(dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "docs", "notes.md"))
	if err != nil || string(got) != "remember" {
		t.Fatalf("extracted notes.md: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dst, MetaFile)); err != nil {
		t.Fatalf("meta.json not extracted: %v", err)
	}
	if err := mustRead(t, p.Bytes).Extract(dst); err == nil {
		t.Fatal("extracting over existing files succeeded")
	}
}

func TestSignAndVerify(t *testing.T) {
	p, err := Pack(capsuleDir(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	other, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	trust := func(k ed25519.PublicKey) string {
		if k.Equal(pub) {
			return "alice"
		}
		return ""
	}
	if s, err := mustRead(t, p.Bytes).Verify(trust); err != nil || s.Signed() {
		t.Fatalf("unsigned archive: %v, %v", s, err)
	}
	signed, err := Sign(p.Bytes, priv)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Sign(p.Bytes, priv)
	if !bytes.Equal(signed, again) {
		t.Error("signing twice gave different bytes (ed25519 is deterministic)")
	}
	s, err := mustRead(t, signed).Verify(trust)
	if err != nil || !s.Trusted() || s.Name != "alice" {
		t.Fatalf("signed by a trusted key: %v, %v", s, err)
	}
	s, err = mustRead(t, must(Sign(p.Bytes, otherPriv))).Verify(trust)
	if err != nil || !s.Signed() || s.Trusted() || !s.Key.Equal(other) {
		t.Fatalf("signed by an unknown key: %v, %v", s, err)
	}

	// Another archive's signature on this one: refused.
	otherPack, err := Pack(capsuleDir(t, "description = \"changed\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	foreign := mustRead(t, must(Sign(otherPack.Bytes, priv))).Signature
	a := mustRead(t, p.Bytes)
	forged, err := write(a.MetaJSON, a.Files, foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mustRead(t, forged).Verify(trust); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("another archive's signature: %v, want ErrBadSignature", err)
	}
	// A key swapped into signature.json: refused.
	swapped := bytes.Replace(foreign, []byte(FormatKey(pub)), []byte(FormatKey(other)), 1)
	forged, _ = write(a.MetaJSON, a.Files, swapped)
	if _, err := mustRead(t, forged).Verify(trust); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("swapped key: %v, want ErrBadSignature", err)
	}
	for _, junk := range []string{"{", `{"format":"other"}`, `{"format":"astrid-capsule-signature/1","key":"ed25519:AAAA","sig":""}`} {
		forged, _ = write(a.MetaJSON, a.Files, []byte(junk))
		if _, err := mustRead(t, forged).Verify(trust); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("signature.json %q: %v, want ErrBadSignature", junk, err)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	got, err := ParseKey(FormatKey(pub))
	if err != nil || !got.Equal(pub) {
		t.Fatalf("ParseKey(FormatKey): %v, %v", got, err)
	}
	for _, bad := range []string{"", "rsa:AAAA", "ed25519:!!", "ed25519:AAAA"} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
