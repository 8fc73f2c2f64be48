package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/astrid-go/astrid/manifest"
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
	// StepUp is the scopes the next login asks for, set when the server
	// refused a call for want of scope (scope.go); StepUps counts the
	// step-up logins in a row that made this one.
	StepUp  []string `json:"step_up,omitempty"`
	StepUps int      `json:"step_ups,omitempty"`
}

// StepUpPending says the server asked for more scope than this login
// has: `astrid mcp login` would ask for Login.StepUp.
func (l *Login) StepUpPending() bool { return len(l.StepUp) > len(l.Scopes) }

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
	// Scopes, on a 403 insufficient_scope, is what the next login asks
	// for; Hopeless says logging in again would not help.
	Scopes   []string
	Hopeless bool
}

func (e *LoginRequiredError) Error() string {
	if e.Header {
		return fmt.Sprintf("MCP server %s refused the Authorization header the manifest sends (HTTP %d); check the capsule's [env] value it names (astrid capsule env set %s …)", e.Server, e.Status, e.Capsule)
	}
	if e.Hopeless {
		return fmt.Sprintf("MCP server %s refused the call for want of scope (HTTP %d): %s", e.Server, e.Status, e.Why)
	}
	msg := fmt.Sprintf("MCP server %s needs authorization (HTTP %d): run `astrid mcp login %s`", e.Server, e.Status, e.Capsule)
	if len(e.Scopes) > 0 {
		msg = fmt.Sprintf("MCP server %s needs more scope (HTTP %d): run `astrid mcp login %s`, which asks for %q", e.Server, e.Status, e.Capsule, strings.Join(e.Scopes, " "))
	}
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

	// The client credentials grant (clientcred.go), when the manifest
	// asks for it: no login, the engine's own tokens.
	machine    *machineGrant
	machineErr error
	ccScopes   []string // the scopes of the last token granted
}

func newStoredAuth(e *Engine, egressClient *http.Client, header bool) *storedAuth {
	c := &http.Client{
		Transport: &remoteTransport{base: egressClient.Transport, max: 1 << 20, server: e.srv.ID},
		// The token endpoint's answer must come from the token endpoint.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	a := &storedAuth{e: e, client: c, header: header}
	if g := e.srv.OAuthGrant; g == manifest.MCPGrantClientCredentials || g == manifest.MCPGrantEnterprise {
		a.machine, a.machineErr = newMachineGrant(e.srv, e.opts.Env)
	}
	return a
}

// load reads the stored login; a missing store or login leaves the
// handler without a token (the server decides whether it needs one).
func (a *storedAuth) load() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.machine != nil || a.machineErr != nil {
		return // its tokens are the engine's own, kept across sessions
	}
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

// Authorize implements auth.OAuthHandler. A login sealed since this one
// was loaded (`astrid mcp login` while the engine runs) is taken up and the
// request goes again with its token. Else a 401 tells the person to log
// in, and a 403 insufficient_scope records the scopes the next login asks
// for (scope.go) and says so; it never prompts.
func (a *storedAuth) Authorize(ctx context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	if a.machine != nil || a.machineErr != nil {
		return a.clientCredentials(ctx, resp)
	}
	if a.newerLogin() {
		a.load()
		a.mu.Lock()
		ok := a.ts != nil
		a.mu.Unlock()
		if ok {
			return nil
		}
	}
	a.mu.Lock()
	why, l := a.why, a.login
	a.mu.Unlock()
	lr := &LoginRequiredError{Capsule: a.e.capsuleID, Server: a.e.srv.ID, Status: resp.StatusCode, Why: why, Header: a.header}
	if resp.StatusCode != http.StatusForbidden || a.header {
		return lr
	}
	ch, err := parseScopeChallenge(resp.Header)
	switch {
	case err != nil:
		lr.Why, lr.Hopeless = "its scope challenge is unusable: "+err.Error(), true
		a.e.log.Warn("mcp: unusable scope challenge", "server", a.e.srv.ID, "err", err)
		return lr
	case !ch.insufficient || l == nil:
		if why == "" {
			lr.Why = "the server refused the token's scope"
		}
		return lr
	}
	want, err := stepUp(l, ch)
	if err != nil {
		lr.Why, lr.Hopeless = err.Error(), true
		return lr
	}
	up := *l
	up.StepUp = want
	if err := SaveLogin(a.e.opts.Tokens, a.e.srv.ID, &up); err != nil {
		return fmt.Errorf("mcp server %s asks for scope %q; recording it for the next login: %w", a.e.srv.ID, strings.Join(want, " "), err)
	}
	a.mu.Lock()
	if a.login == l {
		a.login = &up
	}
	a.mu.Unlock()
	lr.Scopes = want
	return lr
}

// newerLogin says the store holds a login for this URL other than the one
// loaded: its token differs and it was made later.
func (a *storedAuth) newerLogin() bool {
	tokens := a.e.opts.Tokens
	if tokens == nil {
		return false
	}
	l, ok, err := LoadLogin(tokens, a.e.srv.ID)
	if err != nil || !ok || l.ServerURL != a.e.srv.URL {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.login == nil || (l.At.After(a.login.At) && l.Token.AccessToken != a.login.Token.AccessToken)
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
