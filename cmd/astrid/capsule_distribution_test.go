package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// distributionRegistry starts the CNCF distribution registry (Debian's
// docker-registry, scripts/install-test-tools.sh) on a loopback port with
// its storage in a temporary directory. Without it a developer's run skips
// the test; scripts/test.sh (CI) fails it (testutil.NeedTestTool).
func distributionRegistry(t *testing.T) (host, storage string) {
	t.Helper()
	bin := testutil.NeedTestTool(t, "docker-registry")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host = ln.Addr().String()
	ln.Close()
	storage = t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.yml")
	conf := "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: " + storage +
		"\nhttp:\n  addr: " + host + "\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", cfg)
	var stderr testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	testutil.WaitFor(t, 30*time.Second, "docker-registry to serve /v2/", func() bool {
		resp, err := http.Get("http://" + host + "/v2/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return host, storage
}

// The end-to-end path against the registry organisations run: publish a
// signed archive, install it by tag in a fresh home, then one byte of the
// stored blob changes and the install refuses.
func TestCapsuleThroughDistributionRegistry(t *testing.T) {
	host, storage := distributionRegistry(t)
	t.Setenv(config.HomeEnv, t.TempDir())
	pubKey, _, code := runAstrid(t, "", "key", "generate")
	if code != 0 {
		t.Fatal("key generate failed")
	}
	archive := packCLI(t, notesSource(t, "notes"), filepath.Join(t.TempDir(), "notes.capsule"))
	if _, errOut, code := runAstrid(t, "", "capsule", "sign", archive); code != 0 {
		t.Fatalf("sign: %s", errOut)
	}
	tag := "oci://" + host + "/astrid/notes:0.1.0"
	if out, errOut, code := runAstrid(t, "", "capsule", "publish", archive, tag); code != 0 || !strings.HasPrefix(out, tag+"@sha256:") {
		t.Fatalf("publish: exit %d: %s%s", code, out, errOut)
	}
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	runAstrid(t, "", "trust", "add", "me", strings.TrimSpace(pubKey))
	if out, errOut, code := runAstrid(t, "", "capsule", "install", tag, "--yes"); code != 0 || !strings.Contains(errOut, "signed by me") {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "capsules", "notes", "notes.md")); err != nil {
		t.Fatal(err)
	}
	// distribution keeps blobs at docker/registry/v2/blobs/sha256/xx/<hex>/data.
	body, _ := os.ReadFile(archive)
	changed := 0
	err := filepath.WalkDir(storage, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) != "data" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != string(body) {
			return err
		}
		b[len(b)/2] ^= 1
		changed++
		return os.WriteFile(p, b, 0o600)
	})
	if err != nil || changed != 1 {
		t.Fatalf("tamper: %v (%d blobs)", err, changed)
	}
	fresh := t.TempDir()
	t.Setenv(config.HomeEnv, fresh)
	_, errOut, code := runAstrid(t, "", "capsule", "install", tag, "--yes", "--allow-unsigned")
	if code != 1 || !strings.Contains(errOut, "mismatch") {
		t.Fatalf("install of a tampered blob: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(fresh, "capsules", "notes")); !os.IsNotExist(err) {
		t.Fatalf("tampered capsule installed: %v", err)
	}
}
