package uplink

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// Query is one client's question about the daemon (the query op), as the
// uplink hands it to Settings.Report. The uplink decides neither what a
// query answers nor what the asker may see: it says who asks and adds
// what only it counts (the socket's clients and bytes).
type Query struct {
	// Name is the query (uplinkwire.QueryCapsules, uplinkwire.QueryStatus).
	Name string
	// Principal is who the asking connection acts as.
	Principal string
	// Owner is true when the peer's uid is the daemon owner's (who can
	// read the daemon's run directory anyway), whichever principal that
	// uid is mapped to.
	Owner bool
	// Socket is every principal's traffic on the socket; the reporter
	// shows the asker what its view allows.
	Socket map[string]Traffic
	// Args is the query's arguments as the client sent them (a JSON
	// object; nil when none): the reporter reads them.
	Args json.RawMessage
}

// Traffic is one principal's use of the socket since the uplink started.
type Traffic struct {
	Clients  int    // connected now
	BytesIn  uint64 // frames read from its clients, length prefixes included
	BytesOut uint64 // frames queued for its clients, length prefixes included
}

// Reporter answers a query with its JSON payload. The daemon sets one
// (Settings.Report); it runs on the asking client's reader.
type Reporter func(q Query) (json.RawMessage, error)

// traffic is one principal's counters; the server holds one per principal
// that ever connected (they are the configured principals, so few).
type traffic struct {
	mu                sync.Mutex
	clients           int
	bytesIn, bytesOut uint64
}

func (t *traffic) add(in, out int) {
	t.mu.Lock()
	t.bytesIn += uint64(in)
	t.bytesOut += uint64(out)
	t.mu.Unlock()
}

func (t *traffic) connected(delta int) {
	t.mu.Lock()
	t.clients += delta
	t.mu.Unlock()
}

func (t *traffic) snapshot() Traffic {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Traffic{Clients: t.clients, BytesIn: t.bytesIn, BytesOut: t.bytesOut}
}

// trafficOf returns principal's counters, made on first use.
func (srv *server) trafficOf(principal string) *traffic {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	t := srv.traffic[principal]
	if t == nil {
		t = &traffic{}
		if srv.traffic == nil {
			srv.traffic = map[string]*traffic{}
		}
		srv.traffic[principal] = t
	}
	return t
}

// socketTraffic is every principal's counters now.
func (srv *server) socketTraffic() map[string]Traffic {
	srv.mu.Lock()
	all := make(map[string]*traffic, len(srv.traffic))
	for p, t := range srv.traffic {
		all[p] = t
	}
	srv.mu.Unlock()
	out := make(map[string]Traffic, len(all))
	for p, t := range all {
		out[p] = t.snapshot()
	}
	return out
}

// query answers the query op: an unknown query is refused here, so every
// reporter sees only the queries the wire defines.
func (c *client) query(f uplinkwire.Frame) uplinkwire.Frame {
	if !slices.Contains(uplinkwire.Queries, f.Query) {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeUnknownQuery, "no query %q: this daemon answers %v", f.Query, uplinkwire.Queries)
	}
	report := c.srv.s.Report
	if report == nil {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "this uplink has no reporter: it answers no queries")
	}
	payload, err := report(Query{Name: f.Query, Principal: c.principal, Owner: c.owner, Socket: c.srv.socketTraffic(), Args: f.Args})
	if err != nil {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "%s: %v", f.Query, err)
	}
	return uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID, Payload: payload}
}

// maxCapsuleName bounds the capsule name of a load op (a manifest's
// package name is far shorter), so an error never echoes a long one.
const maxCapsuleName = 128

// load answers the load op: only a peer of the daemon owner's uid may load
// capsules (installing writes the owner's $ASTRID_HOME).
func (c *client) load(f uplinkwire.Frame) uplinkwire.Frame {
	load := c.srv.s.Load
	switch {
	case !c.owner:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotAllowed, "only the daemon owner's uid may load capsules")
	case load == nil:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "this uplink loads no capsules")
	case f.Capsule == "" || len(f.Capsule) > maxCapsuleName:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeBadFrame, "load: a capsule is named by 1 to %d bytes", maxCapsuleName)
	}
	payload, err := load(f.Capsule, c.owner)
	if err != nil {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "load %s: %v", f.Capsule, err)
	}
	return uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID, Payload: payload}
}

// attachMCP answers the attach_mcp op: a session's own MCP servers, bound
// to the connection's scope (its hello's workspace), which ends them when
// the connection closes. Only the owner's uid: the servers run as the
// daemon's user, confined to the workspace.
func (c *client) attachMCP(f uplinkwire.Frame) uplinkwire.Frame {
	attach := c.srv.s.AttachMCP
	scope := c.currentScope()
	switch {
	case !c.owner:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotAllowed, "only the daemon owner's uid may bring MCP servers to a session")
	case attach == nil:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "this uplink loads no session MCP servers")
	case scope == 0:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeWorkspace, "attach_mcp: the connection names no workspace (its hello's workspace) for the servers to run in")
	case len(f.Payload) == 0:
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeBadFrame, "attach_mcp: the payload lists the servers")
	}
	tools, err := attach(c.principal, scope, f.Payload)
	if err != nil {
		return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "attach_mcp: %v", err)
	}
	return uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID, IDs: tools}
}
