package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/astrid-go/astrid/internal/config"
)

// ociRegistry serves go-containerregistry's registry on loopback, its
// blobs on disk in the returned directory (<dir>/sha256/<hex>), so a test
// can tamper with what the registry stores.
func ociRegistry(t testing.TB) (host, blobs string) {
	t.Helper()
	srv, blobs := ociRegistryServer(t)
	return strings.TrimPrefix(srv.URL, "http://"), blobs
}

// ociRegistryServer is ociRegistry's server, for a test that stops it.
func ociRegistryServer(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	blobs := t.TempDir()
	srv := httptest.NewServer(registry.New(
		registry.Logger(log.New(io.Discard, "", 0)),
		registry.WithBlobHandler(rawDiskBlobs{registry.NewDiskBlobHandler(blobs), blobs}),
	))
	t.Cleanup(srv.Close)
	return srv, blobs
}

// rawDiskBlobs is the registry's disk store without its own digest check
// on Stat: it serves what is on disk, as a careless or compromised
// registry would.
type rawDiskBlobs struct {
	registry.BlobHandler
	dir string
}

func (b rawDiskBlobs) Stat(_ context.Context, _ string, h v1.Hash) (int64, error) {
	fi, err := os.Stat(filepath.Join(b.dir, h.Algorithm, h.Hex))
	if err != nil {
		return 0, registry.ErrNotFound
	}
	return fi.Size(), nil
}

func (b rawDiskBlobs) Put(ctx context.Context, repo string, h v1.Hash, rc io.ReadCloser) error {
	return b.BlobHandler.(registry.BlobPutHandler).Put(ctx, repo, h, rc)
}

// buildHello copies examples/hello into its own module and builds it.
func buildHello(t *testing.T) string {
	t.Helper()
	hello := filepath.Join("..", "..", "examples", "hello")
	src := filepath.Join(t.TempDir(), "hello")
	files := map[string]string{
		"go.mod":       "module example.com/hello\n\ngo 1.26\n\nrequire github.com/astrid-go/astrid v0.0.0\n",
		"hello.go":     readFile(t, filepath.Join(hello, "hello.go")),
		"Capsule.toml": readFile(t, filepath.Join(hello, "Capsule.toml")),
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, errOut, code := runAstrid(t, "", "capsule", "build", src); code != 0 {
		t.Fatalf("capsule build: exit %d\n%s%s", code, out, errOut)
	}
	return src
}

// Issue 37's Show: pack and sign examples/hello, publish it to a local
// registry, install it from there into a fresh home, call greet; then one
// byte of the registry's blob changes and the install refuses.
func TestCapsuleFromRegistryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	host, blobs := ociRegistry(t)
	src := buildHello(t)
	tmp := t.TempDir()

	// The publisher's home.
	t.Setenv(config.HomeEnv, t.TempDir())
	pubKey, errOut, code := runAstrid(t, "", "key", "generate")
	if code != 0 {
		t.Fatalf("key generate: exit %d: %s", code, errOut)
	}
	archive := packCLI(t, src, filepath.Join(tmp, "hello.capsule"))
	if _, errOut, code := runAstrid(t, "", "capsule", "sign", archive); code != 0 {
		t.Fatalf("capsule sign: exit %d: %s", code, errOut)
	}
	tag := "oci://" + host + "/astrid/hello:0.1.0"
	pinned, errOut, code := runAstrid(t, "", "capsule", "publish", archive, tag)
	pinned = strings.TrimSpace(pinned)
	if code != 0 || !strings.HasPrefix(pinned, tag+"@sha256:") {
		t.Fatalf("capsule publish: exit %d: %q %s", code, pinned, errOut)
	}

	// A fresh home that trusts the publisher installs by tag and calls greet.
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	ws := t.TempDir()
	if _, errOut, code := runAstrid(t, "", "trust", "add", "hello-dev", strings.TrimSpace(pubKey)); code != 0 {
		t.Fatalf("trust add: exit %d: %s", code, errOut)
	}
	out, errOut, code := runAstrid(t, "", "capsule", "install", tag, "--yes")
	if code != 0 || !strings.Contains(errOut, "signed by hello-dev") {
		t.Fatalf("install %s: exit %d\n%s%s", tag, code, out, errOut)
	}
	// The first call compiles the wasm module: under the race detector on
	// a loaded machine that took past tool call's default 60 s.
	out, errOut, code = runAstrid(t, "", "tool", "call", "greet", `{"name":"Ada"}`, "--workspace", ws, "--timeout", "10m")
	if code != 0 || strings.TrimSpace(out) != "Hello, Ada!" {
		t.Fatalf("tool call greet: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	out, _, _ = runAstrid(t, "", "capsule", "list", "--workspace", ws)
	if !strings.Contains(out, tag+" sha256:") {
		t.Errorf("capsule list does not show the registry source and digest %s:\n%s", tag, out)
	}

	// By digest into another fresh home, then with one byte of the stored
	// blob changed: refused, nothing installed.
	home2 := t.TempDir()
	t.Setenv(config.HomeEnv, home2)
	runAstrid(t, "", "trust", "add", "hello-dev", strings.TrimSpace(pubKey))
	if out, errOut, code := runAstrid(t, "", "capsule", "install", pinned, "--yes"); code != 0 {
		t.Fatalf("install by digest: exit %d\n%s%s", code, out, errOut)
	}
	tampered := 0
	err := filepath.WalkDir(blobs, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 1000 { // the archive, not the manifest or config
			return err
		}
		b[len(b)/2] ^= 1
		tampered++
		return os.WriteFile(p, b, 0o600)
	})
	if err != nil || tampered != 1 {
		t.Fatalf("tamper: %v (%d blobs changed)", err, tampered)
	}
	home3 := t.TempDir()
	t.Setenv(config.HomeEnv, home3)
	runAstrid(t, "", "trust", "add", "hello-dev", strings.TrimSpace(pubKey))
	_, errOut, code = runAstrid(t, "", "capsule", "install", tag, "--yes", "--allow-unsigned")
	if code != 1 || !strings.Contains(errOut, "mismatch") {
		t.Fatalf("install of a tampered blob: exit %d: %s", code, errOut)
	}
	if entries, _ := os.ReadDir(filepath.Join(home3, "capsules")); len(entries) > 1 {
		t.Fatalf("a refused install left %v in capsules/", entries)
	}
	if _, err := os.Stat(filepath.Join(home3, "capsules", "hello")); !os.IsNotExist(err) {
		t.Fatalf("tampered capsule installed: %v", err)
	}
}

// install https://… goes through the egress guard: the named loopback
// server is reached, a redirect to another loopback port is refused.
func TestCapsuleInstallFromURL(t *testing.T) {
	t.Setenv(config.HomeEnv, t.TempDir())
	archive := packCLI(t, notesSource(t, "notes"), filepath.Join(t.TempDir(), "notes.capsule"))
	body, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect.capsule" {
			http.Redirect(w, r, other.URL+"/notes.capsule", http.StatusFound)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	if out, errOut, code := runAstrid(t, "", "capsule", "install", srv.URL+"/notes.capsule", "--yes", "--allow-unsigned"); code != 0 {
		t.Fatalf("install from a URL: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code := runAstrid(t, "", "capsule", "install", srv.URL+"/redirect.capsule", "--yes", "--allow-unsigned")
	if code != 1 || !strings.Contains(errOut, "forbidden") {
		t.Fatalf("a redirect to another loopback port: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "install", "http://example.invalid/x.capsule", "--yes"); code != 1 || !strings.Contains(errOut, "use https") {
		t.Fatalf("plain http to another machine: exit %d: %s", code, errOut)
	}
}

// registry login checks the credential against the registry and seals
// it; publish and install then use it; a wrong password is refused and
// stores nothing.
func TestRegistryLogin(t *testing.T) {
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ada" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv(config.HomeEnv, t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credential from the person's docker config
	archive := packCLI(t, notesSource(t, "notes"), filepath.Join(t.TempDir(), "notes.capsule"))
	ref := "oci://" + host + "/astrid/notes:0.1.0"
	if _, errOut, code := runAstrid(t, "", "capsule", "publish", archive, ref); code != 1 || !strings.Contains(errOut, "credential") {
		t.Fatalf("publish without a login: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "ada\n", "registry", "login", host, "-u", "ada"); code != 1 || !strings.Contains(errOut, "--password-stdin") {
		t.Fatalf("login without --password-stdin: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "wrong\n", "registry", "login", host, "-u", "ada", "--password-stdin"); code != 1 {
		t.Fatalf("login with a wrong password: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "s3cret\n", "registry", "login", host, "-u", "ada", "--password-stdin"); code != 0 || !strings.Contains(errOut, "logged in") {
		t.Fatalf("login: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "publish", archive, ref); code != 0 {
		t.Fatalf("publish after login: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "install", ref, "--yes", "--allow-unsigned"); code != 0 {
		t.Fatalf("install after login: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "registry", "logout", host); code != 0 {
		t.Fatalf("logout: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "publish", archive, ref); code != 1 {
		t.Fatalf("publish after logout: exit %d: %s", code, errOut)
	}
}
