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
	prm, scopes, err := discoverResource(ctx, hc, srv)
	if err != nil {
		return nil, err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: authorization server %s: %w", srv.ID, issuer, err)
	}
	if asm == nil {
		return nil, fmt.Errorf("mcp server %s: authorization server %s publishes no metadata (RFC 8414)", srv.ID, issuer)
	}
	if asm.AuthorizationEndpoint == "" || asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("mcp server %s: authorization server %s names no authorization or token endpoint", srv.ID, issuer)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}

	ln, err := c.Listen()
	if err != nil {
		return nil, fmt.Errorf("mcp login: loopback listener for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + "/callback"

	l := &Login{ServerURL: srv.URL, AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, Scopes: scopes}
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
	// RFC 8707: the token is for this server and no other.
	resource := oauth2.SetAuthURLParam("resource", prm.Resource)
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), resource)

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
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), cb.code, oauth2.VerifierOption(verifier), resource)
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
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		if resp.StatusCode < 300 {
			return nil, nil, fmt.Errorf("mcp server %s: %w", srv.ID, ErrNoLoginNeeded)
		}
		return nil, nil, fmt.Errorf("mcp server %s answered HTTP %d, not 401: it asks for no OAuth login", srv.ID, resp.StatusCode)
	}
	var metaURLs []string
	var scopes []string
	if cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
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
	for _, mu := range metaURLs {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, mu, srv.URL, hc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			errs = append(errs, fmt.Errorf("%s names no authorization server", mu))
			continue
		}
		return prm, scopes, nil
	}
	return nil, nil, fmt.Errorf("mcp server %s asks for authorization but its protected resource metadata is unusable: %w", srv.ID, errors.Join(errs...))
}

// client fills l's client: the one the manifest names, else one the
// authorization server registers now (RFC 7591) for the loopback redirect.
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
