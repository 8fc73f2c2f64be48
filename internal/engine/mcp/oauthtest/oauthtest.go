// Package oauthtest is an MCP server behind OAuth 2.1 for tests, in one
// loopback HTTP server: protected resource metadata (RFC 9728), an
// authorization server (RFC 8414 metadata, RFC 7591 registration, an
// authorize endpoint that approves at once, a token endpoint checking
// PKCE) and the MCP endpoint at /mcp behind the go-sdk's bearer-token
// middleware. It must not be imported outside tests.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is the fake; set its knobs before the login.
type Server struct {
	URL string // the server's origin; the MCP endpoint is URL + "/mcp"

	// BadIssuer makes the authorization server's metadata claim another
	// issuer than the one it is fetched from.
	BadIssuer bool
	// GarbageTokens makes the token endpoint answer an HTML page.
	GarbageTokens bool

	mu        sync.Mutex
	n         int
	redirects map[string]string    // client id → its redirect URI
	codes     map[string][2]string // code → {PKCE challenge, client id}
	tokens    map[string]bool      // access tokens issued
	refreshes map[string]bool      // refresh tokens issued
	Calls     int                  // token endpoint calls
}

// New serves the fake with tools on loopback until the test ends.
func New(t *testing.T, tools func() *mcp.Server) *Server {
	t.Helper()
	s := &Server{redirects: map[string]string{}, codes: map[string][2]string{}, tokens: map[string]bool{}, refreshes: map[string]bool{}}
	mux := http.NewServeMux()
	h := httptest.NewServer(mux)
	t.Cleanup(h.Close)
	s.URL = h.URL
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		issuer := s.URL
		if s.BadIssuer {
			issuer = "https://auth.elsewhere.example"
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": issuer, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
			"registration_endpoint": s.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || len(req.RedirectURIs) != 1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
		s.mu.Lock()
		s.n++
		id := fmt.Sprintf("client-%d", s.n)
		s.redirects[id] = req.RedirectURIs[0]
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		defer s.mu.Unlock()
		redirect, ok := s.redirects[q.Get("client_id")]
		if !ok || redirect != q.Get("redirect_uri") || q.Get("code_challenge_method") != "S256" || q.Get("resource") != s.URL+"/mcp" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		s.n++
		code := fmt.Sprintf("code-%d", s.n)
		s.codes[code] = [2]string{q.Get("code_challenge"), q.Get("client_id")}
		u, _ := url.Parse(redirect)
		u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.Calls++
		if s.GarbageTokens {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><body>Service unavailable</body></html>")
			return
		}
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			c, ok := s.codes[r.Form.Get("code")]
			delete(s.codes, r.Form.Get("code"))
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || c[1] != r.Form.Get("client_id") || base64.RawURLEncoding.EncodeToString(sum[:]) != c[0] {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
				return
			}
		case "refresh_token":
			if !s.refreshes[r.Form.Get("refresh_token")] {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
				return
			}
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		s.n++
		at, rt := fmt.Sprintf("access-%d", s.n), fmt.Sprintf("refresh-%d", s.n)
		s.tokens[at], s.refreshes[rt] = true, true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt})
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.tokens[tok] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools() }, &mcp.StreamableHTTPOptions{Stateless: true})
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: s.URL + "/.well-known/oauth-protected-resource/mcp"})(mcpH))
	return s
}

// Revoke forgets every access token: the next request needs a refresh.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]bool{}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
