package mcp

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/astrid-go/astrid/manifest"
)

// The client credentials grant (RFC 6749 §4.4; MCP's SEP-1046) for
// machine-to-machine servers: an [[mcp_server]] with oauth_grant =
// "client_credentials" names a client registered beforehand and its
// secret or signing key, both capsule secrets. Nobody logs in: on a 401
// the engine discovers the authorization server as a login would (RFC
// 9728, RFC 8414, through the capsule's egress rules), asks its token
// endpoint for a token with the client's credentials, and sends the
// request again. The token lives in memory only: another is a request
// away. The credentials are never logged; a refused grant is worded
// without them.

// errGrant marks a failed client credentials grant: no transport fallback
// or login helps.
var errGrant = errors.New("client credentials grant failed")

// machineGrant is one server's client credentials.
type machineGrant struct {
	clientID string
	secret   string        // client_secret_basic or _post
	key      crypto.Signer // private_key_jwt
	alg      string        // the key's JWS algorithm
	idp      *idpGrant     // the enterprise grant (enterprise.go)
}

// newMachineGrant expands srv's credentials from the capsule's env.
func newMachineGrant(srv manifest.MCPServer, env map[string]string) (*machineGrant, error) {
	id, err := manifest.ExpandTemplate(srv.OAuthClientID, env)
	if err != nil {
		return nil, fmt.Errorf("oauth_client_id: %w", err)
	}
	g := &machineGrant{clientID: id}
	if srv.OAuthClientSecret != "" {
		if g.secret, err = manifest.ExpandTemplate(srv.OAuthClientSecret, env); err != nil {
			return nil, fmt.Errorf("oauth_client_secret: %w", err)
		}
	}
	if srv.OAuthClientKey != "" {
		pemText, err := manifest.ExpandTemplate(srv.OAuthClientKey, env)
		if err != nil {
			return nil, fmt.Errorf("oauth_client_key: %w", err)
		}
		if g.key, g.alg, err = parseSigningKey([]byte(pemText)); err != nil {
			return nil, fmt.Errorf("oauth_client_key: %w", err)
		}
	}
	if srv.OAuthGrant == manifest.MCPGrantEnterprise {
		if g.idp, err = newIdPGrant(srv, env); err != nil {
			return nil, err
		}
		if id == "" {
			return nil, errors.New("the enterprise grant needs oauth_client_id")
		}
		return g, nil
	}
	if id == "" || (g.secret == "" && g.key == nil) {
		return nil, errors.New("the client credentials grant needs a client id and its secret or key; set the capsule's secrets (astrid capsule env set)")
	}
	return g, nil
}

// parseSigningKey reads a PEM private key: EC P-256 (ES256) or RSA of at
// least 2048 bits (RS256), PKCS #8, SEC 1 or PKCS #1.
func parseSigningKey(b []byte) (crypto.Signer, string, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, "", errors.New("not a PEM private key")
	}
	var k any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		return nil, "", fmt.Errorf("a PEM block of type %q, not a private key", blk.Type)
	}
	if err != nil {
		return nil, "", fmt.Errorf("unreadable private key: %w", err)
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, "", fmt.Errorf("an EC key on %s; ES256 needs P-256", k.Curve.Params().Name)
		}
		return k, "ES256", nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, "", fmt.Errorf("an RSA key of %d bits; at least 2048", k.N.BitLen())
		}
		return k, "RS256", nil
	}
	return nil, "", fmt.Errorf("a %T key; ES256 (EC P-256) or RS256 (RSA) only", k)
}

// clientAssertion is a JWT (RFC 7523 §2.2) for the authorization server
// aud, good for five minutes.
func (g *machineGrant) clientAssertion(aud string, now time.Time) (string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	h, _ := json.Marshal(map[string]string{"alg": g.alg, "typ": "JWT"})
	c, _ := json.Marshal(map[string]any{
		"iss": g.clientID, "sub": g.clientID, "aud": aud,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": base64.RawURLEncoding.EncodeToString(jti),
	})
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(signing))
	var sig []byte
	switch k := g.key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64) // JWS: r and s, 32 bytes each (RFC 7518 §3.4)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	default:
		return "", errors.New("no signing key")
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// clientCredentials answers a 401 (or a 403 asking for scope) with a new
// token from the client credentials grant; nil means the request may go
// again.
func (a *storedAuth) clientCredentials(ctx context.Context, resp *http.Response) error {
	srv := a.e.srv
	fail := func(err error) error {
		return fmt.Errorf("mcp server %s: %w: %w", srv.ID, errGrant, err)
	}
	if a.machineErr != nil {
		return fail(a.machineErr)
	}
	ch, err := parseScopeChallenge(resp.Header)
	if err != nil {
		return fail(fmt.Errorf("its scope challenge is unusable: %w", err))
	}
	a.mu.Lock()
	had := a.ccScopes
	a.mu.Unlock()
	if resp.StatusCode == http.StatusForbidden && ch.insufficient {
		want, err := unionScopes(had, ch.scopes)
		if err != nil {
			return fail(err)
		}
		if len(want) == len(had) {
			return fail(fmt.Errorf("the token already has scope %q and the server refuses it (HTTP 403)", strings.Join(ch.scopes, " ")))
		}
		ch.scopes = want
	}
	prm, scopes, asm, err := discoverAuthServer(ctx, a.client, srv)
	if err != nil {
		return fail(err)
	}
	if len(ch.scopes) > 0 {
		scopes = ch.scopes
	} else if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if len(scopes) > maxScopes {
		return fail(fmt.Errorf("the server asks for %d scopes, more than %d", len(scopes), maxScopes))
	}
	g := a.machine
	hctx := context.WithValue(context.Background(), oauth2.HTTPClient, a.client)
	methods := asm.TokenEndpointAuthMethodsSupported
	var src oauth2.TokenSource
	if g.idp != nil {
		if gts := asm.GrantTypesSupported; len(gts) > 0 && !slices.Contains(gts, grantJWTBearer) {
			return fail(fmt.Errorf("authorization server %s does not take identity assertion grants (RFC 7523 JWT bearer)", asm.Issuer))
		}
		if prm.Resource == "" {
			return fail(errors.New("the server publishes no protected resource metadata to name in the identity assertion grant"))
		}
		style := oauth2.AuthStyleInHeader
		if g.secret == "" || (slices.Contains(methods, "client_secret_post") && !slices.Contains(methods, "client_secret_basic")) {
			style = oauth2.AuthStyleInParams
		}
		src = &enterpriseSource{ctx: hctx, hc: a.client, g: g, asm: asm, resource: prm.Resource, scopes: scopes, style: style}
		return a.takeToken(src, asm, scopes, fail)
	}
	if gts := asm.GrantTypesSupported; len(gts) > 0 && !slices.Contains(gts, "client_credentials") {
		return fail(fmt.Errorf("authorization server %s does not offer the client credentials grant (it offers %s)", asm.Issuer, strings.Join(gts, ", ")))
	}
	cfg := &clientcredentials.Config{ClientID: g.clientID, ClientSecret: g.secret, TokenURL: asm.TokenEndpoint, Scopes: scopes, EndpointParams: url.Values{}}
	if prm.Resource != "" {
		cfg.EndpointParams.Set("resource", prm.Resource) // RFC 8707
	}
	if g.key != nil {
		if len(methods) > 0 && !slices.Contains(methods, "private_key_jwt") {
			return fail(fmt.Errorf("authorization server %s does not take signed client assertions (private_key_jwt)", asm.Issuer))
		}
		if algs := asm.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, g.alg) {
			return fail(fmt.Errorf("authorization server %s takes %s assertions, not %s: use another key", asm.Issuer, strings.Join(algs, ", "), g.alg))
		}
		cfg.AuthStyle = oauth2.AuthStyleInParams
		src = &assertionSource{ctx: hctx, cfg: cfg, g: g, aud: asm.Issuer}
	} else {
		cfg.AuthStyle = oauth2.AuthStyleInHeader // client_secret_basic, RFC 6749's default
		if slices.Contains(methods, "client_secret_post") && !slices.Contains(methods, "client_secret_basic") {
			cfg.AuthStyle = oauth2.AuthStyleInParams
		}
		src = cfg.TokenSource(hctx)
	}
	return a.takeToken(src, asm, scopes, fail)
}

// takeToken gets the first token of src and keeps src for the next ones.
func (a *storedAuth) takeToken(src oauth2.TokenSource, asm *oauthex.AuthServerMeta, scopes []string, fail func(error) error) error {
	tok, err := src.Token() // a.client bounds each request (30 s)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return fail(fmt.Errorf("the token endpoint %s refused the client (%s)", asm.TokenEndpoint, grantRefusal(re)))
		}
		return fail(fmt.Errorf("the token endpoint %s gave no token: %w", asm.TokenEndpoint, err))
	}
	if tok.AccessToken == "" || (tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer")) {
		return fail(fmt.Errorf("the token endpoint %s answered without a bearer access token", asm.TokenEndpoint))
	}
	a.mu.Lock()
	a.ts, a.ccScopes = oauth2.ReuseTokenSource(tok, src), scopes
	a.mu.Unlock()
	return nil
}

// grantRefusal words a token endpoint's refusal: its error code and
// description, bounded, never the request.
func grantRefusal(re *oauth2.RetrieveError) string {
	if re.ErrorCode == "" {
		return fmt.Sprintf("HTTP %d", re.Response.StatusCode)
	}
	s := re.ErrorCode
	if re.ErrorDescription != "" {
		s += ": " + re.ErrorDescription
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// assertionSource asks for each token with a fresh client assertion.
type assertionSource struct {
	ctx context.Context
	cfg *clientcredentials.Config
	g   *machineGrant
	aud string
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	jwt, err := s.g.clientAssertion(s.aud, time.Now())
	if err != nil {
		return nil, err
	}
	cfg := *s.cfg
	cfg.EndpointParams = url.Values{}
	for k, v := range s.cfg.EndpointParams {
		cfg.EndpointParams[k] = v
	}
	cfg.EndpointParams.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
	cfg.EndpointParams.Set("client_assertion", jwt)
	return cfg.Token(s.ctx)
}
