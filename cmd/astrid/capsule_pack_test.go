package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/config"
)

// packCLI packs src with the CLI into dir and returns the archive's path.
func packCLI(t *testing.T, src, out string) string {
	t.Helper()
	if stdout, errOut, code := runAstrid(t, "", "capsule", "pack", src, "-o", out); code != 0 || !strings.Contains(errOut, "packed") {
		t.Fatalf("capsule pack: exit %d\n%s%s", code, stdout, errOut)
	}
	return out
}

// Issue 37.1 and 37.2 through the CLI: pack twice gives the same bytes;
// an unsigned archive needs --allow-unsigned; a signed one installs once
// its publisher is trusted; a tampered or mis-signed one is refused with
// nothing installed; capsule list shows where it came from.
func TestCapsulePackSignTrustInstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	tmp := t.TempDir()
	src := notesSource(t, "notes")
	installed := filepath.Join(home, "capsules", "notes")

	a1 := packCLI(t, src, filepath.Join(tmp, "a1.capsule"))
	a2 := packCLI(t, src, filepath.Join(tmp, "a2.capsule"))
	b1, _ := os.ReadFile(a1)
	b2, _ := os.ReadFile(a2)
	if len(b1) == 0 || !bytes.Equal(b1, b2) {
		t.Fatal("capsule pack twice gave different bytes")
	}

	// Refuses what check refuses.
	broken := notesSource(t, "Broken")
	if _, errOut, code := runAstrid(t, "", "capsule", "pack", broken, "-o", filepath.Join(tmp, "b.capsule")); code != 1 || !strings.Contains(errOut, "not packed") {
		t.Fatalf("pack of a broken capsule: exit %d: %s", code, errOut)
	}

	// Unsigned: refused without a terminal unless allowed.
	_, errOut, code := runAstrid(t, "", "capsule", "install", a1, "--yes")
	if code != 1 || !strings.Contains(errOut, "is unsigned") || !strings.Contains(errOut, "--allow-unsigned") {
		t.Fatalf("unsigned install: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Fatalf("refused install left %s: %v", installed, err)
	}
	if out, errOut, code := runAstrid(t, "", "capsule", "install", a1, "--yes", "--allow-unsigned"); code != 0 {
		t.Fatalf("install --allow-unsigned: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(installed, "notes.md")); err != nil {
		t.Fatalf("not installed: %v", err)
	}
	out, _, _ := runAstrid(t, "", "capsule", "list", "--workspace", ws)
	if !strings.Contains(out, a1+" sha256:") {
		t.Errorf("capsule list does not show the archive and its digest:\n%s", out)
	}
	out, _, _ = runAstrid(t, "", "capsule", "list", "--workspace", ws, "--json")
	if !strings.Contains(out, `"source": "`+a1+`"`) || !strings.Contains(out, `"signer": "unsigned"`) {
		t.Errorf("capsule list --json does not show the origin:\n%s", out)
	}

	// Signed: the publisher's key, then trust.
	pubKey, errOut, code := runAstrid(t, "", "key", "generate")
	if code != 0 || !strings.HasPrefix(pubKey, "ed25519:") {
		t.Fatalf("key generate: exit %d: %q %s", code, pubKey, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "key", "generate"); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("second key generate: exit %d: %s", code, errOut)
	}
	signed := filepath.Join(tmp, "signed.capsule")
	if _, errOut, code := runAstrid(t, "", "capsule", "sign", a1, "-o", signed); code != 0 {
		t.Fatalf("capsule sign: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "install", signed, "--yes"); code != 1 || !strings.Contains(errOut, "unknown publisher") {
		t.Fatalf("install signed by an untrusted key: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "trust", "add", "me", strings.TrimSpace(pubKey)); code != 0 {
		t.Fatalf("trust add: exit %d: %s", code, errOut)
	}
	if out, _, _ := runAstrid(t, "", "trust", "list"); !strings.HasPrefix(out, "me  ") {
		t.Fatalf("trust list: %q", out)
	}
	if out, errOut, code := runAstrid(t, "", "capsule", "install", signed, "--yes"); code != 0 || !strings.Contains(errOut, "is signed by me") {
		t.Fatalf("install signed by a trusted key: exit %d\n%s%s", code, out, errOut)
	}

	// Another archive's signature on this one: refused even when unsigned
	// archives are allowed; the installed capsule stays as it was.
	before, _ := os.ReadFile(filepath.Join(installed, originFile))
	other := notesSource(t, "notes", "# changed")
	otherSigned := filepath.Join(tmp, "other.capsule")
	packCLI(t, other, otherSigned)
	runAstrid(t, "", "capsule", "sign", otherSigned)
	forged := forgeSignature(t, b1, otherSigned)
	if _, errOut, code := runAstrid(t, "", "capsule", "install", forged, "--yes", "--allow-unsigned"); code != 1 || !strings.Contains(errOut, "bad publisher signature") {
		t.Fatalf("forged signature: exit %d: %s", code, errOut)
	}
	// One byte of a file changed after signing: refused.
	tampered := tamperArchive(t, signed, filepath.Join(tmp, "tampered.capsule"))
	if _, errOut, code := runAstrid(t, "", "capsule", "install", tampered, "--yes", "--allow-unsigned"); code != 1 || !strings.Contains(errOut, "digest mismatch") {
		t.Fatalf("tampered archive: exit %d: %s", code, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(installed, originFile))
	if !bytes.Equal(before, after) {
		t.Fatal("a refused install changed the installed capsule")
	}

	// Revoked: the same signed archive is from an unknown publisher now.
	_, errOut, code = runAstrid(t, "", "trust", "remove", "me")
	if code != 0 || !strings.Contains(errOut, "capsule notes was signed by me: its approval is revoked") {
		t.Fatalf("trust remove: exit %d: %s", code, errOut)
	}
	if state, listing := capsuleState(t, ws, "notes"); state != "failed" || !strings.Contains(listing, "never approved") {
		t.Fatalf("after its publisher was removed, notes is %q:\n%s", state, listing)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "install", signed, "--yes"); code != 1 || !strings.Contains(errOut, "unknown publisher") {
		t.Fatalf("install after trust remove: exit %d: %s", code, errOut)
	}
}

// forgeSignature puts the signature.json of the archive at donor onto the
// unsigned archive bytes b.
func forgeSignature(t *testing.T, b []byte, donor string) string {
	t.Helper()
	a, err := capsulepack.Read(bytes.NewReader(b), capsulepack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	db, _ := os.ReadFile(donor)
	d, err := capsulepack.Read(bytes.NewReader(db), capsulepack.Limits{})
	if err != nil || d.Signature == nil {
		t.Fatalf("donor: %v", err)
	}
	out := filepath.Join(t.TempDir(), "forged.capsule")
	if err := os.WriteFile(out, rewriteArchive(t, a.MetaJSON, a.Files, d.Signature), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// tamperArchive rewrites the archive at src with one byte of notes.md
// changed, keeping meta.json and the signature, into dst.
func tamperArchive(t *testing.T, src, dst string) string {
	t.Helper()
	b, _ := os.ReadFile(src)
	a, err := capsulepack.Read(bytes.NewReader(b), capsulepack.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a.Files["notes.md"][0] ^= 1
	if err := os.WriteFile(dst, rewriteArchive(t, a.MetaJSON, a.Files, a.Signature), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// rewriteArchive writes an archive as an attacker would: meta.json, the
// files and signature.json, as given.
func rewriteArchive(t *testing.T, metaJSON []byte, files map[string][]byte, sig []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, b []byte) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	add(capsulepack.MetaFile, metaJSON)
	for name, b := range files {
		add(name, b)
	}
	if sig != nil {
		add(capsulepack.SignatureFile, sig)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
