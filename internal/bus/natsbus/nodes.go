package natsbus

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// nodeShutdownSubject is the system event a NATS node sends its cluster as
// it shuts down: $SYS.SERVER.<server id>.SHUTDOWN.
const nodeShutdownSubject = "$SYS.SERVER.*.SHUTDOWN"

// watchNodes has a host that embeds a cluster node hear the other nodes
// shut down: a host whose node is gone has lost the bus, whether or not it
// could say it was leaving, and the requests it was handling are answered at
// once rather than when its silence times out. The watching connection
// joins the server's system account and may only subscribe to that event;
// the losses of routes to other nodes go through it too (routes.go).
// Without an embedded server (an external cluster) it does nothing: the
// cluster's system account is the operator's, not the host's.
func (t *Transport) watchNodes() error {
	if t.opts.Server == nil || t.opts.RequestLost == nil {
		return nil
	}
	sys := t.opts.Server.SystemAccount()
	if sys == nil {
		return nil
	}
	user := "host:" + t.opts.HostID + ":nodes"
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Deny: []string{">"}},
		Subscribe: &server.SubjectPermission{Allow: []string{nodeShutdownSubject}},
	}
	secret := t.opts.Auth.IssueIn(user, perms, sys)
	nc, err := nats.Connect("", nats.InProcessServer(t.opts.Server), nats.UserInfo(user, secret),
		nats.Name("astrid "+t.opts.HostID+" nodes"), nats.ErrorHandler(t.asyncError))
	if err != nil {
		t.opts.Auth.Revoke(user)
		return fmt.Errorf("watch the cluster's nodes: %w", err)
	}
	if _, err := nc.Subscribe(nodeShutdownSubject, t.nodeShutdown); err != nil {
		nc.Close()
		t.opts.Auth.Revoke(user)
		return fmt.Errorf("watch the cluster's nodes: %w", err)
	}
	t.nodesConn = nc
	t.watchRoutes(t.opts.Server, nc)
	return nil
}

// nodeShutdown forgets the hosts whose node shut down and answers the
// requests they were handling.
func (t *Transport) nodeShutdown(m *nats.Msg) {
	id := strings.TrimSuffix(strings.TrimPrefix(m.Subject, "$SYS.SERVER."), ".SHUTDOWN")
	t.nodeGone(id, LostShutdown, "natsbus: host lost: its NATS node shut down")
}

// nodeGone forgets the hosts on the embedded node server (a node id other
// than this host's), whose loss was detected as reason, and answers the
// requests they were handling. An announcement from one of them arriving
// later does not bring it back (heard).
func (t *Transport) nodeGone(id, reason, msg string) {
	if id == "" || id == t.opts.Server.ID() {
		return
	}
	p := &t.presence
	p.mu.Lock()
	if p.shutDown == nil || len(p.shutDown) >= maxShutDown {
		p.shutDown = map[string]struct{}{}
	}
	p.shutDown[id] = struct{}{}
	gone := t.dropPeersLocked(func(_ string, h HostInfo) bool { return h.Server == id })
	p.mu.Unlock()
	for _, hid := range gone {
		t.log.Warn(msg, "lost_host", hid, "server", id)
		t.hostLost(hid, reason)
	}
}
