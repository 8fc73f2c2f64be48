package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// OAuth 2.1 for remote servers that ask for it (DESIGN §12): `astrid mcp
// login` (login.go) runs the authorization code flow with PKCE once,
// interactively, and seals what it got in the store (a Login per server);
// the engine only ever uses that: it sends the access token, refreshes it
// with the refresh token (sealing the new one), and when the server still
// answers 401 it fails the request with LoginRequiredError, which tells the
// person to run the login. It never prompts: a daemon and a headless run
// have nobody to show a browser to.

// TokenStore keeps the sealed OAuth state of one capsule's servers, one
// value per server id (store.Store.MCPTokens satisfies it).
type TokenStore interface {
	Get(server string) ([]byte, bool, error)
	Set(server string, value []byte) error
	Delete(server string) error
}

// Login is what `astrid mcp login` keeps for one server: the client it
// registered (or was given), the authorization server's endpoints, and the
// tokens. It is bound to the server's URL: a manifest that points the
// server elsewhere does not get the token.
type Login struct {
	ServerURL    string        `json:"server_url"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
	At           time.Time     `json:"at"`
}

func (l *Login) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: l.ClientID, ClientSecret: l.ClientSecret, Scopes: l.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: l.AuthURL, TokenURL: l.TokenURL, AuthStyle: oauth2.AuthStyle(l.AuthStyle)},
	}
}

// LoadLogin reads the login of server from tokens; ok is false when there
// is none.
func LoadLogin(tokens TokenStore, server string) (*Login, bool, error) {
	b, ok, err := tokens.Get(server)
	if err != nil || !ok {
		return nil, false, err
	}
	var l Login
	if err := json.Unmarshal(b, &l); err != nil || l.Token == nil {
		return nil, false, fmt.Errorf("the stored login of MCP server %s is unreadable; run `astrid mcp login` again", server)
	}
	return &l, true, nil
}

// SaveLogin seals l as server's login.
func SaveLogin(tokens TokenStore, server string, l *Login) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return tokens.Set(server, b)
}

// LoginRequiredError answers a request the server refused for want of
// authorization.
type LoginRequiredError struct {
	Capsule, Server string
	// Status is the HTTP status the server answered.
	Status int
	// Why says what went wrong beyond the status, when something did (a
	// refresh that failed, a login for another URL).
	Why string
	// Header says the manifest sends its own Authorization header: the
	// server refused that, and a login would not replace it.
	Header bool
}

func (e *LoginRequiredError) Error() string {
	if e.Header {
		return fmt.Sprintf("MCP server %s refused the Authorization header the manifest sends (HTTP %d); check the capsule's [env] value it names (astrid capsule env set %s …)", e.Server, e.Status, e.Capsule)
	}
	msg := fmt.Sprintf("MCP server %s needs authorization (HTTP %d): run `astrid mcp login %s`", e.Server, e.Status, e.Capsule)
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// storedAuth is the engine's auth.OAuthHandler: the stored login's token,
// refreshed and sealed again; no interactive flow.
type storedAuth struct {
	e      *Engine
	client *http.Client // the egress client, for the token endpoint
	header bool         // the manifest sends its own Authorization

	mu    sync.Mutex
	ts    oauth2.TokenSource // nil without a usable login
	why   string             // why there is none, when one is stored
	login *Login
}

func newStoredAuth(e *Engine, egressClient *http.Client, header bool) *storedAuth {
	c := &http.Client{
		Transport: &remoteTransport{base: egressClient.Transport, max: 1 << 20, server: e.srv.ID},
		// The token endpoint's answer must come from the token endpoint.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	return &storedAuth{e: e, client: c, header: header}
}

// load reads the stored login; a missing store or login leaves the
// handler without a token (the server decides whether it needs one).
func (a *storedAuth) load() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ts, a.login, a.why = nil, nil, ""
	tokens := a.e.opts.Tokens
	if tokens == nil {
		return
	}
	l, ok, err := LoadLogin(tokens, a.e.srv.ID)
	switch {
	case err != nil:
		a.why = err.Error()
		a.e.log.Warn("mcp: stored login unreadable", "err", err)
		return
	case !ok:
		return
	case l.ServerURL != a.e.srv.URL:
		a.why = "the stored login is for " + l.ServerURL + ", not " + a.e.remote.shown
		a.e.log.Warn("mcp: the stored login is for another URL; not sending its token", "login_url", l.ServerURL)
		return
	}
	a.login = l
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, a.client)
	// The oauth2 package refreshes with the refresh token once the access
	// token expires, through the egress client.
	a.ts = &savingSource{a: a, inner: l.config().TokenSource(ctx, l.Token), last: l.Token.AccessToken}
}

// TokenSource implements auth.OAuthHandler.
func (a *storedAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ts == nil {
		return nil, nil
	}
	return a.ts, nil
}

// Authorize implements auth.OAuthHandler: a 401 (or a 403 asking for more
// scope) is answered by telling the person to log in.
func (a *storedAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	a.mu.Lock()
	why := a.why
	a.mu.Unlock()
	if resp.StatusCode == http.StatusForbidden && why == "" {
		why = "the server refused the token's scope"
	}
	return &LoginRequiredError{Capsule: a.e.capsuleID, Server: a.e.srv.ID, Status: resp.StatusCode, Why: why, Header: a.header}
}

// savingSource seals every new token it hands out, and words a failed
// refresh for the person.
type savingSource struct {
	a     *storedAuth
	inner oauth2.TokenSource
	mu    sync.Mutex
	last  string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.inner.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			s.a.mu.Lock()
			s.a.why = "the refresh token was refused"
			s.a.mu.Unlock()
			return nil, err // the request goes without a token and gets its 401
		}
		return nil, fmt.Errorf("refreshing the OAuth token of MCP server %s failed: %v; run `astrid mcp login %s` if it keeps failing", s.a.e.srv.ID, err, s.a.e.capsuleID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		s.a.mu.Lock()
		l := *s.a.login
		s.a.mu.Unlock()
		l.Token = tok
		if err := SaveLogin(s.a.e.opts.Tokens, s.a.e.srv.ID, &l); err != nil {
			s.a.e.log.Warn("mcp: the refreshed token was not sealed in the store; the next start refreshes again", "err", err)
		}
	}
	return tok, nil
}
