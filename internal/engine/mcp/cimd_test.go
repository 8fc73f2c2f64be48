package mcp

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/engine/mcp/oauthtest"
	"github.com/astrid-go/astrid/manifest"
)

// TestClientMetadataDocument: with oauth_client_metadata_url, the login
// uses that URL as its client id where the authorization server takes
// Client ID Metadata Documents, registering nothing, and registers a
// client (RFC 7591) where it does not.
func TestClientMetadataDocument(t *testing.T) {
	const doc = "https://astrid.example/clients/remote-capsule.json"
	for _, cimd := range []bool{true, false} {
		fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
		if cimd {
			fake.CIMD = doc
		}
		u := fake.URL + "/mcp"
		m := remoteManifest(t, "http", u, "")
		srv := m.MCPServers[0]
		srv.OAuthClientMetadataURL = doc
		client, err := egress.NewClient(egress.Options{AllowLocal: []string{hostPort(t, fake.URL)}, CheckHost: func(string) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		tokens := &memTokens{}
		l, err := RunLogin(context.Background(), LoginConfig{Capsule: m.ID(), Server: srv, Client: client, Tokens: tokens,
			Show: func(u string) error {
				resp, err := http.Get(u)
				if err != nil {
					return err
				}
				return resp.Body.Close()
			}})
		if err != nil {
			t.Fatalf("cimd=%v: login: %v", cimd, err)
		}
		if cimd && (l.ClientID != doc || fake.Registrations != 0) {
			t.Fatalf("with CIMD: client id %q, %d registrations", l.ClientID, fake.Registrations)
		}
		if !cimd && (l.ClientID == doc || fake.Registrations != 1) {
			t.Fatalf("without CIMD: client id %q, %d registrations", l.ClientID, fake.Registrations)
		}
		r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{Tokens: tokens})
		if res := r.roundTrip("rem:echo", "d1", `{"text":"doc"}`); res.IsError || res.Content != "doc" {
			t.Fatalf("cimd=%v: echo = %+v", cimd, res)
		}
	}
}

// TestClientMetadataURLRefused: a document URL the authorization server
// would fetch from loopback, a private or metadata address, or without
// TLS is refused (the manifest reports it at its line).
func TestClientMetadataURLRefused(t *testing.T) {
	for _, u := range []string{
		"https://127.0.0.1/c.json", "https://[::1]/c.json", "https://169.254.169.254/latest/c.json",
		"https://[fe80::1]/c.json", "https://192.168.1.2/c.json", "https://0.0.0.0/c.json",
		"https://localhost/c.json", "https://x.localhost./c.json", "http://example.com/c.json",
		"https://u:p@example.com/c.json", "https://example.com/", "https://[::ffff:169.254.169.254]/c.json",
	} {
		if err := manifest.CheckClientMetadataURL(u); err == nil {
			t.Errorf("CheckClientMetadataURL(%q) accepted it", u)
		}
	}
	if err := manifest.CheckClientMetadataURL("https://astrid.example/clients/c.json"); err != nil {
		t.Errorf("a public https URL: %v", err)
	}
}
