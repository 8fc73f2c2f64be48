package natsbus

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats-server/v2/server"
)

// Authenticator is the embedded server's in-process client authentication
// (nats-server's CustomClientAuthentication). The transport issues one
// secret per connection it opens, with the permissions derived from the
// capsule's manifest; a client presenting anything else is refused. The
// secrets never leave the process, so on the embedded server a capsule's
// identity on the broker is exactly the identity its kernel gave it.
type Authenticator struct {
	mu    sync.RWMutex
	users map[string]credential
	log   *slog.Logger
	// refused counts connections refused (unknown user or wrong secret).
	refused atomic.Uint64
	// routesJoined and routesRefused count the route connections peers
	// opened to the node (routeGuard, serverLog); violations the
	// permissions violations the node reported of any of its client
	// connections (serverLog).
	routesJoined, routesRefused, violations atomic.Uint64
}

// NodeStats are the embedded node's own counters: who tried to join it and
// what its clients were refused.
type NodeStats struct {
	// RoutesJoined counts route connections peers opened to this node
	// and that it admitted (with route pooling, a peer opens several);
	// RoutesRefused those it refused: no secret, a wrong one, no
	// certificate of the cluster's CA, or a peer that spoke before
	// authenticating.
	RoutesJoined, RoutesRefused uint64
	// ClientsRefused counts client connections refused: every client of
	// the embedded node is this process's own, so any refusal is someone
	// else dialing its client port.
	ClientsRefused uint64
	// Violations counts the permissions violations the node reported of
	// its clients (a publish or subscription beyond the connection's
	// grants), this host's connections' or not.
	Violations uint64
}

// NodeStats is a snapshot of the node's counters.
func (a *Authenticator) NodeStats() NodeStats {
	return NodeStats{
		RoutesJoined:   a.routesJoined.Load(),
		RoutesRefused:  a.routesRefused.Load(),
		ClientsRefused: a.refused.Load(),
		Violations:     a.violations.Load(),
	}
}

type credential struct {
	secret []byte
	perms  *server.Permissions
}

// NewAuthenticator returns an authenticator that admits no one yet.
func NewAuthenticator(log *slog.Logger) *Authenticator {
	if log == nil {
		log = slog.Default()
	}
	return &Authenticator{users: make(map[string]credential), log: log}
}

// Issue registers user with perms and returns the secret it must present
// as its password. Issuing again for the same user replaces the secret and
// permissions (connections already open keep what they were given).
func (a *Authenticator) Issue(user string, perms *server.Permissions) string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24+)
	secret := hex.EncodeToString(raw)
	a.mu.Lock()
	a.users[user] = credential{secret: []byte(secret), perms: perms}
	a.mu.Unlock()
	return secret
}

// Revoke forgets user: later connections under it are refused.
func (a *Authenticator) Revoke(user string) {
	a.mu.Lock()
	delete(a.users, user)
	a.mu.Unlock()
}

// Check implements server.Authentication.
func (a *Authenticator) Check(c server.ClientAuthentication) bool {
	opts := c.GetOpts()
	if c.Kind() != server.CLIENT || opts == nil {
		a.refuse(c, "", "not a client connection")
		return false
	}
	a.mu.RLock()
	cred, ok := a.users[opts.Username]
	a.mu.RUnlock()
	if !ok {
		a.refuse(c, opts.Username, "unknown user")
		return false
	}
	if subtle.ConstantTimeCompare(cred.secret, []byte(opts.Password)) != 1 {
		a.refuse(c, opts.Username, "wrong secret")
		return false
	}
	c.RegisterUser(&server.User{Username: opts.Username, Permissions: cred.perms})
	return true
}

func (a *Authenticator) refuse(c server.ClientAuthentication, user, why string) {
	a.refused.Add(1)
	a.log.Warn("natsbus: connection refused by the embedded server",
		"user", user, "reason", why, "remote", c.RemoteAddress())
}

// capsulePermissions are the broker-side grants of one capsule's connection:
// publish only as itself on its [publish] keys, subscribe only on its
// [subscribe] keys. A side with no key denies everything, since an empty
// allow list would allow everything.
func capsulePermissions(publish, subscribe []string) *server.Permissions {
	return &server.Permissions{
		Publish:   subjectPermission(publish),
		Subscribe: subjectPermission(subscribe),
	}
}

func subjectPermission(allow []string) *server.SubjectPermission {
	if len(allow) == 0 {
		return &server.SubjectPermission{Deny: []string{">"}}
	}
	return &server.SubjectPermission{Allow: allow}
}
