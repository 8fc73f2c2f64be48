package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/astrid-go/astrid/manifest"
)

// Enterprise-managed authorization (SEP-990, "cross-app access"): an
// [[mcp_server]] with oauth_grant = "enterprise" names the person's
// enterprise identity provider and the ID token it issued them (a capsule
// secret). On a 401 the engine asks the IdP's token endpoint to exchange
// that ID token (RFC 8693) for an identity assertion grant (ID-JAG) naming
// the server's authorization server and resource, then gives the grant to
// that authorization server (RFC 7523 JWT bearer grant, authenticated as
// the client registered there) for an access token. Nobody is prompted;
// an ID token the IdP no longer takes is reported for the person to renew.
// Both token endpoints go through the capsule's egress rules.

const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// idpGrant is the enterprise grant's IdP side.
type idpGrant struct {
	issuer, clientID, secret, idToken string
}

func newIdPGrant(srv manifest.MCPServer, env map[string]string) (*idpGrant, error) {
	g := &idpGrant{issuer: srv.IdPIssuer}
	for _, f := range []struct {
		key, tmpl string
		dst       *string
	}{{"idp_client_id", srv.IdPClientID, &g.clientID}, {"idp_client_secret", srv.IdPClientSecret, &g.secret}, {"idp_id_token", srv.IdPIDToken, &g.idToken}} {
		if f.tmpl == "" {
			continue
		}
		v, err := manifest.ExpandTemplate(f.tmpl, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.dst = v
	}
	if g.issuer == "" || g.clientID == "" || g.idToken == "" {
		return nil, errors.New("the enterprise grant needs idp_issuer, idp_client_id and the ID token (idp_id_token); set the capsule's secrets (astrid capsule env set)")
	}
	return g, nil
}

// idpTokenEndpoint reads the IdP's metadata (OpenID Connect discovery,
// else RFC 8414), which must claim the configured issuer.
func idpTokenEndpoint(ctx context.Context, hc *http.Client, issuer string) (string, error) {
	base := strings.TrimSuffix(issuer, "/")
	var errs []error
	for _, wk := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		meta, err := fetchMeta(ctx, hc, base+wk)
		if err != nil || meta == nil {
			errs = append(errs, missingErr(err, base+wk))
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != base {
			return "", fmt.Errorf("the IdP's metadata at %s claims issuer %q, not %q", base+wk, meta.Issuer, issuer)
		}
		u, err := url.Parse(meta.TokenEndpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return "", fmt.Errorf("the IdP's metadata at %s names no usable token endpoint", base+wk)
		}
		return meta.TokenEndpoint, nil
	}
	return "", fmt.Errorf("the IdP %s publishes no metadata: %w", issuer, errors.Join(errs...))
}

// missingErr is err, or that nothing is at u.
func missingErr(err error, u string) error {
	if err == nil {
		return fmt.Errorf("%s: not found", u)
	}
	return err
}

// fetchMeta reads authorization server metadata at u, unchecked; nil,
// nil when the server answers 4xx (nothing there).
func fetchMeta(ctx context.Context, hc *http.Client, u string) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("%s: not JSON (%q)", u, resp.Header.Get("Content-Type"))
	}
	var m oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &m, nil
}

// enterpriseSource gets each token anew: the ID token exchanged at the IdP
// for an ID-JAG, the ID-JAG given to the server's authorization server.
type enterpriseSource struct {
	ctx      context.Context
	hc       *http.Client
	g        *machineGrant
	asm      *oauthex.AuthServerMeta
	resource string
	scopes   []string
	style    oauth2.AuthStyle
}

func (s *enterpriseSource) Token() (*oauth2.Token, error) {
	idp := s.g.idp
	tokenURL, err := idpTokenEndpoint(s.ctx, s.hc, idp.issuer)
	if err != nil {
		return nil, err
	}
	creds := &oauthex.ClientCredentials{ClientID: idp.clientID}
	if idp.secret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.secret}
	}
	jag, err := oauthex.ExchangeToken(s.ctx, tokenURL, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG, Audience: s.asm.Issuer, Resource: s.resource, Scope: s.scopes,
		SubjectToken: idp.idToken, SubjectTokenType: oauthex.TokenTypeIDToken,
	}, creds, s.hc)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("the IdP's token endpoint %s refused to exchange the ID token (%s); renew idp_id_token", tokenURL, grantRefusal(re))
		}
		return nil, fmt.Errorf("the IdP's token endpoint %s: %w", tokenURL, err)
	}
	if tt, _ := jag.Extra("issued_token_type").(string); tt != oauthex.TokenTypeIDJAG || jag.AccessToken == "" {
		return nil, fmt.Errorf("the IdP's token endpoint %s issued %q, not an identity assertion grant", tokenURL, tt)
	}
	cfg := &clientcredentials.Config{ClientID: s.g.clientID, ClientSecret: s.g.secret, TokenURL: s.asm.TokenEndpoint, Scopes: s.scopes, AuthStyle: s.style,
		EndpointParams: url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag.AccessToken}}}
	return cfg.Token(s.ctx)
}
