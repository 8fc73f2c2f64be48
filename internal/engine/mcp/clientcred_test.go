package mcp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/engine/mcp/oauthtest"
	"github.com/astrid-go/astrid/manifest"
)

// ccManifest is a capsule whose server at u takes the client credentials
// grant, authenticating with keys (oauth_client_secret or _key) named as
// the capsule secret CRED.
func ccManifest(t *testing.T, u, keys string) *manifest.Manifest {
	t.Helper()
	return grantManifest(t, u, []string{"CRED"}, "oauth_client_id = \"m2m\"\noauth_grant = \"client_credentials\"\n"+keys)
}

// grantManifest is a capsule with the secrets named and the server at u
// with the mcp_server keys given.
func grantManifest(t *testing.T, u string, secrets []string, keys string) *manifest.Manifest {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	env := ""
	for _, k := range secrets {
		env += fmt.Sprintf("[env.%s]\ntype = \"secret\"\n\n", k)
	}
	src := fmt.Sprintf(`
[package]
name = "remote-capsule"
version = "0.1.0"
description = "An MCP capsule with its own grant"

[capabilities]
net = [%q]

%s[[mcp_server]]
id = "rem"
type = "http"
url = %q
%s
`, pu.Hostname(), env, u, keys)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", t.TempDir())
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

func pemKey(t *testing.T, k any) string {
	t.Helper()
	b, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}))
}

// TestClientCredentials: a machine-to-machine server is called without
// any login: the engine gets a token with the client's secret (Basic) or
// a signed assertion (ES256), and neither reaches the logs.
func TestClientCredentials(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pemKey(t, key)
	tests := []struct {
		name, keys, cred string
	}{
		{"client_secret_basic", `oauth_client_secret = "${secret:CRED}"`, "s3cret-value"},
		{"private_key_jwt", `oauth_client_key = "${secret:CRED}"`, keyPEM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
			fake.ClientID, fake.ClientSecret, fake.ClientKey = "m2m", "s3cret-value", &key.PublicKey
			u := fake.URL + "/mcp"
			r := mustRemoteRig(t, ccManifest(t, u, tt.keys), []string{hostPort(t, u)}, 0, Options{Env: map[string]string{"CRED": tt.cred}})
			if res := r.roundTrip("rem:echo", "c1", `{"text":"machine"}`); res.IsError || res.Content != "machine" {
				t.Fatalf("echo = %+v", res)
			}
			for _, secret := range []string{"s3cret-value", "PRIVATE KEY", "access-"} {
				if strings.Contains(r.logs.String(), secret) || strings.Contains(r.wire.String(), secret) {
					t.Fatalf("%q is in the logs", secret)
				}
			}
		})
	}
}

// TestClientCredentialsRefused: attacks on, and mistakes in, the grant end
// the load with an error naming what went wrong, never the credentials.
func TestClientCredentialsRefused(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	secret := `oauth_client_secret = "${secret:CRED}"`
	key := `oauth_client_key = "${secret:CRED}"`
	tests := []struct {
		name, keys, cred string
		knob             func(*oauthtest.Server)
		want             string
	}{
		{"token endpoint on another host", secret, "s3cret-value", func(s *oauthtest.Server) { s.TokenEndpoint = "http://token.elsewhere.example/token" }, "token.elsewhere.example"},
		{"token endpoint on the metadata address", secret, "s3cret-value", func(s *oauthtest.Server) { s.TokenEndpoint = "http://169.254.169.254/token" }, "169.254.169.254"},
		{"garbage tokens", secret, "s3cret-value", func(s *oauthtest.Server) { s.GarbageTokens = true }, "gave no token"},
		{"wrong secret", secret, "not-the-secret", nil, "refused the client (invalid_client: unknown client)"},
		{"a key on P-384", key, pemKey(t, p384), nil, "ES256 needs P-256"},
		{"an RSA key of 1024 bits", key, pemKey(t, small), nil, "at least 2048"},
		{"not a key", key, "s3cret-value", nil, "not a PEM private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
			fake.ClientID, fake.ClientSecret = "m2m", "s3cret-value"
			if tt.knob != nil {
				tt.knob(fake)
			}
			u := fake.URL + "/mcp"
			r, err := newRemoteRig(t, ccManifest(t, u, tt.keys), []string{hostPort(t, u)}, 0, Options{Env: map[string]string{"CRED": tt.cred}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("load = %v, want an error with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret-value") || strings.Contains(err.Error(), "astrid mcp login") {
				t.Fatalf("the error shows the secret or asks for a login: %v", err)
			}
			if r != nil && strings.Contains(r.logs.String(), "s3cret-value") {
				t.Fatal("the secret is in the logs")
			}
		})
	}
}
