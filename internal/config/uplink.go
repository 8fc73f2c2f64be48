package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// Uplink configures the daemon's socket uplink (DESIGN §8): who may connect
// and how many at once.
type Uplink struct {
	// MaxClients is how many clients may be connected at once; one more
	// is answered with an error and closed.
	MaxClients int `toml:"max_clients"`
	// ClientQueue is how many frames may wait for one client to read
	// them; a client that lets more pile up is disconnected, so the
	// kernel never waits for it.
	ClientQueue int `toml:"client_queue"`
	// Principals maps peer uids to principals, "uid=principal" each
	// ("1001=alice"). The daemon owner's uid is "default" unless mapped
	// here; any other uid not listed is refused.
	Principals []string `toml:"principals"`
	// Ingress narrows what one principal's clients may publish,
	// "principal=pattern" each ("guest=user.v1.prompt"): a principal with
	// entries may publish only under them (and still only inside the
	// uplink's own allowlist); a principal with none has the whole
	// allowlist.
	Ingress []string `toml:"ingress"`
}

// MaxUplinkClients caps Uplink.MaxClients (the uplink's socket handles,
// hostapi.MaxUplinkNetHandles, hold the listener and every client).
const MaxUplinkClients = 1000

// UIDPrincipals parses Principals: uid → principal.
func (u Uplink) UIDPrincipals() (map[int]string, error) {
	out := make(map[int]string, len(u.Principals))
	for _, entry := range u.Principals {
		uidText, principal, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not uid=principal", entry)
		}
		uid, err := strconv.Atoi(strings.TrimSpace(uidText))
		if err != nil || uid < 0 {
			return nil, fmt.Errorf("%q: %q is not a uid (a non-negative integer)", entry, uidText)
		}
		principal = strings.TrimSpace(principal)
		if err := checkPrincipal(principal); err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		if prev, dup := out[uid]; dup && prev != principal {
			return nil, fmt.Errorf("%q: uid %d is already mapped to %s", entry, uid, prev)
		}
		out[uid] = principal
	}
	return out, nil
}

// IngressByPrincipal parses Ingress: principal → its patterns.
func (u Uplink) IngressByPrincipal() (map[string][]string, error) {
	out := map[string][]string{}
	for _, entry := range u.Ingress {
		principal, pattern, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not principal=pattern", entry)
		}
		principal, pattern = strings.TrimSpace(principal), strings.TrimSpace(pattern)
		if err := checkPrincipal(principal); err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		if err := ipc.ValidatePattern(pattern); err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		out[principal] = append(out[principal], pattern)
	}
	return out, nil
}

// checkPrincipal accepts what the dispatcher accepts as a principal, and
// not the empty one (the system's).
func checkPrincipal(p string) error {
	if p == "" {
		return errors.New("the principal is empty")
	}
	return dispatch.ValidatePrincipal(p)
}

// validate reports the uplink's problems through bad.
func (u Uplink) validate(bad func(key, format string, args ...any)) {
	if u.MaxClients < 1 || u.MaxClients > MaxUplinkClients {
		bad("uplink.max_clients", "must be 1 to %d, got %d", MaxUplinkClients, u.MaxClients)
	}
	if u.ClientQueue < 1 {
		bad("uplink.client_queue", "must be a positive integer, got %d", u.ClientQueue)
	}
	if _, err := u.UIDPrincipals(); err != nil {
		bad("uplink.principals", "%v", err)
	}
	if _, err := u.IngressByPrincipal(); err != nil {
		bad("uplink.ingress", "%v", err)
	}
}
