package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/astrid-go/astrid/manifest"
)

// ErrNoLoginNeeded is returned by RunLogin for a server that answers
// without asking for authorization.
var ErrNoLoginNeeded = errors.New("the server does not ask for authorization")

// ErrEngineGrant is returned by RunLogin for a server whose manifest names
// a grant the engine runs itself (oauth_grant): nobody logs in.
var ErrEngineGrant = errors.New("the engine gets this server's tokens itself; nobody logs in")

// LoginConfig is one interactive `astrid mcp login` for one server.
type LoginConfig struct {
	Capsule string
	Server  manifest.MCPServer
	// Env holds the capsule's [env] values: oauth_client_id and
	// oauth_client_secret name them.
	Env map[string]string
	// Client makes every request of the login (the server, its metadata,
	// the authorization server's metadata, registration and token
	// endpoints): the capsule's egress rules apply to all of them, so
	// that the engine, which refreshes through the same rules, can use
	// what the login got.
	Client *http.Client
	// Tokens receives the login.
	Tokens TokenStore
	// Show hands the authorization URL to the person (printed, and a
	// browser opened when there is one).
	Show func(authURL string) error
	// Listen opens the loopback listener the redirect comes back to;
	// default 127.0.0.1 on a free port.
	Listen func() (net.Listener, error)
}

// RunLogin runs the OAuth 2.1 authorization code flow with PKCE against
// the server's authorization server (RFC 9728 protected resource metadata,
// RFC 8414 authorization server metadata, RFC 7591 registration unless the
// manifest names a client), waits for the browser's redirect to a loopback
// listener, and seals the tokens in c.Tokens. ctx bounds the whole login,
// the person's time in the browser included.
func RunLogin(ctx context.Context, c LoginConfig) (*Login, error) {
	srv := c.Server
	if !srv.Remote() || srv.Type != manifest.MCPHTTP {
		return nil, fmt.Errorf("mcp server %s is type %q: only type = \"http\" servers log in with OAuth", srv.ID, srv.Type)
	}
	if _, ok := headerFold(srv.Headers, "Authorization"); ok {
		return nil, fmt.Errorf("mcp server %s: the manifest sends its own Authorization header; a login would not be used", srv.ID)
	}
	if srv.OAuthGrant == manifest.MCPGrantClientCredentials || srv.OAuthGrant == manifest.MCPGrantEnterprise {
		return nil, fmt.Errorf("mcp server %s uses oauth_grant = %q: %w", srv.ID, srv.OAuthGrant, ErrEngineGrant)
	}
	if c.Listen == nil {
		c.Listen = func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
	}
	hc := &http.Client{
		Transport: &remoteTransport{base: c.Client.Transport, max: 1 << 20, server: srv.ID},
		// Metadata and tokens come from the URL asked, not from wherever
		// it redirects (an open redirect must not pick the token endpoint).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	prm, scopes, asm, err := discoverAuthServer(ctx, hc, srv)
	if err != nil {
		return nil, err
	}
	if asm.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("mcp server %s: authorization server %s names no authorization endpoint", srv.ID, prm.AuthorizationServers[0])
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	// A step-up: the server refused a call for want of scope and the
	// engine recorded what to ask for (scope.go).
	stepUps := 0
	if prev, ok, _ := LoadLogin(c.Tokens, srv.ID); ok && prev.ServerURL == srv.URL && prev.StepUpPending() {
		if scopes, err = unionScopes(prev.StepUp, scopes); err != nil {
			return nil, fmt.Errorf("mcp server %s: %w", srv.ID, err)
		}
		stepUps = prev.StepUps + 1
	}

	ln, err := c.Listen()
	if err != nil {
		return nil, fmt.Errorf("mcp login: loopback listener for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + "/callback"

	l := &Login{ServerURL: srv.URL, AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, Scopes: scopes, StepUps: stepUps}
	if err := client(ctx, hc, c, asm, redirect, l); err != nil {
		return nil, err
	}
	// Stated, not auto-detected: detection retries a refused exchange the
	// other way, and an authorization code is good for one try.
	l.AuthStyle = int(oauth2.AuthStyleInHeader) // client_secret_basic, RFC 6749's default
	methods := asm.TokenEndpointAuthMethodsSupported
	if l.ClientSecret == "" || (slices.Contains(methods, "client_secret_post") && !slices.Contains(methods, "client_secret_basic")) {
		// A public client sends its id; a server that takes the secret
		// only in the body (RFC 8414's list) gets it there.
		l.AuthStyle = int(oauth2.AuthStyleInParams)
	}
	cfg := l.config()
	cfg.RedirectURL = redirect
	state, err := randomString()
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()
	// RFC 8707: the token is for this server and no other. A 2025-03-26
	// server published no resource to name.
	var resource []oauth2.AuthCodeOption
	if prm.Resource != "" {
		resource = append(resource, oauth2.SetAuthURLParam("resource", prm.Resource))
	}
	authURL := cfg.AuthCodeURL(state, append(resource, oauth2.S256ChallengeOption(verifier))...)

	codes := make(chan callback, 1)
	hs := &http.Server{Handler: callbackHandler(state, codes), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	if err := c.Show(authURL); err != nil {
		return nil, err
	}
	var cb callback
	select {
	case cb = <-codes:
	case <-ctx.Done():
		return nil, fmt.Errorf("mcp login: no answer from the browser: %w", context.Cause(ctx))
	}
	if cb.err != nil {
		return nil, fmt.Errorf("mcp server %s: authorization refused: %w", srv.ID, cb.err)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), cb.code, append(resource, oauth2.VerifierOption(verifier))...)
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: the token endpoint %s gave no token: %w", srv.ID, asm.TokenEndpoint, err)
	}
	if tok.AccessToken == "" || (tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer")) {
		return nil, fmt.Errorf("mcp server %s: the token endpoint %s answered without a bearer access token", srv.ID, asm.TokenEndpoint)
	}
	l.Token, l.At = tok, time.Now()
	if err := SaveLogin(c.Tokens, srv.ID, l); err != nil {
		return nil, fmt.Errorf("mcp server %s: seal the login: %w", srv.ID, err)
	}
	return l, nil
}

// discoverAuthServer finds what protects srv: its protected resource
// metadata, the scopes its challenge named, and its authorization server's
// metadata, which must name a token endpoint.
func discoverAuthServer(ctx context.Context, hc *http.Client, srv manifest.MCPServer) (*oauthex.ProtectedResourceMetadata, []string, *oauthex.AuthServerMeta, error) {
	prm, scopes, err := discoverResource(ctx, hc, srv)
	if err != nil {
		return nil, nil, nil, err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	if err != nil && prm.Resource == "" && strings.Contains(err.Error(), errIssuerMismatch) {
		// A 2025-03-26 server (no protected resource metadata) whose
		// issuer has a path on its own origin (legacy.go).
		asm, err = legacyAuthServer(ctx, hc, issuer)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mcp server %s: authorization server %s: %w", srv.ID, issuer, err)
	}
	if asm == nil && prm.Resource == "" {
		// A 2025-03-26 server with no metadata at all: the default
		// endpoints at its own origin.
		asm = legacyEndpoints(issuer)
	}
	if asm == nil {
		return nil, nil, nil, fmt.Errorf("mcp server %s: authorization server %s publishes no metadata (RFC 8414)", srv.ID, issuer)
	}
	if asm.TokenEndpoint == "" {
		return nil, nil, nil, fmt.Errorf("mcp server %s: authorization server %s names no token endpoint", srv.ID, issuer)
	}
	return prm, scopes, asm, nil
}

// discoverResource asks the server (without a token) what protects it: its
// 401 names the protected resource metadata (RFC 9728), else the metadata
// is looked for at the well-known URLs. The metadata must name this server
// as its resource and at least one authorization server.
func discoverResource(ctx context.Context, hc *http.Client, srv manifest.MCPServer) (*oauthex.ProtectedResourceMetadata, []string, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"astrid","version":"` + manifest.RuntimeVersion + `"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("mcp server %s: %w", srv.ID, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	open := resp.StatusCode < 300
	if !open && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil, nil, fmt.Errorf("mcp server %s answered HTTP %d, not 401: it asks for no OAuth login", srv.ID, resp.StatusCode)
	}
	var metaURLs []string
	var scopes []string
	if open {
		// Initialize answered without a token; the server may still guard
		// its other methods (a 401 on tools/list): its protected resource
		// metadata at the well-known URLs says so.
	} else if cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
		for _, ch := range cs {
			if !strings.EqualFold(ch.Scheme, "bearer") {
				continue
			}
			if u := ch.Params["resource_metadata"]; u != "" {
				metaURLs = append(metaURLs, u)
			}
			if s := ch.Params["scope"]; s != "" {
				scopes = strings.Fields(s)
			}
		}
	}
	u, err := url.Parse(srv.URL)
	if err != nil {
		return nil, nil, err
	}
	wk := *u
	wk.RawQuery, wk.Fragment = "", ""
	if p := strings.Trim(u.Path, "/"); p != "" {
		wk.Path = "/.well-known/oauth-protected-resource/" + p
		metaURLs = append(metaURLs, wk.String())
	}
	wk.Path = "/.well-known/oauth-protected-resource"
	metaURLs = append(metaURLs, wk.String())
	var errs []error
	missing := 0
	for _, mu := range metaURLs {
		prm, err := protectedResource(ctx, hc, mu, u)
		if err != nil {
			errs = append(errs, err)
			if strings.Contains(err.Error(), "bad status 404") {
				missing++
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			errs = append(errs, fmt.Errorf("%s names no authorization server", mu))
			continue
		}
		return prm, scopes, nil
	}
	if open {
		return nil, nil, fmt.Errorf("mcp server %s: %w", srv.ID, ErrNoLoginNeeded)
	}
	if missing == len(metaURLs) {
		// No protected resource metadata anywhere: a server of the
		// 2025-03-26 specification, whose authorization server is its
		// own origin (its RFC 8414 metadata, else the default endpoints).
		origin := *u
		origin.Path, origin.RawPath, origin.RawQuery, origin.Fragment = "", "", "", ""
		return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{origin.String()}}, scopes, nil
	}
	return nil, nil, fmt.Errorf("mcp server %s asks for authorization but its protected resource metadata is unusable: %w", srv.ID, errors.Join(errs...))
}

// legacyEndpoints are the endpoints a 2025-03-26 authorization server
// without metadata has at its origin (that specification's fallback).
func legacyEndpoints(origin string) *oauthex.AuthServerMeta {
	return &oauthex.AuthServerMeta{
		Issuer:                origin,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
	}
}

// protectedResource reads the protected resource metadata at mu for the
// server at u. Its resource must be the server's URL, or the same origin
// with a path the server's lies under (a root metadata document naming
// "https://host" for "https://host/mcp", as the MCP TypeScript SDK
// accepts): the token is then asked for that resource. Another origin is
// refused, whatever the path. One fetch per candidate, at most
// maxResourceCandidates.
func protectedResource(ctx context.Context, hc *http.Client, mu string, u *url.URL) (*oauthex.ProtectedResourceMetadata, error) {
	var first error
	for _, r := range resourceCandidates(u) {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, mu, r, hc)
		if err == nil {
			return prm, nil
		}
		if first == nil {
			first = err
		}
		if !strings.Contains(err.Error(), "metadata resource") {
			break // not a mismatch: a 404, garbage, a refused hop
		}
	}
	return nil, first
}

// maxResourceCandidates bounds the resources a metadata document is
// checked against (so its fetches).
const maxResourceCandidates = 4

// resourceCandidates are u itself, then its parent paths up to the bare
// origin, nearest first: "https://h/a/mcp", "https://h/a", "https://h".
func resourceCandidates(u *url.URL) []string {
	base := *u
	base.RawQuery, base.Fragment = "", ""
	out := []string{base.String()}
	p := strings.TrimSuffix(base.Path, "/")
	for len(out) < maxResourceCandidates && p != "" {
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			p = p[:i]
		} else {
			p = ""
		}
		base.Path, base.RawPath = p, ""
		out = append(out, base.String())
	}
	return out
}

// client fills l's client: the one the manifest names; else its Client ID
// Metadata Document's URL when the authorization server takes one; else
// one the authorization server registers now (RFC 7591) for the loopback
// redirect.
func client(ctx context.Context, hc *http.Client, c LoginConfig, asm *oauthex.AuthServerMeta, redirect string, l *Login) error {
	srv := c.Server
	if srv.OAuthClientID != "" {
		id, err := manifest.ExpandTemplate(srv.OAuthClientID, c.Env)
		if err != nil {
			return fmt.Errorf("mcp server %s: oauth_client_id: %w", srv.ID, err)
		}
		l.ClientID = id
		if srv.OAuthClientSecret != "" {
			if l.ClientSecret, err = manifest.ExpandTemplate(srv.OAuthClientSecret, c.Env); err != nil {
				return fmt.Errorf("mcp server %s: oauth_client_secret: %w", srv.ID, err)
			}
		}
		return nil
	}
	if srv.OAuthClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		// A Client ID Metadata Document: the URL is the client id, a
		// public client; the authorization server fetches the document.
		l.ClientID = srv.OAuthClientMetadataURL
		return nil
	}
	if asm.RegistrationEndpoint == "" {
		return fmt.Errorf("mcp server %s: its authorization server %s registers no clients dynamically; register one there and set oauth_client_id (and oauth_client_secret) in the manifest", srv.ID, asm.Issuer)
	}
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirect},
		TokenEndpointAuthMethod: "none",
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              "Astrid (" + c.Capsule + ")",
	}, hc)
	if err != nil {
		return fmt.Errorf("mcp server %s: registering a client with %s: %w", srv.ID, asm.RegistrationEndpoint, err)
	}
	if reg.ClientID == "" {
		return fmt.Errorf("mcp server %s: %s registered a client without an id", srv.ID, asm.RegistrationEndpoint)
	}
	l.ClientID, l.ClientSecret = reg.ClientID, reg.ClientSecret
	return nil
}

type callback struct {
	code string
	err  error
}

// callbackHandler takes the browser's redirect: the first one whose state
// matches ends the wait; anything else is answered 400 and ignored.
func callbackHandler(state string, out chan<- callback) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state {
			http.Error(w, "not the redirect this login waits for", http.StatusBadRequest)
			return
		}
		cb := callback{code: q.Get("code")}
		switch {
		case q.Get("error") != "":
			cb.err = fmt.Errorf("%.200s: %.500s", q.Get("error"), q.Get("error_description"))
		case cb.code == "":
			cb.err = errors.New("the redirect carried no code")
		}
		select {
		case out <- cb:
			_, _ = io.WriteString(w, "Astrid: login received; you can close this window.\n")
		default:
			http.Error(w, "this login is already answered", http.StatusConflict)
		}
	})
}

func randomString() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("mcp login: random state: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func headerFold(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}
