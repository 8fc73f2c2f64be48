package capsuleoci

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// bearerAuth wraps a registry behind the distribution token flow: a
// request without the token is challenged to the realm, which hands the
// token out only for user:pass and only with the scope asked.
// It returns the wrapper, the token server's host and the count of tokens
// issued.
func bearerAuth(t *testing.T, user, pass string) (func(http.Handler) http.Handler, string, *atomic.Int32) {
	var issued atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost { // OAuth2 refresh-token grant: pass is the identity token
			if r.PostFormValue("grant_type") != "refresh_token" || r.PostFormValue("refresh_token") != pass || r.PostFormValue("client_id") != "astrid" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			issued.Add(1)
			_, _ = w.Write([]byte(`{"access_token":"tok-` + strings.Join(strings.Fields(r.PostFormValue("scope")), "_") + `"}`))
			return
		}
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("service") != "test-registry" || r.URL.Query().Get("scope") == "" {
			http.Error(w, "bad service or scope", http.StatusBadRequest)
			return
		}
		issued.Add(1)
		_, _ = w.Write([]byte(`{"token":"tok-` + strings.Join(r.URL.Query()["scope"], "_") + `"}`))
	}))
	t.Cleanup(tokens.Close)
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scope := "registry:catalog:*"
			p := strings.TrimPrefix(r.URL.Path, "/v2/")
			if i := max(strings.Index(p, "/blobs/"), strings.Index(p, "/manifests/")); i > 0 {
				repo := p[:i]
				scope = "repository:" + repo + ":pull"
				if r.Method != http.MethodGet && r.Method != http.MethodHead {
					scope = "repository:" + repo + ":pull,push"
				}
			}
			if !tokenCovers(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tok-"), scope) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="`+tokens.URL+`/token",service="test-registry",scope="`+scope+`"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	return wrap, strings.TrimPrefix(tokens.URL, "http://"), &issued
}

// tokenCovers reports whether a token granting the scopes in granted
// ("_"-joined, as the test token server names them) covers want: the same
// resource with every action want names.
func tokenCovers(granted, want string) bool {
	wres, wacts, _ := strings.Cut(want[strings.Index(want, ":")+1:], ":")
	wres = want[:strings.Index(want, ":")+1] + wres
	for _, g := range strings.Split(granted, "_") {
		i := strings.Index(g, ":")
		if i < 0 {
			continue
		}
		gres, gacts, _ := strings.Cut(g[i+1:], ":")
		if g[:i+1]+gres != wres {
			continue
		}
		all := true
		for _, a := range strings.Split(wacts, ",") {
			if !slices.Contains(strings.Split(gacts, ","), a) && gacts != "*" {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

// The distribution token flow through oras-go's auth client: refused
// without or with a wrong credential (ErrUnauthorized), a pull token asked
// for once and reused.
func TestBearerTokenFlow(t *testing.T) {
	ctx := context.Background()
	wrap, tokens, issued := bearerAuth(t, "ada", "pw")
	host := testRegistry(t, wrap)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ref := mustRef(t, "oci://"+host+"/ns/x:1")
	if _, err := client(t, host, nil, tokens).Push(ctx, ref, []byte("a"), nil); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("anonymous push: %v, want ErrUnauthorized", err)
	}
	sealed := memSealed{}
	if err := PutSealed(sealed, host, Credential{Username: "ada", Password: "wrong"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, host, Credentials(sealed), tokens).Push(ctx, ref, []byte("a"), nil); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("push with a wrong password: %v, want ErrUnauthorized", err)
	}
	if err := PutSealed(sealed, host, Credential{Username: "ada", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	c := client(t, host, Credentials(sealed), tokens)
	archive := randomArchive(t, 10<<10)
	if _, err := c.Push(ctx, ref, archive, nil); err != nil {
		t.Fatalf("push with the credential: %v", err)
	}
	// A fresh client (as a new command is): the pull token is asked for
	// once and reused by all three fetches' requests.
	c = client(t, host, Credentials(sealed), tokens)
	before := issued.Load()
	for range 3 {
		if got, err := c.Fetch(ctx, ref, 1<<20); err != nil || string(got.Archive) != string(archive) {
			t.Fatalf("fetch: %v", err)
		}
	}
	if n := issued.Load() - before; n != 1 {
		t.Fatalf("%d tokens issued for three fetches, want 1", n)
	}
}

// An identity token (docker's identitytoken, or a credential helper's
// "<token>" user) is exchanged for bearer tokens by the OAuth2 refresh
// grant, as client "astrid"; a wrong one is refused.
func TestIdentityTokenFlow(t *testing.T) {
	ctx := context.Background()
	wrap, tokens, issued := bearerAuth(t, "", "idt-1")
	host := testRegistry(t, wrap)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ref := mustRef(t, "oci://"+host+"/ns/x:1")
	sealed := memSealed{}
	if err := PutSealed(sealed, host, Credential{RefreshToken: "idt-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, host, Credentials(sealed), tokens).Push(ctx, ref, []byte("a"), nil); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("push with a wrong identity token: %v, want ErrUnauthorized", err)
	}
	if err := PutSealed(sealed, host, Credential{RefreshToken: "idt-1"}); err != nil {
		t.Fatal(err)
	}
	c := client(t, host, Credentials(sealed), tokens)
	if _, err := c.Push(ctx, ref, []byte("a"), nil); err != nil {
		t.Fatalf("push with the identity token: %v", err)
	}
	if got, err := c.Fetch(ctx, ref, 10); err != nil || string(got.Archive) != "a" {
		t.Fatalf("fetch with the identity token: %v", err)
	}
	if issued.Load() == 0 {
		t.Fatal("no token was issued")
	}
}

func TestLogin(t *testing.T) {
	ctx := context.Background()
	bearer, tokens, _ := bearerAuth(t, "ada", "pw")
	for name, wrap := range map[string]func(http.Handler) http.Handler{
		"basic":  basicAuth("ada", "pw"),
		"bearer": bearer,
	} {
		t.Run(name, func(t *testing.T) {
			host := testRegistry(t, wrap)
			c := client(t, host, nil, tokens)
			sealed := memSealed{}
			if err := c.Login(ctx, host, Credential{Username: "ada", Password: "nope"}, sealed); err == nil || len(sealed) != 0 {
				t.Fatalf("a wrong password: %v, %d kept", err, len(sealed))
			}
			if err := c.Login(ctx, host, Credential{Username: "ada", Password: "pw"}, sealed); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := sealedCredential(sealed, host); err != nil || !ok || got.Password != "pw" {
				t.Fatalf("kept %+v %v %v", got, ok, err)
			}
		})
	}
	if err := client(t, "127.0.0.1:1", nil).Login(ctx, "bad host/x", Credential{}, memSealed{}); err == nil {
		t.Fatal("a login to a path was accepted")
	}
}

// The docker config the person already has, read by oras-go's
// credentials store as docker reads it: auths (base64 user:pass, or
// username/password fields, a key with scheme and path matching its host)
// when no credsStore is set; credHelpers per host and credsStore for the
// rest, run as docker-credential-<name> get. The sealed store comes first.
func TestDockerConfigCredentials(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	bin := t.TempDir()
	helper := "#!/bin/sh\nread host\ncase \"$host\" in\n  helped.io) echo '{\"Username\":\"hu\",\"Secret\":\"hs\"}' ;;\n  token.io) echo '{\"Username\":\"<token>\",\"Secret\":\"idt\"}' ;;\n  stored.io) echo '{\"Username\":\"su\",\"Secret\":\"ss\"}' ;;\n  *) echo 'credentials not found in native keychain'; exit 1 ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-astridtest"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	write := func(cfg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sealed := memSealed{}
	if err := PutSealed(sealed, "plain.io", Credential{Username: "sealed", Password: "first"}); err != nil {
		t.Fatal(err)
	}
	check := func(find CredentialFunc, want map[string]Credential) {
		t.Helper()
		for host, w := range want {
			if got, err := find(ctx, host); err != nil || got != w {
				t.Errorf("%s: %+v, %v; want %+v", host, got, err, w)
			}
		}
	}
	write(`{"auths":{"https://plain.io/v1/":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("pu:pp")) + `"},"fields.io":{"username":"fu","password":"fp"},"idt.io":{"identitytoken":"it"},"rt.io":{"registrytoken":"bearer-t"}}}`)
	check(Credentials(sealed), map[string]Credential{
		"plain.io":   {Username: "sealed", Password: "first"},
		"fields.io":  {Username: "fu", Password: "fp"},
		"idt.io":     {RefreshToken: "it"},
		"rt.io":      {AccessToken: "bearer-t"},
		"unknown.io": {},
	})
	delete(sealed, "plain.io")
	check(Credentials(sealed), map[string]Credential{"plain.io": {Username: "pu", Password: "pp"}})

	write(`{"credHelpers":{"helped.io":"astridtest","token.io":"astridtest"},"credsStore":"astridtest"}`)
	check(Credentials(sealed), map[string]Credential{
		"helped.io":  {Username: "hu", Password: "hs"},
		"token.io":   {RefreshToken: "idt"},
		"stored.io":  {Username: "su", Password: "ss"},
		"unknown.io": {},
	})
	check(Credentials(nil), map[string]Credential{"helped.io": {Username: "hu", Password: "hs"}})

	write(`{"auths":{"bad.io":{"auth":"not base64!"}}}`)
	if _, err := Credentials(sealed)(ctx, "bad.io"); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("a broken auth entry: %v, want an error naming the file", err)
	}
	write(`{not json`)
	check(Credentials(sealed), map[string]Credential{"plain.io": {}})
}

func FuzzParseRef(f *testing.F) {
	f.Add("oci://localhost:5000/ns/hello:1.0")
	f.Add("oci://[::1]:5000/x@sha256:" + strings.Repeat("a", 64))
	f.Add("oci://r.io/a__b/c-d.e:v1@sha256:" + strings.Repeat("b", 64))
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		// What is accepted writes back to itself and parses the same.
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, r, r.String(), again, err)
		}
		// Nothing that would change the URL the client builds.
		if strings.ContainsAny(r.Registry+r.Tag, "/?#@% \\") || strings.ContainsAny(r.Repository, "?#@%: \\") || strings.Contains(r.Repository, "..") {
			t.Fatalf("%q: a path, query or escape character where none belongs: %+v", s, r)
		}
	})
}

// A registry's challenge cannot send the credential, or the client, where
// the egress guard would not let the registry itself go: a token realm on
// another loopback port, the metadata address, a private address, or a
// scheme that is not http(s).
func TestTokenRealmEscapes(t *testing.T) {
	ctx := context.Background()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the token server on another loopback port was reached: %s", r.URL)
		_, _ = w.Write([]byte(`{"token":"stolen"}`))
	}))
	defer other.Close()
	for name, realm := range map[string]string{
		"another loopback port": other.URL + "/token",
		"metadata":              "http://169.254.169.254/latest/meta-data/",
		"private":               "http://10.0.0.1/token",
		"ipv6 loopback":         "http://[::1]:1/token",
		"file":                  "file:///etc/passwd",
		"no host":               "http:///token",
	} {
		t.Run(name, func(t *testing.T) {
			host := testRegistry(t, func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Authorization") == "" {
						w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`",service="s",scope="repository:x:pull"`)
						w.WriteHeader(http.StatusUnauthorized)
						return
					}
					t.Errorf("the registry got a request with %q", r.Header.Get("Authorization"))
					next.ServeHTTP(w, r)
				})
			})
			sealed := memSealed{}
			if err := PutSealed(sealed, host, Credential{Username: "ada", Password: "secret"}); err != nil {
				t.Fatal(err)
			}
			_, err := client(t, host, Credentials(sealed)).Fetch(ctx, mustRef(t, "oci://"+host+"/x:1"), 1<<20)
			// oras-go refuses a realm of another scheme or in a blocked
			// prefix (metadata, loopback, private); the egress client
			// refuses the rest (another loopback port, no host).
			if err == nil || !strings.Contains(err.Error(), "forbidden") && !strings.Contains(err.Error(), "blocked prefix") &&
				!strings.Contains(err.Error(), "unsupported scheme") && !strings.Contains(err.Error(), "empty host") {
				t.Fatalf("realm %s: %v, want it refused", realm, err)
			}
		})
	}
}
