package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/engine/mcp/oauthtest"
)

// memTokens is a TokenStore in memory.
type memTokens struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (t *memTokens) Get(k string) ([]byte, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[k]
	return v, ok, nil
}

func (t *memTokens) Set(k string, v []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string][]byte{}
	}
	t.m[k] = v
	return nil
}

func (t *memTokens) Delete(k string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, k)
	return nil
}

// login runs RunLogin against fake, the browser played by an HTTP client
// that follows the authorization server's redirect to the loopback.
func login(t *testing.T, fake *oauthtest.Server, tokens TokenStore) error {
	t.Helper()
	m := remoteManifest(t, "http", fake.URL+"/mcp", "")
	client, err := egress.NewClient(egress.Options{AllowLocal: []string{hostPort(t, fake.URL)}, CheckHost: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunLogin(context.Background(), LoginConfig{
		Capsule: m.ID(), Server: m.MCPServers[0], Client: client, Tokens: tokens,
		Show: func(u string) error {
			resp, err := http.Get(u)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		},
	})
	return err
}

// TestRemoteOAuth: a server behind OAuth refuses the engine until the
// login, which discovers the authorization server, registers a client and
// gets a token with PKCE; the engine then calls the server with it, and
// refreshes it when the server stops taking it.
func TestRemoteOAuth(t *testing.T) {
	fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
	u := fake.URL + "/mcp"
	tokens := &memTokens{}
	_, err := newRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{Tokens: tokens})
	if err == nil || !strings.Contains(err.Error(), "run `astrid mcp login remote-capsule`") {
		t.Fatalf("load before the login = %v, want to be told to log in", err)
	}
	if err := login(t, fake, tokens); err != nil {
		t.Fatalf("login: %v", err)
	}
	l, ok, err := LoadLogin(tokens, "rem")
	if err != nil || !ok || l.Token.AccessToken == "" || l.Token.RefreshToken == "" || l.ServerURL != u {
		t.Fatalf("stored login = %+v, %v, %v", l, ok, err)
	}
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{Tokens: tokens})
	if res := r.roundTrip("rem:echo", "o1", `{"text":"authorized"}`); res.IsError || res.Content != "authorized" {
		t.Fatalf("echo = %+v", res)
	}
	if strings.Contains(r.logs.String(), l.Token.AccessToken) || strings.Contains(r.wire.String(), l.Token.AccessToken) {
		t.Fatal("the access token is in the logs")
	}

	// The server stops taking the token: a call is told to log in.
	fake.Revoke()
	if res := r.roundTrip("rem:echo", "o2", `{"text":"x"}`); !res.IsError || !strings.Contains(res.Content, "astrid mcp login remote-capsule") {
		t.Fatalf("echo with a revoked token = %+v, want to be told to log in", res)
	}

	// An expired token is refreshed with the refresh token, and the new
	// one sealed.
	if err := login(t, fake, tokens); err != nil {
		t.Fatalf("login again: %v", err)
	}
	l, _, _ = LoadLogin(tokens, "rem")
	l.Token.AccessToken, l.Token.Expiry = "stale", time.Now().Add(-time.Hour)
	if err := SaveLogin(tokens, "rem", l); err != nil {
		t.Fatal(err)
	}
	r = mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{Tokens: tokens})
	if res := r.roundTrip("rem:echo", "o3", `{"text":"refreshed"}`); res.IsError || res.Content != "refreshed" {
		t.Fatalf("echo after expiry = %+v", res)
	}
	if l2, _, _ := LoadLogin(tokens, "rem"); l2.Token.AccessToken == "stale" || l2.Token.AccessToken == l.Token.AccessToken {
		t.Fatalf("the refreshed token was not sealed: %q", l2.Token.AccessToken)
	}
}

// TestLoginRefusesBadAuthorizationServers: an authorization server whose
// metadata names another issuer than the one it was fetched for, and a
// token endpoint that answers garbage, end the login with a clear error
// and store nothing.
func TestLoginRefusesBadAuthorizationServers(t *testing.T) {
	tests := []struct {
		name string
		set  func(*oauthtest.Server)
		want string
	}{
		{"issuer on another host", func(s *oauthtest.Server) { s.BadIssuer = true }, "does not match issuer"},
		{"garbage token", func(s *oauthtest.Server) { s.GarbageTokens = true }, "gave no token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
			tt.set(fake)
			tokens := &memTokens{}
			err := login(t, fake, tokens)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("login = %v, want an error containing %q", err, tt.want)
			}
			if _, ok, _ := tokens.Get("rem"); ok {
				t.Fatal("a failed login stored a token")
			}
		})
	}
}

// TestLoginNotNeeded: a server that answers without a token needs no
// login, and the login says so.
func TestLoginNotNeeded(t *testing.T) {
	_, u := remoteServer(t, streamableTools(t, newBlocking(t)))
	m := remoteManifest(t, "http", u, "")
	client, err := egress.NewClient(egress.Options{AllowLocal: []string{hostPort(t, u)}, CheckHost: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunLogin(context.Background(), LoginConfig{Capsule: m.ID(), Server: m.MCPServers[0], Client: client, Tokens: &memTokens{}, Show: func(string) error { return nil }})
	if !errors.Is(err, ErrNoLoginNeeded) {
		t.Fatalf("login = %v, want ErrNoLoginNeeded", err)
	}
}

func TestResourceCandidates(t *testing.T) {
	for in, want := range map[string][]string{
		"https://h/mcp":          {"https://h/mcp", "https://h"},
		"https://h/a/b/mcp?x=1":  {"https://h/a/b/mcp", "https://h/a/b", "https://h/a", "https://h"},
		"https://h/a/b/c/d/mcp/": {"https://h/a/b/c/d/mcp/", "https://h/a/b/c/d", "https://h/a/b/c", "https://h/a/b"},
		"https://h":              {"https://h"},
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := resourceCandidates(u); !slices.Equal(got, want) {
			t.Errorf("resourceCandidates(%s) = %q, want %q", in, got, want)
		}
	}
}
