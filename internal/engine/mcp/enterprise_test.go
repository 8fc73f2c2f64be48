package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/astrid-go/astrid/internal/engine/mcp/oauthtest"
	"github.com/astrid-go/astrid/manifest"
)

// fakeIdP is an enterprise IdP: OpenID Connect metadata and a token
// endpoint exchanging the one ID token it knows for an ID-JAG naming
// the audience and resource it is given.
type fakeIdP struct {
	*httptest.Server
	issuer     string // the issuer its metadata claims ("" its URL)
	tokenURL   string // the token endpoint it names ("" its own)
	tokenType  string // the issued_token_type ("" an ID-JAG)
	garbage    bool   // the token endpoint answers HTML
	wantAud    string
	wantRes    string
	exchanges  int
	lastParams url.Values
}

func newFakeIdP(t *testing.T) *fakeIdP {
	t.Helper()
	f := &fakeIdP{}
	mux := http.NewServeMux()
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		iss, tok := f.URL, f.URL+"/token"
		if f.issuer != "" {
			iss = f.issuer
		}
		if f.tokenURL != "" {
			tok = f.tokenURL
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "token_endpoint": tok})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.exchanges++
		f.lastParams = r.PostForm
		if f.garbage {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>down</html>")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		q := r.PostForm
		if q.Get("grant_type") != oauthex.GrantTypeTokenExchange || q.Get("subject_token") != "id-token-ok" || q.Get("audience") != f.wantAud || q.Get("resource") != f.wantRes {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"the ID token expired"}`)
			return
		}
		tt := oauthex.TokenTypeIDJAG
		if f.tokenType != "" {
			tt = f.tokenType
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "jag-1", "issued_token_type": tt, "token_type": "N_A"})
	})
	return f
}

func enterpriseManifest(t *testing.T, u, idp string) *manifest.Manifest {
	t.Helper()
	return grantManifest(t, u, []string{"CRED", "ID_TOKEN"}, fmt.Sprintf(`oauth_client_id = "m2m"
oauth_client_secret = "${secret:CRED}"
oauth_grant = "enterprise"
idp_issuer = %q
idp_client_id = "idp-client"
idp_id_token = "${secret:ID_TOKEN}"
`, idp))
}

// TestEnterpriseGrant: the person's ID token is exchanged at the IdP for
// an ID-JAG naming the server's authorization server and resource, which
// that server takes for a token; the call goes through with no login, and
// neither the ID token nor the secret reaches the logs. Refusals and
// attacks end the load with an error saying what went wrong.
func TestEnterpriseGrant(t *testing.T) {
	tests := []struct {
		name    string
		idToken string
		knob    func(*fakeIdP)
		want    string // "" for a call that goes through
	}{
		{"the whole flow", "id-token-ok", nil, ""},
		{"an expired ID token", "id-token-old", nil, "renew idp_id_token"},
		{"IdP metadata for another issuer", "id-token-ok", func(f *fakeIdP) { f.issuer = "https://idp.elsewhere.example" }, "claims issuer"},
		{"IdP token endpoint on another host", "id-token-ok", func(f *fakeIdP) { f.tokenURL = "http://token.elsewhere.example/token" }, "token.elsewhere.example"},
		{"IdP issues another token type", "id-token-ok", func(f *fakeIdP) { f.tokenType = "urn:ietf:params:oauth:token-type:access_token" }, "not an identity assertion grant"},
		{"IdP answers garbage", "id-token-ok", func(f *fakeIdP) { f.garbage = true }, "IdP's token endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
			fake.ClientID, fake.ClientSecret, fake.JAG = "m2m", "s3cret-value", "jag-1"
			idp := newFakeIdP(t)
			idp.wantAud, idp.wantRes = fake.URL, fake.URL+"/mcp"
			if tt.knob != nil {
				tt.knob(idp)
			}
			u := fake.URL + "/mcp"
			opts := Options{Env: map[string]string{"CRED": "s3cret-value", "ID_TOKEN": tt.idToken}}
			allow := []string{hostPort(t, u), hostPort(t, idp.URL)}
			r, err := newRemoteRig(t, enterpriseManifest(t, u, idp.URL), allow, 0, opts)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				if res := r.roundTrip("rem:echo", "e1", `{"text":"enterprise"}`); res.IsError || res.Content != "enterprise" {
					t.Fatalf("echo = %+v", res)
				}
				if p := idp.lastParams; p.Get("requested_token_type") != oauthex.TokenTypeIDJAG || p.Get("subject_token_type") != oauthex.TokenTypeIDToken || p.Get("client_id") != "idp-client" {
					t.Fatalf("token exchange parameters: %v", p)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("load = %v, want an error with %q", err, tt.want)
			}
			if r != nil {
				for _, secret := range []string{"s3cret-value", tt.idToken, "jag-1"} {
					if strings.Contains(r.logs.String(), secret) || strings.Contains(r.wire.String(), secret) {
						t.Fatalf("%q is in the logs", secret)
					}
				}
			}
			if err != nil && (strings.Contains(err.Error(), tt.idToken) || strings.Contains(err.Error(), "s3cret-value")) {
				t.Fatalf("the error shows a credential: %v", err)
			}
		})
	}
}
