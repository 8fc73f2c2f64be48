package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/manifest"
)

// TestLegacyIssuerOnTheServersOrigin: a 2025-03-26 server (no protected
// resource metadata) whose metadata names an issuer with a path on its own
// origin is logged in to; an issuer or an endpoint on another origin is
// still refused (RFC 8414 §3.3's mix-up defence).
func TestLegacyIssuerOnTheServersOrigin(t *testing.T) {
	tests := []struct {
		name          string
		issuer, token string // "" is the server's origin + the path
		want          string // "" for accepted
	}{
		{"issuer with a path on the origin", "/oauth", "/oauth/token", ""},
		{"issuer on another origin", "http://auth.elsewhere.example/oauth", "/oauth/token", "on another origin"},
		{"issuer on another port", "http://127.0.0.1:1/oauth", "/oauth/token", "on another origin"},
		{"token endpoint on another origin", "/oauth", "http://token.elsewhere.example/token", "token_endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			abs := func(s string) string {
				if strings.HasPrefix(s, "/") {
					return srv.URL + s
				}
				return s
			}
			mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
			mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{
					"issuer": abs(tt.issuer), "authorization_endpoint": srv.URL + "/oauth/authorize", "token_endpoint": abs(tt.token),
					"registration_endpoint": srv.URL + "/oauth/register", "code_challenge_methods_supported": []string{"S256"},
					"response_types_supported": []string{"code"},
				})
			})
			hc, err := egress.NewClient(egress.Options{AllowLocal: []string{hostPort(t, srv.URL)}, CheckHost: func(string) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			_, _, asm, err := discoverAuthServer(context.Background(), hc, manifest.MCPServer{ID: "old", Type: manifest.MCPHTTP, URL: srv.URL + "/mcp"})
			if tt.want == "" {
				if err != nil || asm.Issuer != srv.URL+"/oauth" || asm.TokenEndpoint != srv.URL+"/oauth/token" {
					t.Fatalf("discover = %+v, %v", asm, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("discover = %+v, %v; want an error with %q", asm, err, tt.want)
			}
		})
	}
}
