package capsuleoci

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/astrid-go/astrid/internal/egress"
)

// testRegistry is go-containerregistry's in-process registry behind an
// optional wrapper (a lying or failing registry), on loopback.
func testRegistry(t testing.TB, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// client reaches host and also (and, through the egress guard, no other
// local address) over plain HTTP.
func client(t testing.TB, host string, cred CredentialFunc, also ...string) *Client {
	t.Helper()
	hc, err := egress.NewClient(egress.Options{
		CheckHost:  func(string) error { return nil },
		AllowLocal: append([]string{host}, also...),
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.CloseIdleConnections)
	return &Client{HTTP: hc, Credential: cred, PlainHTTP: func(string) bool { return true }}
}

func randomArchive(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRef(t testing.TB, s string) Ref {
	t.Helper()
	r, err := ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]Ref{
		"oci://localhost:5000/ns/hello:1.0":                 {Registry: "localhost:5000", Repository: "ns/hello", Tag: "1.0"},
		"oci://ghcr.io/a/b/c:latest":                        {Registry: "ghcr.io", Repository: "a/b/c", Tag: "latest"},
		"oci://r.io/x@sha256:" + strings.Repeat("a", 64):    {Registry: "r.io", Repository: "x", Digest: "sha256:" + strings.Repeat("a", 64)},
		"oci://r.io/x:v1@sha256:" + strings.Repeat("b", 64): {Registry: "r.io", Repository: "x", Tag: "v1", Digest: "sha256:" + strings.Repeat("b", 64)},
		"oci://[::1]:5000/a__b/c-d.e:V_1.0-rc":              {Registry: "[::1]:5000", Repository: "a__b/c-d.e", Tag: "V_1.0-rc"},
	} {
		got, err := ParseRef(in)
		if err != nil || got != want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil && got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, bad := range []string{
		"localhost/x:1", "oci://", "oci://r.io/x", "oci://r.io/X:1", "oci://r.io/x@sha256:zz", "oci://r.io/x:bad tag",
		"oci:///x:1", "oci://r.io/../x:1", "oci://r.io/x/../../y:1", "oci://r.io//x:1", "oci://r.io/x/:1",
		"oci://r.io:/x:1", "oci://r.io:80a/x:1", "oci://user@r.io/x:1", "oci://r.io/x?q=1:1", "oci://r.io/x#f:1",
		"oci://r.io/x:.hidden", "oci://r.io/x:" + strings.Repeat("t", 129), "oci://-r.io/x:1", "oci://r.io/x@sha512:" + strings.Repeat("a", 128),
		"oci://r.io/x@sha256:" + strings.Repeat("A", 64), "oci://r.io/x:1@", "oci://r.io/x_/y:1", "oci://r.io/x___y:1", "oci://r.io/%2e%2e/x:1",
	} {
		if _, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) accepted", bad)
		}
	}
}

func TestPushFetchRoundTrip(t *testing.T) {
	host := testRegistry(t, nil)
	c := client(t, host, nil)
	ctx := context.Background()
	archive := randomArchive(t, 64<<10)
	ref := mustRef(t, "oci://"+host+"/astrid/hello:0.1.0")
	pub, err := c.Push(ctx, ref, archive, map[string]string{"org.opencontainers.image.title": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Push(ctx, ref, archive, map[string]string{"org.opencontainers.image.title": "hello"})
	if err != nil || again.Manifest.Digest != pub.Manifest.Digest {
		t.Fatalf("publishing the same archive twice: %v, digests %s and %s", err, pub.Manifest.Digest, again.Manifest.Digest)
	}
	got, err := c.Fetch(ctx, ref, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Archive, archive) || got.Manifest.Digest != pub.Manifest.Digest {
		t.Fatal("fetched by tag: not what was published")
	}
	byDigest := mustRef(t, "oci://"+host+"/astrid/hello@"+pub.Manifest.Digest)
	if got, err := c.Fetch(ctx, byDigest, 1<<20); err != nil || !bytes.Equal(got.Archive, archive) {
		t.Fatalf("fetched by digest: %v", err)
	}
	if _, err := c.Fetch(ctx, ref, 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("past the size bound: %v", err)
	}
	if _, err := c.Fetch(ctx, mustRef(t, "oci://"+host+"/astrid/hello:nope"), 1<<20); err == nil {
		t.Fatal("an unknown tag was fetched")
	}
	if _, err := c.Push(ctx, byDigest, archive, nil); err == nil {
		t.Fatal("publishing to a digest succeeded")
	}
}

// pushManifest stores an arbitrary manifest (and its blobs) under tag,
// through oras-go's repository.
func pushManifest(t *testing.T, host, repo, tag, mediaType string, m any, blobs ...[]byte) {
	t.Helper()
	r, err := client(t, host, nil).repo(mustRef(t, "oci://"+host+"/"+repo+":"+tag))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, b := range blobs {
		if err := pushIfMissing(ctx, r, DescriptorOf("application/octet-stream", b).oci(), b); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ := json.Marshal(m)
	if err := r.PushReference(ctx, DescriptorOf(mediaType, raw).oci(), bytes.NewReader(raw), tag); err != nil {
		t.Fatal(err)
	}
}

// Bad registries and bad artifacts: each refused with a clear error.
func TestFetchRefusesWhatIsNotTheCapsuleAsked(t *testing.T) {
	ctx := context.Background()
	archive := randomArchive(t, 32<<10)
	other := randomArchive(t, 32<<10)

	t.Run("an image, not a capsule", func(t *testing.T) {
		host := testRegistry(t, nil)
		cfg := []byte("{}")
		layer := []byte("layer")
		pushManifest(t, host, "x", "img", MediaTypeManifest, Manifest{
			SchemaVersion: 2,
			MediaType:     MediaTypeManifest,
			Config:        DescriptorOf("application/vnd.oci.image.config.v1+json", cfg),
			Layers:        []Descriptor{DescriptorOf("application/vnd.oci.image.layer.v1.tar+gzip", layer)},
		}, cfg, layer)
		_, err := client(t, host, nil).Fetch(ctx, mustRef(t, "oci://"+host+"/x:img"), 1<<20)
		if !errors.Is(err, ErrMediaType) {
			t.Fatalf("an image manifest: %v", err)
		}
	})
	t.Run("an index", func(t *testing.T) {
		host := testRegistry(t, nil)
		pushManifest(t, host, "x", "idx", MediaTypeIndex, map[string]any{"schemaVersion": 2, "mediaType": MediaTypeIndex, "manifests": []Descriptor{}})
		_, err := client(t, host, nil).Fetch(ctx, mustRef(t, "oci://"+host+"/x:idx"), 1<<20)
		if err == nil || !strings.Contains(err.Error(), "index") && !errors.Is(err, ErrMediaType) {
			t.Fatalf("an index: %v", err)
		}
	})

	// A registry that answers the tag with another manifest than the one
	// its digest header names, or a digest request with another manifest.
	var swap atomic.Value
	lying := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s, _ := swap.Load().(string); s != "" && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
				rec := httptest.NewRecorder()
				r2 := r.Clone(r.Context())
				r2.URL.Path = r.URL.Path[:strings.LastIndex(r.URL.Path, "/")+1] + s
				next.ServeHTTP(rec, r2)
				for k, v := range rec.Header() {
					if k != "Docker-Content-Digest" {
						w.Header()[k] = v
					}
				}
				// The header keeps naming what was asked.
				orig := httptest.NewRecorder()
				next.ServeHTTP(orig, r)
				w.Header().Set("Docker-Content-Digest", orig.Header().Get("Docker-Content-Digest"))
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes())
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	host := testRegistry(t, lying)
	c := client(t, host, nil)
	good, err := c.Push(ctx, mustRef(t, "oci://"+host+"/x:good"), archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, mustRef(t, "oci://"+host+"/x:evil"), other, map[string]string{"a": "b"}); err != nil {
		t.Fatal(err)
	}
	swap.Store("evil")
	if _, err := c.Fetch(ctx, mustRef(t, "oci://"+host+"/x:good"), 1<<20); err == nil || !strings.Contains(err.Error(), "mismatch") {
		t.Fatalf("tag answered with another manifest: %v", err)
	}
	if _, err := c.Fetch(ctx, mustRef(t, "oci://"+host+"/x@"+good.Manifest.Digest), 1<<20); err == nil {
		t.Fatal("digest answered with another manifest: accepted")
	}
}

// A blob download that fails: a 500, a connection cut mid-body, a
// redirect to another loopback address (the SSRF guard), a tampered blob.
func TestFetchRefusesBrokenDownloads(t *testing.T) {
	ctx := context.Background()
	archive := randomArchive(t, 256<<10)
	var mode atomic.Value
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(archive)
	}))
	defer elsewhere.Close()
	failing := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m, _ := mode.Load().(string)
			if m == "" || r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
				next.ServeHTTP(w, r)
				return
			}
			switch m {
			case "500":
				http.Error(w, "boom", http.StatusInternalServerError)
			case "cut":
				w.Header().Set("Content-Length", "262144")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(archive[:1000])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // the connection is cut mid-body
			case "long": // one byte more than the manifest names, length announced
				w.Header().Set("Content-Length", strconv.Itoa(len(archive)+1))
				_, _ = w.Write(append(archive[:len(archive):len(archive)], 'x'))
			case "long chunked": // the same with no length: read to size+1 and refused
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				_, _ = w.Write(append(archive[:len(archive):len(archive)], 'x'))
			case "redirect":
				http.Redirect(w, r, elsewhere.URL+"/blob", http.StatusTemporaryRedirect)
			case "tamper":
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				b := rec.Body.Bytes()
				b[len(b)/2] ^= 1
				w.WriteHeader(rec.Code)
				_, _ = w.Write(b)
			}
		})
	}
	host := testRegistry(t, failing)
	c := client(t, host, nil)
	ref := mustRef(t, "oci://"+host+"/x:1")
	if _, err := c.Push(ctx, ref, archive, nil); err != nil {
		t.Fatal(err)
	}
	for m, want := range map[string]string{"500": "500", "cut": "unexpected eof", "redirect": "forbidden", "tamper": "mismatch",
		"long": "mismatch", "long chunked": "trailing data"} {
		mode.Store(m)
		_, err := c.Fetch(ctx, ref, 1<<20)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), want) || (m == "tamper" || m == "long chunked") && !errors.Is(err, ErrDigestMismatch) {
			t.Errorf("%s: %v, want an error with %q", m, err, want)
		}
	}
}

// Credentials come from the sealed store (what registry login keeps).
func TestCredentialsReachTheRegistry(t *testing.T) {
	ctx := context.Background()
	host := testRegistry(t, basicAuth("ada", "s3cret"))
	ref := mustRef(t, "oci://"+host+"/x:1")
	if _, err := client(t, host, nil).Push(ctx, ref, []byte("a"), nil); !errors.Is(err, ErrUnauthorized) ||
		!strings.Contains(err.Error(), "no credential found: astrid registry login "+host) {
		t.Fatalf("anonymous push to an authenticated registry: %v, want ErrUnauthorized saying how to log in", err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	sealed := memSealed{}
	if err := PutSealed(sealed, host, Credential{Username: "ada", Password: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	c := client(t, host, Credentials(sealed))
	if _, err := c.Push(ctx, ref, []byte("a"), nil); err != nil {
		t.Fatalf("push with the stored credential: %v", err)
	}
	if got, err := c.Fetch(ctx, ref, 10); err != nil || string(got.Archive) != "a" {
		t.Fatalf("fetch with the stored credential: %v", err)
	}
}

// basicAuth wraps a registry so that it answers only user:pass.
func basicAuth(user, pass string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// memSealed is an in-memory Sealed.
type memSealed map[string][]byte

func (m memSealed) Get(k string) ([]byte, bool, error) { v, ok := m[k]; return v, ok, nil }
func (m memSealed) Set(k string, v []byte) error       { m[k] = v; return nil }
func (m memSealed) Delete(k string) error              { delete(m, k); return nil }

// A distro bundle travels as its own kind; neither kind is taken for the
// other.
func TestArtifactKindsAreNotMistaken(t *testing.T) {
	ctx := context.Background()
	host := testRegistry(t, nil)
	c := client(t, host, nil)
	bundle := randomArchive(t, 8<<10)
	ref := mustRef(t, "oci://"+host+"/d/trio:1.0.0")
	if _, err := c.PushArtifact(ctx, ref, DistroKind, bundle, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := c.FetchArtifact(ctx, ref, DistroKind, 1<<20); err != nil || !bytes.Equal(got.Archive, bundle) {
		t.Fatalf("fetch the distro: %v", err)
	}
	if _, err := c.Fetch(ctx, ref, 1<<20); !errors.Is(err, ErrMediaType) {
		t.Fatalf("a distro fetched as a capsule: %v", err)
	}
	capsule := mustRef(t, "oci://"+host+"/c/hello:0.1.0")
	if _, err := c.Push(ctx, capsule, bundle, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FetchArtifact(ctx, capsule, DistroKind, 1<<20); !errors.Is(err, ErrMediaType) {
		t.Fatalf("a capsule fetched as a distro: %v", err)
	}
}

// A manifest past MaxManifestBytes is refused before it is read: an
// announced length past the bound by capsuleoci (oras-go takes it on a
// GET), an unannounced one by oras-go (it then wants a HEAD's length).
func TestFetchRefusesAnOversizedManifest(t *testing.T) {
	ctx := context.Background()
	for _, announce := range []bool{true, false} {
		host := testRegistry(t, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.URL.Path, "/manifests/") {
					next.ServeHTTP(w, r)
					return
				}
				big := bytes.Repeat([]byte(" "), MaxManifestBytes+1)
				w.Header().Set("Content-Type", MediaTypeManifest)
				w.Header().Set("Docker-Content-Digest", DigestOf(big))
				if announce {
					w.Header().Set("Content-Length", strconv.Itoa(len(big)))
				}
				_, _ = w.Write(big)
			})
		})
		_, err := client(t, host, nil).Fetch(ctx, mustRef(t, "oci://"+host+"/x:1"), 1<<20)
		if err == nil || announce && !errors.Is(err, ErrTooLarge) || !announce && !strings.Contains(err.Error(), "Content-Length") {
			t.Fatalf("announce length %v: a %d-byte manifest: %v", announce, MaxManifestBytes+1, err)
		}
	}
}

// A registry's manifest is untrusted: whatever artifactLayer accepts has
// one layer of the kind's media type with a sha256 digest, and an artifact
// type that is the kind's or none.
func FuzzArtifactLayer(f *testing.F) {
	good, _ := json.Marshal(Manifest{SchemaVersion: 2, MediaType: MediaTypeManifest, ArtifactType: ArtifactType,
		Config: DescriptorOf(MediaTypeEmpty, emptyConfig), Layers: []Descriptor{DescriptorOf(LayerMediaType, []byte("a"))}})
	f.Add(good)
	f.Add([]byte(`{"layers":[{"mediaType":"` + LayerMediaType + `","digest":"sha256:../../etc","size":-1}]}`))
	f.Add([]byte(`{"mediaType":"` + MediaTypeIndex + `","manifests":[]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, kind := range []Kind{CapsuleKind, DistroKind} {
			layer, err := artifactLayer(raw, kind)
			if err != nil {
				if !errors.Is(err, ErrMediaType) {
					t.Fatalf("refused without ErrMediaType: %v", err)
				}
				continue
			}
			var m Manifest
			if json.Unmarshal(raw, &m) != nil || len(m.Layers) != 1 || layer.MediaType != kind.LayerMediaType ||
				!ValidDigest(layer.Digest) || m.ArtifactType != "" && m.ArtifactType != kind.ArtifactType {
				t.Fatalf("accepted %q as %v: %+v", raw, kind, layer)
			}
		}
	})
}
