package uplink

import (
	_ "embed"
	"encoding/json"
	"slices"
	"time"
)

// Manifest is the uplink's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// ID is the uplink capsule's id (its manifest's package name).
const ID = "astrid-uplink"

// Socket is the address the uplink listens on: the kernel resolves run://
// to $ASTRID_HOME/run, so the socket is $ASTRID_HOME/run/astrid.sock.
const Socket = "unix:run://astrid.sock"

// Settings are the operator's choices (config.toml [uplink], DESIGN §8).
type Settings struct {
	// OwnerUID is the daemon owner's uid; its peers act as "default"
	// unless Principals maps it. -1: nobody is the owner.
	OwnerUID int
	// Principals maps other peers' uids to principals; a uid in neither
	// is refused.
	Principals map[int]string
	// Allowed maps peers' uids to every principal they may ask to act as
	// in their hello (a client's --principal); Principals' is always
	// among them, as is "default" for the owner's uid.
	Allowed map[int][]string
	// MaxClients is how many clients may be connected at once.
	MaxClients int
	// ClientQueue is how many frames may wait for one client.
	ClientQueue int
	// HandshakeTimeout bounds the wait for a client's hello (0: 10 s).
	HandshakeTimeout time.Duration
	// EvictIdle is how long a client must have been quiet (no request
	// in flight, no frame either way) before, at a full table, a new
	// client may take its slot (0: 1 s); EvictIdleSubscribed is the same
	// for a client holding subscriptions, which may be waiting for a
	// turn's events (0: 60 s). admit.go.
	EvictIdle           time.Duration
	EvictIdleSubscribed time.Duration
	// Clients, when set, is told the number of clients connected each
	// time it changes, in order (the daemon's idle timer counts them).
	Clients func(n int)
	// Ingress narrows what one principal's clients may publish
	// (principal → patterns, each inside the uplink's allowlist:
	// CheckIngress); a principal not in it may publish the whole list.
	Ingress map[string][]string
	// Report answers the query op (query.go); nil answers every known
	// query "failed". The daemon sets it: what a query shows, and to whom,
	// is the daemon's to decide.
	Report Reporter
	// Load answers the load op: it loads or reloads installed capsule id
	// now and returns its status as JSON; nil refuses the op. It is
	// called only for a peer of the owner's uid (owner is passed on for
	// the daemon to check again). The daemon sets it.
	Load Loader
	// AttachMCP answers the attach_mcp op: it loads the MCP servers a
	// client's session brought (servers, as the client sent them) bound
	// to the client's request scope, which ends them when it closes, and
	// returns their tools; nil refuses the op. It is called only for a
	// peer of the owner's uid whose hello named a workspace. The daemon
	// sets it.
	AttachMCP MCPAttacher
}

// MCPAttacher loads a session's MCP servers into scope for principal (the
// attach_mcp op); it runs on the asking client's reader.
type MCPAttacher func(principal string, scope uint64, servers json.RawMessage) ([]string, error)

// Loader loads installed capsule id on behalf of a client (the load op);
// it runs on the asking client's reader, so it delays only that client.
type Loader func(id string, owner bool) (json.RawMessage, error)

// The defaults of the zero Settings fields.
const (
	defaultMaxClients       = 128
	defaultClientQueue      = 256
	defaultHandshakeTimeout = 10 * time.Second
	defaultEvictIdle        = time.Second
	defaultEvictIdleSubbed  = time.Minute
	// maxSubsPerClient bounds one client's subscriptions.
	maxSubsPerClient = 32
	// defaultPrincipal is who the daemon owner acts as.
	defaultPrincipal = "default"
)

func (s Settings) withDefaults() Settings {
	if s.MaxClients <= 0 {
		s.MaxClients = defaultMaxClients
	}
	if s.ClientQueue <= 0 {
		s.ClientQueue = defaultClientQueue
	}
	if s.HandshakeTimeout <= 0 {
		s.HandshakeTimeout = defaultHandshakeTimeout
	}
	if s.EvictIdle <= 0 {
		s.EvictIdle = defaultEvictIdle
	}
	if s.EvictIdleSubscribed <= 0 {
		s.EvictIdleSubscribed = defaultEvictIdleSubbed
	}
	return s
}

// mayActAs reports whether a peer of uid may ask to act as principal.
func (s Settings) mayActAs(uid int, principal string) bool {
	if p, ok := s.principalOf(uid); ok && p == principal {
		return true
	}
	if uid >= 0 && uid == s.OwnerUID && principal == defaultPrincipal {
		return true
	}
	return slices.Contains(s.Allowed[uid], principal)
}

// actsAs lists the principals a peer of uid may act as, its default first.
func (s Settings) actsAs(uid int) []string {
	var out []string
	if p, ok := s.principalOf(uid); ok {
		out = append(out, p)
	}
	if uid >= 0 && uid == s.OwnerUID && !slices.Contains(out, defaultPrincipal) {
		out = append(out, defaultPrincipal)
	}
	for _, p := range s.Allowed[uid] {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// principalOf maps a peer uid to its principal; ok is false for a peer who
// may not connect.
func (s Settings) principalOf(uid int) (string, bool) {
	if p, ok := s.Principals[uid]; ok {
		return p, true
	}
	if uid >= 0 && uid == s.OwnerUID {
		return defaultPrincipal, true
	}
	return "", false
}
