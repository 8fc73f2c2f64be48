package config

import (
	"errors"
	"fmt"
	"slices"
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
	// here; any other uid not listed is refused. A uid listed more than
	// once may act as each of its principals (a client's --principal
	// picks one); the first is the one it acts as by default.
	Principals []string `toml:"principals"`
	// Ingress narrows what one principal's clients may publish,
	// "principal=pattern" each ("guest=user.v1.prompt"): a principal with
	// entries may publish only under them (and still only inside the
	// uplink's own allowlist); a principal with none has the whole
	// allowlist.
	Ingress []string `toml:"ingress"`
	// ActsFor lets an installed uplink capsule (capabilities.uplink, not a
	// built-in) act for principals, "capsule=principal" each
	// ("chat-bridge=alice", "chat-bridge=*" for any): one not listed acts
	// for no one (uplink_actsfor.go).
	ActsFor []string `toml:"acts_for"`
}

// MaxUplinkClients caps Uplink.MaxClients (the uplink's socket handles,
// hostapi.MaxUplinkNetHandles, hold the listener and every client).
const MaxUplinkClients = 1000

// UIDPrincipals parses Principals: uid → the principal it acts as by
// default (its first entry).
func (u Uplink) UIDPrincipals() (map[int]string, error) {
	all, err := u.UIDAllowedPrincipals()
	if err != nil {
		return nil, err
	}
	out := make(map[int]string, len(all))
	for uid, ps := range all {
		out[uid] = ps[0]
	}
	return out, nil
}

// UIDAllowedPrincipals parses Principals: uid → every principal it may act
// as, in the order listed (the first is its default).
func (u Uplink) UIDAllowedPrincipals() (map[int][]string, error) {
	out := make(map[int][]string, len(u.Principals))
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
		if !slices.Contains(out[uid], principal) {
			out[uid] = append(out[uid], principal)
		}
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
	if _, err := u.ActsForByCapsule(); err != nil {
		bad("uplink.acts_for", "%v", err)
	}
}
