package mcpserve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the HTTP handler serves MCP.
const Path = "/mcp"

// NewToken returns a fresh bearer token of 256 random bits.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// HTTPHandler serves MCP over streamable HTTP at Path, to requests that
// carry token as a bearer token; others are answered 401. The go-sdk's
// handler refuses a request whose Host is not a loopback name when it
// listens on loopback (DNS rebinding).
func (s *Server) HTTPHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{Logger: s.log})
	mux := http.NewServeMux()
	mux.Handle(Path, requireToken(token, h))
	return mux
}

func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		// The scheme is case-insensitive (RFC 9110 §11.1).
		if len(got) >= 7 && strings.EqualFold(string(got[:7]), "bearer ") {
			copy(got[:7], "Bearer ")
		}
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="astrid mcp serve"`)
			http.Error(w, "astrid mcp serve: a valid bearer token is required (printed once when the server started)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
