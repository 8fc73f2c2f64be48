// Package oauthtest is an MCP server behind OAuth 2.1 for tests, in one
// loopback HTTP server: protected resource metadata (RFC 9728), an
// authorization server (RFC 8414 metadata, RFC 7591 registration, an
// authorize endpoint that approves at once, a token endpoint checking
// PKCE) and the MCP endpoint at /mcp behind the go-sdk's bearer-token
// middleware. It must not be imported outside tests.
package oauthtest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
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
	// CallScopes, when set, are the scopes a tools/call needs: a token
	// without them is answered 403 insufficient_scope naming them (or
	// naming Challenge, when set: an attack on the client's parser).
	CallScopes []string
	Challenge  string
	// Scopes is the scope parameter of each authorization request.
	Scopes []string
	// ClientID with ClientSecret (client_secret_basic) or ClientKey
	// (private_key_jwt, ES256, aud the issuer) is a client the token
	// endpoint gives tokens to with the client credentials grant.
	ClientID, ClientSecret string
	ClientKey              *ecdsa.PublicKey
	// TokenEndpoint, when set, is the token endpoint the metadata names.
	TokenEndpoint string
	// CIMD, when set, is the one Client ID Metadata Document URL the
	// authorization server takes as a client id (and it says it takes
	// such documents); Registrations counts dynamic registrations.
	CIMD          string
	Registrations int
	// JAG, when set, is the identity assertion grant the token endpoint
	// takes (RFC 7523 JWT bearer, the client as ClientID/ClientSecret).
	JAG string

	mu        sync.Mutex
	n         int
	redirects map[string]string    // client id → its redirect URI
	codes     map[string][2]string // code → {PKCE challenge, client id}
	granted   map[string]string    // code, then access token → its scope
	tokens    map[string]bool      // access tokens issued
	refreshes map[string]bool      // refresh tokens issued
	Calls     int                  // token endpoint calls
}

// New serves the fake with tools on loopback until the test ends.
func New(t *testing.T, tools func() *mcp.Server) *Server {
	t.Helper()
	s := &Server{redirects: map[string]string{}, codes: map[string][2]string{}, granted: map[string]string{}, tokens: map[string]bool{}, refreshes: map[string]bool{}}
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
		grants := []string{"authorization_code", "refresh_token"}
		if s.ClientID != "" {
			grants = append(grants, "client_credentials")
		}
		if s.JAG != "" {
			grants = append(grants, "urn:ietf:params:oauth:grant-type:jwt-bearer")
		}
		tokenURL := s.URL + "/token"
		if s.TokenEndpoint != "" {
			tokenURL = s.TokenEndpoint
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"client_id_metadata_document_supported": s.CIMD != "",
			"issuer":                                issuer, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": tokenURL,
			"registration_endpoint": s.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "grant_types_supported": grants,
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
		s.Registrations++
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
		if s.CIMD != "" && q.Get("client_id") == s.CIMD && strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
			redirect, ok = q.Get("redirect_uri"), true // the document's loopback redirect, any port (RFC 8252)
		}
		if !ok || redirect != q.Get("redirect_uri") || q.Get("code_challenge_method") != "S256" || q.Get("resource") != s.URL+"/mcp" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		s.n++
		code := fmt.Sprintf("code-%d", s.n)
		s.codes[code] = [2]string{q.Get("code_challenge"), q.Get("client_id")}
		s.granted[code] = q.Get("scope")
		s.Scopes = append(s.Scopes, q.Get("scope"))
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
		case "client_credentials":
			if !s.clientOK(r) {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "unknown client"})
				return
			}
			s.granted[""] = r.Form.Get("scope")
		case "urn:ietf:params:oauth:grant-type:jwt-bearer":
			if id, sec, ok := r.BasicAuth(); !ok || id != s.ClientID || sec != s.ClientSecret || s.JAG == "" || r.Form.Get("assertion") != s.JAG {
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
		scope := s.granted[r.Form.Get("code")]
		if r.Form.Get("grant_type") == "client_credentials" {
			scope = s.granted[""]
		}
		if rt := r.Form.Get("refresh_token"); rt != "" {
			scope = s.granted[rt]
		}
		s.n++
		at, rt := fmt.Sprintf("access-%d", s.n), fmt.Sprintf("refresh-%d", s.n)
		s.granted[at], s.granted[rt] = scope, scope
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
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: s.URL + "/.well-known/oauth-protected-resource/mcp"})(s.stepUp(mcpH)))
	return s
}

// clientOK checks a client credentials request's client: its secret in
// the Basic header, or its signed assertion.
func (s *Server) clientOK(r *http.Request) bool {
	if s.ClientID == "" {
		return false
	}
	if id, sec, ok := r.BasicAuth(); ok {
		return s.ClientSecret != "" && id == s.ClientID && sec == s.ClientSecret
	}
	if s.ClientKey == nil || r.Form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return false
	}
	parts := strings.Split(r.Form.Get("client_assertion"), ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(s.ClientKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		Iss, Sub, Aud string
		Exp           int64
	}
	return json.Unmarshal(body, &c) == nil && c.Iss == s.ClientID && c.Sub == s.ClientID && c.Aud == s.URL && c.Exp > time.Now().Unix()
}

// stepUp answers a tools/call whose token lacks CallScopes with 403
// insufficient_scope.
func (s *Server) stepUp(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		need, challenge := s.CallScopes, s.Challenge
		have := strings.Fields(s.granted[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")])
		s.mu.Unlock()
		if len(need) == 0 || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "tools/call" && !subset(need, have) {
			if challenge == "" {
				challenge = strings.Join(need, " ")
			}
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s"`, challenge, s.URL+"/.well-known/oauth-protected-resource/mcp"))
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func subset(need, have []string) bool {
	for _, n := range need {
		if !slices.Contains(have, n) {
			return false
		}
	}
	return true
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
