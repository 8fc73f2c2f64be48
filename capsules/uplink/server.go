package uplink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/sdk"
)

// NewWith returns the constructor of an uplink under s, for a
// kernel.Builtin: {Manifest: uplink.Manifest, New: uplink.NewWith(s)}.
func NewWith(s Settings) func() *sdk.Capsule {
	s = s.withDefaults()
	return func() *sdk.Capsule {
		c := sdk.New("Serves the daemon's socket to the CLI")
		c.Serve(func(ctx context.Context, h hostapi.Host) error {
			return serve(ctx, h, s)
		})
		return c
	}
}

// server is one listening uplink.
type server struct {
	s  Settings
	h  hostapi.Host
	up hostapi.Uplink

	mu sync.Mutex
	// table is the clients connected, handshaken or handshaking; others
	// is how many of them are not the owner's; changed is closed and
	// replaced whenever one leaves (admit.go).
	table   map[*client]struct{}
	others  int
	changed chan struct{}
	traffic map[string]*traffic // per principal (query.go)
	freed   chan struct{}       // signalled when a socket handle is given back
	wg      sync.WaitGroup
}

// acceptWait bounds one accept, so the loop notices an unload even on a
// host whose accept were not cancelled with the call.
const acceptWait = 30 * time.Second

func serve(ctx context.Context, h hostapi.Host, s Settings) error {
	up, ok := h.(hostapi.Uplink)
	if !ok {
		return errors.New("uplink: this host cannot act for other principals (hostapi.Uplink)")
	}
	ln, err := h.NetBind(Socket)
	if err != nil {
		return fmt.Errorf("uplink: %w", err)
	}
	h.Log(hostapi.LogInfo, "uplink: listening on "+ln.Addr)
	srv := &server{s: s, h: h, up: up, freed: make(chan struct{}, 1), table: map[*client]struct{}{}, changed: make(chan struct{})}
	defer srv.wg.Wait()
	defer func() { _ = h.NetClose(ln.Handle) }()
	for ctx.Err() == nil {
		conn, err := h.NetAccept(ln.Handle, acceptWait)
		switch hostapi.CodeOf(err) {
		case hostapi.CodeOK:
		case hostapi.CodeTimeout:
			continue
		case hostapi.CodeRateLimited:
			// Every socket handle is taken: wait for one to be given back
			// (the connection waits in the backlog meanwhile).
			select {
			case <-srv.freed:
			case <-ctx.Done():
			}
			continue
		default:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("uplink: accept: %w", err)
		}
		srv.wg.Add(1)
		go srv.connection(ctx, conn)
	}
	return nil
}

// connection runs one accepted stream to its end.
func (srv *server) connection(ctx context.Context, conn hostapi.NetConn) {
	defer srv.wg.Done()
	defer srv.giveBack(conn.Handle)
	principal, ok := srv.s.principalOf(conn.Peer.UID)
	if !ok {
		srv.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: refused a peer with uid %d (pid %d): no principal is mapped to it ([uplink] principals)", conn.Peer.UID, conn.Peer.PID))
		srv.refuse(conn.Handle, uplinkwire.Errorf(0, uplinkwire.CodeRefused, "uid %d may not use this daemon", conn.Peer.UID))
		return
	}
	c := newClient(srv, conn.Handle, principal)
	c.owner = srv.s.OwnerUID >= 0 && conn.Peer.UID == srv.s.OwnerUID
	c.uid = conn.Peer.UID
	if !srv.admit(ctx, c) {
		why := fmt.Sprintf("the daemon serves at most %d clients at once", srv.s.MaxClients)
		if r := ownerReserve(srv.s.MaxClients); r > 0 && !c.owner {
			why += fmt.Sprintf(", %d of them only for its owner's uid", r)
		}
		why += ", and none has been idle long enough to give up its slot"
		srv.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: refused a client of %s: %s", principal, why))
		srv.refuse(conn.Handle, uplinkwire.Errorf(0, uplinkwire.CodeTooManyClients, "%s", why))
		return
	}
	defer srv.leave(c)
	c.ingress = srv.s.ingressOf(principal)
	c.traffic = srv.trafficOf(principal)
	c.traffic.connected(1)
	// The handshake may move the client to another of its uid's
	// principals (and counters): the last ones are given back.
	defer func() { c.traffic.connected(-1) }()
	c.run(ctx)
}

// refuse answers err and closes the stream.
func (srv *server) refuse(stream hostapi.NetHandle, f uplinkwire.Frame) {
	if b, err := uplinkwire.Encode(f); err == nil {
		_ = writeFramed(srv.h, stream, framed(b))
	}
}

// giveBack closes a stream and wakes an accept waiting for a handle.
func (srv *server) giveBack(stream hostapi.NetHandle) {
	_ = srv.h.NetClose(stream)
	select {
	case srv.freed <- struct{}{}:
	default:
	}
}
