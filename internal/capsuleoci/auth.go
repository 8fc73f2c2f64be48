package capsuleoci

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// ErrUnauthorized: the registry refused the credential (or wanted one and
// none was found).
var ErrUnauthorized = errors.New("the registry refused the request as unauthorised")

// authClient is the oras-go client every request of c goes through: c's
// HTTP client (the egress client, so a token realm or a redirect is held
// to the same SSRF guard as the registry), c's credentials, and one token
// cache per Client so that a scope's token is asked for once.
func (c *Client) authClient() (*auth.Client, error) {
	if c.HTTP == nil {
		return nil, errors.New("capsuleoci: Client.HTTP is required")
	}
	c.cacheOnce.Do(func() { c.cache = auth.NewCache() })
	var cred auth.CredentialFunc
	if c.Credential != nil {
		find := c.Credential
		cred = func(ctx context.Context, hostport string) (auth.Credential, error) {
			got, err := find(ctx, hostport)
			if err != nil {
				return auth.EmptyCredential, fmt.Errorf("the credential of %s: %w", hostport, err)
			}
			return got.oras(), nil
		}
	}
	return &auth.Client{
		Client:     c.HTTP,
		Credential: cred,
		Cache:      c.cache,
		ClientID:   "astrid",
		Header:     http.Header{"User-Agent": {"astrid"}},
	}, nil
}

// classified is an oras-go error that also is one of this package's
// sentinels, so callers need not know oras's error types.
type classified struct {
	sentinel error
	err      error
	hint     string
}

func (e classified) Error() string   { return e.err.Error() + e.hint }
func (e classified) Unwrap() []error { return []error{e.sentinel, e.err} }

// classify marks err (from oras-go, about registry) with the sentinel
// it amounts to: a 401/403 or a missing basic credential is
// ErrUnauthorized (with how to log in), a 404 ErrNotFound, bytes that are
// not the ones named ErrDigestMismatch, a size past a bound ErrTooLarge.
func classify(err error, registry string) error {
	if err == nil {
		return nil
	}
	login := fmt.Sprintf("astrid registry login %s, or docker login", registry)
	var resp *errcode.ErrorResponse
	switch {
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return classified{ErrUnauthorized, err, " (no credential found: " + login + ")"}
	case errors.As(err, &resp) && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return classified{ErrUnauthorized, err, " (" + login + ")"}
	case errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound, errors.Is(err, errdef.ErrNotFound):
		return classified{ErrNotFound, err, ""}
	case errors.Is(err, content.ErrMismatchedDigest), errors.Is(err, content.ErrTrailingData):
		return classified{ErrDigestMismatch, err, ""}
	case errors.Is(err, errdef.ErrSizeExceedsLimit):
		return classified{ErrTooLarge, err, ""}
	}
	return err
}
