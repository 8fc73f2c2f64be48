package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
)

// BenchmarkInstallFromRegistry is issue 37's goal: a 5 MiB capsule
// installed from a registry on loopback, start to loaded (≤ 1 s): the
// client fetches it, astrid verifies every digest and the signature,
// stages and commits it, and a kernel boots and loads it (capsule list
// says ready). Each iteration installs into a fresh home that trusts the
// publisher.
func BenchmarkInstallFromRegistry(b *testing.B) {
	host, _ := ociRegistry(b)
	src := filepath.Join(b.TempDir(), "big")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 5<<20)
	if _, err := rand.Read(data); err != nil {
		b.Fatal(err)
	}
	toml := "[package]\nname = \"big\"\nversion = \"0.1.0\"\n[[context_file]]\nname = \"data\"\nfile = \"notes.md\"\n"
	// The bulk is a packed file the capsule ships (a context file is
	// capped at 256 KiB).
	for name, body := range map[string][]byte{"Capsule.toml": []byte(toml), "notes.md": []byte("notes"), "data.bin": data} {
		if err := os.WriteFile(filepath.Join(src, name), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Setenv(config.HomeEnv, b.TempDir())
	pubKey, errOut, code := runAstrid(b, "", "key", "generate")
	if code != 0 {
		b.Fatalf("key generate: %s", errOut)
	}
	archive := filepath.Join(b.TempDir(), "big.capsule")
	for _, args := range [][]string{{"capsule", "pack", src, "-o", archive}, {"capsule", "sign", archive}} {
		if _, errOut, code := runAstrid(b, "", args...); code != 0 {
			b.Fatalf("%v: %s", args, errOut)
		}
	}
	fi, _ := os.Stat(archive)
	ref := "oci://" + host + "/bench/big:0.1.0"
	if _, errOut, code := runAstrid(b, "", "capsule", "publish", archive, ref); code != 0 {
		b.Fatalf("publish: %s", errOut)
	}
	ws := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		b.Setenv(config.HomeEnv, b.TempDir())
		if _, errOut, code := runAstrid(b, "", "trust", "add", "bench", strings.TrimSpace(pubKey)); code != 0 {
			b.Fatalf("trust add: %s", errOut)
		}
		b.StartTimer()
		if out, errOut, code := runAstrid(b, "", "capsule", "install", ref, "--yes"); code != 0 {
			b.Fatalf("install: exit %d\n%s%s", code, out, errOut)
		}
		if out, errOut, code := runAstrid(b, "", "capsule", "list", "--workspace", ws); code != 0 || !strings.Contains(out, "big") {
			b.Fatalf("capsule list: exit %d\n%s%s", code, out, errOut)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(fi.Size())/(1<<20), "MiB/archive")
}
