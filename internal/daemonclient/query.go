package daemonclient

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// Query asks the daemon one query (uplinkwire.QueryCapsules,
// uplinkwire.QueryStatus) and decodes its answer into v. The daemon answers
// what this connection's principal may see; a query it does not know is an
// *Error with Code uplinkwire.CodeUnknownQuery.
func (c *Client) Query(query string, v any) error {
	r, err := c.request(uplinkwire.Frame{Op: uplinkwire.OpQuery, Query: query}, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(r.Payload, v); err != nil {
		return fmt.Errorf("daemon: query %s: the answer does not parse: %w", query, err)
	}
	return nil
}
