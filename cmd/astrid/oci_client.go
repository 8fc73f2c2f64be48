package main

import (
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/internal/capsuleoci"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/store"
)

// ociClient is the registry client for host: every connection through
// the egress client (public hosts, the operator's [egress] allow and the
// loopback host:port named), plain HTTP only to a loopback registry, and
// credentials from `astrid registry login` (sealed in st, which must stay
// open while the client is used), then the docker config.
func ociClient(home string, st *store.Store, host string) (*capsuleoci.Client, error) {
	hc, err := remoteHTTP(home, host)
	if err != nil {
		return nil, err
	}
	c := &capsuleoci.Client{HTTP: hc, PlainHTTP: func(h string) bool { return h == host && isLoopbackHost(h) }}
	if st != nil {
		c.Credential = capsuleoci.Credentials(st.Secrets(registryNamespace))
	} else {
		c.Credential = capsuleoci.Credentials(nil)
	}
	return c, nil
}

// ociError adds the hint a refused local address needs.
func ociError(err error) error {
	if errors.Is(err, egress.ErrForbiddenAddress) {
		return fmt.Errorf("%w (a registry on this machine is reached only at the host:port you name; one on a private network needs an [egress] allow entry in config.toml)", err)
	}
	return err
}

// ociScheme prefixes a registry reference.
const ociScheme = capsuleoci.Scheme
