// Package netid runs scripts of net and identity host calls, so the wasm
// engine's tests can drive each import from a guest. It is built only for
// GOOS=wasip1 (testdata is outside ./...).
package netid

import (
	"encoding/json"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// step is one call. Handle names a handle directly, or (HandleOf > 0) the
// handle answered by step HandleOf-1 of the same script.
type step struct {
	Op        string                      `json:"op"`
	Addr      string                      `json:"addr,omitempty"`
	Host      string                      `json:"host,omitempty"`
	Port      int                         `json:"port,omitempty"`
	Handle    hostapi.NetHandle           `json:"handle,omitempty"`
	HandleOf  int                         `json:"handle_of,omitempty"`
	Max       int                         `json:"max,omitempty"`
	TimeoutMs int                         `json:"timeout_ms,omitempty"`
	Data      string                      `json:"data,omitempty"`
	Platform  string                      `json:"platform,omitempty"`
	Account   string                      `json:"account,omitempty"`
	User      string                      `json:"user,omitempty"`
	Link      hostapi.IdentityLinkRequest `json:"link"`
	NewUser   hostapi.IdentityNewUser     `json:"new_user"`
}

type answer struct {
	Code    hostapi.Code               `json:"code"`
	Message string                     `json:"message,omitempty"`
	Handle  hostapi.NetHandle          `json:"handle,omitempty"`
	Addr    string                     `json:"addr,omitempty"`
	Peer    *hostapi.NetPeer           `json:"peer,omitempty"`
	Data    string                     `json:"data,omitempty"`
	Found   bool                       `json:"found,omitempty"`
	User    *hostapi.IdentityUser      `json:"user,omitempty"`
	Links   []hostapi.IdentityLinkInfo `json:"links,omitempty"`
}

// New returns the capsule.
func New() *sdk.Capsule {
	c := sdk.New("runs scripts of net and identity calls")
	c.Handle("netid.v1.script", "script", func(c *sdk.Call) error {
		var steps []step
		if err := c.Decode(&steps); err != nil {
			return err
		}
		out := make([]answer, 0, len(steps))
		for _, s := range steps {
			if s.HandleOf > 0 {
				s.Handle = out[s.HandleOf-1].Handle
			}
			out = append(out, run(c, s))
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		c.Final(b)
		return nil
	})
	return c
}

func run(c *sdk.Call, s step) answer {
	var a answer
	var err error
	timeout := time.Duration(s.TimeoutMs) * time.Millisecond
	switch s.Op {
	case "connect":
		a.Handle, err = c.NetConnect(s.Host, s.Port)
	case "bind":
		var l hostapi.NetListener
		l, err = c.NetBind(s.Addr)
		a.Handle, a.Addr = l.Handle, l.Addr
	case "accept":
		var conn hostapi.NetConn
		conn, err = c.NetAccept(s.Handle, timeout)
		if err == nil {
			a.Handle, a.Peer = conn.Handle, &conn.Peer
		}
	case "read":
		var b []byte
		b, err = c.NetRead(s.Handle, s.Max, timeout)
		a.Data = string(b)
	case "write":
		err = c.NetWrite(s.Handle, []byte(s.Data))
	case "write_frame":
		err = sdk.WriteFrame(c, s.Handle, []byte(s.Data))
	case "read_frame":
		var b []byte
		b, err = sdk.ReadFrame(c, s.Handle, s.Max, timeout)
		a.Data = string(b)
	case "close":
		err = c.NetClose(s.Handle)
	case "resolve":
		var u hostapi.IdentityUser
		u, a.Found, err = c.IdentityResolve(s.Platform, s.Account)
		if a.Found {
			a.User = &u
		}
	case "link":
		err = c.IdentityLink(s.Link)
	case "unlink":
		err = c.IdentityUnlink(s.Platform, s.Account)
	case "links":
		a.Links, err = c.IdentityListLinks(s.User)
	case "create_user":
		var u hostapi.IdentityUser
		u, err = c.IdentityCreateUser(s.NewUser)
		if err == nil {
			a.User = &u
		}
	default:
		err = hostapi.Errorf(hostapi.CodeInvalid, "script", "no op %q", s.Op)
	}
	a.Code = hostapi.CodeOf(err)
	if err != nil {
		a.Message = err.Error()
	}
	return a
}
