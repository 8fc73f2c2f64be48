package capsuleoci

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// Credential is what a registry is asked with: a user name and password
// (or token), an identity token exchanged for bearer tokens, or a bearer
// token itself (docker's registrytoken). Its JSON is what `astrid
// registry login` seals.
type Credential struct {
	Username     string `json:"username,omitempty"`
	Password     string `json:"password,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	AccessToken  string `json:"access_token,omitempty"`
}

// oras is c as oras-go's credential.
func (c Credential) oras() auth.Credential {
	return auth.Credential{Username: c.Username, Password: c.Password, RefreshToken: c.RefreshToken, AccessToken: c.AccessToken}
}

func fromOras(c auth.Credential) Credential {
	return Credential{Username: c.Username, Password: c.Password, RefreshToken: c.RefreshToken, AccessToken: c.AccessToken}
}

// CredentialFunc finds a registry's ("host:port") credential; the zero
// Credential means anonymous.
type CredentialFunc func(ctx context.Context, registry string) (Credential, error)

// Sealed is where `astrid registry login` keeps credentials: a key-value
// view whose values are sealed (store.Secrets satisfies it).
type Sealed interface {
	Get(key string) ([]byte, bool, error)
	Set(key string, value []byte) error
	Delete(key string) error
}

// PutSealed stores cred for registry in sealed.
func PutSealed(sealed Sealed, registry string, cred Credential) error {
	b, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	return sealed.Set(registry, b)
}

// sealedCredential reads registry's credential from sealed.
func sealedCredential(sealed Sealed, registry string) (Credential, bool, error) {
	b, ok, err := sealed.Get(registry)
	if err != nil || !ok {
		return Credential{}, false, err
	}
	var c Credential
	if err := json.Unmarshal(b, &c); err != nil {
		return Credential{}, false, fmt.Errorf("stored credential of %s: %w (astrid registry login %s again)", registry, err, registry)
	}
	return c, true, nil
}

// sealedStore is oras-go's credentials.Store over Sealed, keyed by
// server address.
type sealedStore struct{ s Sealed }

func (ss sealedStore) Get(_ context.Context, server string) (auth.Credential, error) {
	c, _, err := sealedCredential(ss.s, server)
	return c.oras(), err
}

func (ss sealedStore) Put(_ context.Context, server string, c auth.Credential) error {
	return PutSealed(ss.s, server, fromOras(c))
}

func (ss sealedStore) Delete(_ context.Context, server string) error { return ss.s.Delete(server) }

// dockerStore is oras-go's store over the docker config at
// $DOCKER_CONFIG/config.json or ~/.docker/config.json (auths, credsStore,
// credHelpers), errors naming the file; nil when there is none or it is
// unreadable (skipped, not fatal).
func dockerStore() credentials.Store {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".docker")
	}
	path := filepath.Join(dir, "config.json")
	s, err := credentials.NewStore(path, credentials.StoreOptions{})
	if err != nil {
		return nil
	}
	return namedStore{s, path}
}

// namedStore names its config file in a Get error.
type namedStore struct {
	credentials.Store
	path string
}

func (n namedStore) Get(ctx context.Context, server string) (auth.Credential, error) {
	c, err := n.Store.Get(ctx, server)
	if err != nil {
		return auth.EmptyCredential, fmt.Errorf("docker config %s: %w", n.path, err)
	}
	return c, nil
}

// Credentials finds a registry's credential in the sealed store first,
// then in the docker/OCI config the person already has (oras-go's
// credentials store: its auths, credsStore and credHelpers).
func Credentials(sealed Sealed) CredentialFunc {
	var stores []credentials.Store
	if sealed != nil {
		stores = append(stores, sealedStore{sealed})
	}
	if d := dockerStore(); d != nil {
		stores = append(stores, d)
	}
	if len(stores) == 0 {
		return func(context.Context, string) (Credential, error) { return Credential{}, nil }
	}
	find := credentials.Credential(credentials.NewStoreWithFallbacks(stores[0], stores[1:]...))
	return func(ctx context.Context, registry string) (Credential, error) {
		c, err := find(ctx, registry)
		if err != nil {
			return Credential{}, err
		}
		return fromOras(c), nil
	}
}

// Login checks cred against the registry host (one authenticated ping of
// /v2/, oras-go's credentials.Login) and, if it is accepted, stores it in
// sealed.
func (c *Client) Login(ctx context.Context, host string, cred Credential, sealed Sealed) error {
	if !validHost(host) {
		return fmt.Errorf("log in to %q: not a host[:port]", host)
	}
	probe := &Client{HTTP: c.HTTP, PlainHTTP: c.PlainHTTP}
	ac, err := probe.authClient()
	if err != nil {
		return fmt.Errorf("log in to %s: %w", host, err)
	}
	reg, err := remote.NewRegistry(host)
	if err != nil {
		return fmt.Errorf("log in to %s: %w", host, err)
	}
	reg.Client = ac
	reg.PlainHTTP = c.PlainHTTP != nil && c.PlainHTTP(host)
	if err := credentials.Login(ctx, sealedStore{sealed}, reg, cred.oras()); err != nil {
		return fmt.Errorf("log in to %s: %w", host, classify(err, host))
	}
	return nil
}
