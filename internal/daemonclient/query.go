package daemonclient

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// Query asks the daemon one query (uplinkwire.QueryCapsules,
// uplinkwire.QueryStatus) and decodes its answer into v. The daemon answers
// what this connection's principal may see; a query it does not know is an
// *Error with Code uplinkwire.CodeUnknownQuery.
func (c *Client) Query(query string, v any) error {
	return c.QueryWith(query, nil, v)
}

// QueryWith asks the daemon a query that takes arguments
// (uplinkwire.QueryRevokeApprovals), args sent as its JSON object (nil:
// none), and decodes its answer into v as Query does.
func (c *Client) QueryWith(query string, args, v any) error {
	f := uplinkwire.Frame{Op: uplinkwire.OpQuery, Query: query}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return fmt.Errorf("daemon: query %s: %w", query, err)
		}
		f.Args = raw
	}
	r, err := c.request(f, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(r.Payload, v); err != nil {
		return fmt.Errorf("daemon: query %s: the answer does not parse: %w", query, err)
	}
	return nil
}

// Load asks the daemon to load installed capsule id now, or reload it (the
// load op: what its watcher would do once the files settle), waits up to
// wait for the answer and decodes the capsule's status afterwards into v.
// Only a client of the daemon owner's uid may; another is refused with an
// *Error of Code uplinkwire.CodeNotAllowed.
func (c *Client) Load(id string, wait time.Duration, v any) error {
	r, err := c.requestWithin(uplinkwire.Frame{Op: uplinkwire.OpLoad, Capsule: id}, nil, wait)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(r.Payload, v); err != nil {
		return fmt.Errorf("daemon: load %s: the answer does not parse: %w", id, err)
	}
	return nil
}

// AttachMCP has the daemon load servers (a session's own MCP servers,
// encoded as sessionmcp.Server values) bound to this connection's
// workspace scope, waiting up to wait for them to start; they stop when
// the connection closes. It returns their tools.
func (c *Client) AttachMCP(servers any, wait time.Duration) ([]string, error) {
	payload, err := json.Marshal(servers)
	if err != nil {
		return nil, fmt.Errorf("daemon: attach_mcp: %w", err)
	}
	r, err := c.requestWithin(uplinkwire.Frame{Op: uplinkwire.OpAttachMCP, Payload: payload}, nil, wait)
	if err != nil {
		return nil, err
	}
	return r.IDs, nil
}
