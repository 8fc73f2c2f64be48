package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Servers of the 2025-03-26 specification publish no protected resource
// metadata: their authorization server is their own origin, its RFC 8414
// metadata at <origin>/.well-known/oauth-authorization-server, else the
// default endpoints there (legacyEndpoints). Such metadata may name an
// issuer with a path on that origin (<origin>/oauth), which RFC 8414 §3.3
// would refuse, as the issuer is not the URL the metadata was fetched for.
// For these servers only, legacyAuthServer accepts an issuer on the
// server's own origin when every endpoint the login uses is on it too:
// the mix-up defence holds, as nothing can be sent to another origin than
// the one the manifest names, which already holds the resource.

// errIssuerMismatch is the go-sdk's word for an RFC 8414 §3.3 mismatch.
const errIssuerMismatch = "does not match issuer URL"

// legacyAuthServer reads the metadata at origin's well-known URL,
// accepting a same-origin issuer (see above). nil, nil: none there.
func legacyAuthServer(ctx context.Context, hc *http.Client, origin string) (*oauthex.AuthServerMeta, error) {
	metaURL := origin + "/.well-known/oauth-authorization-server"
	claim, err := fetchMeta(ctx, hc, metaURL)
	if err != nil || claim == nil {
		return nil, err
	}
	if !sameOrigin(claim.Issuer, origin) {
		return nil, fmt.Errorf("metadata at %s names issuer %q, on another origin (RFC 8414 §3.3)", metaURL, claim.Issuer)
	}
	// The go-sdk's checks (PKCE, URL schemes) against the issuer claimed.
	asm, err := oauthex.GetAuthServerMeta(ctx, metaURL, claim.Issuer, hc)
	if err != nil || asm == nil {
		return asm, err
	}
	for name, u := range map[string]string{"authorization_endpoint": asm.AuthorizationEndpoint, "token_endpoint": asm.TokenEndpoint, "registration_endpoint": asm.RegistrationEndpoint} {
		if u != "" && !sameOrigin(u, origin) {
			return nil, fmt.Errorf("metadata at %s names %s %q, on another origin than the server's", metaURL, name, u)
		}
	}
	return asm, nil
}

// sameOrigin says u is on origin (scheme, host and port).
func sameOrigin(u, origin string) bool {
	a, err1 := url.Parse(u)
	b, err2 := url.Parse(origin)
	return errors.Join(err1, err2) == nil && a.Scheme == b.Scheme && a.Host == b.Host && a.User == nil
}
