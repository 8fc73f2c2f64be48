package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/sessionmcp"
)

// loadWait bounds how long `capsule install` and `approve` wait for a
// running daemon to load the capsule: its engines' ready timeout (an MCP
// server's handshake, say) and room for the load around it.
const loadWait = runtime.DefaultReadyTimeout + 15*time.Second

// capsuleLoader is the uplink's load op, answered by rep: a running
// daemon loads an installed capsule when its client asks (DESIGN §8).
func capsuleLoader(rep *daemon.Reporter) uplink.Loader {
	return func(id string, owner bool) (json.RawMessage, error) {
		ctx, cancel := context.WithTimeout(context.Background(), loadWait)
		defer cancel()
		st, err := rep.Load(ctx, daemon.Viewer{Owner: owner}, id)
		if err != nil {
			return nil, err
		}
		return json.Marshal(st)
	}
}

// mcpAttacher is the uplink's attach_mcp op, answered by rep: a session's
// own MCP servers (astrid acp's editor's list) bound to its client's
// scope.
func mcpAttacher(rep *daemon.Reporter) uplink.MCPAttacher {
	return func(principal string, scope uint64, raw json.RawMessage) ([]string, error) {
		var servers []sessionmcp.Server
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, fmt.Errorf("the servers do not parse: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), loadWait)
		defer cancel()
		return rep.AttachMCP(ctx, principal, scope, servers)
	}
}

// loadInDaemon has the daemon running for home, if one does, load capsule
// id now (the command that installed or approved it returns once it
// serves) and says on w what came of it. No daemon: nothing to do, the
// next boot loads it. A capsule the daemon could not load is an error
// naming why (the files stay installed and approved).
func loadInDaemon(w io.Writer, home, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), loadWait)
	defer cancel()
	c, err := dialDaemon(ctx, home)
	if errors.Is(err, daemonclient.ErrNoDaemon) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("capsule %s is installed, but the running daemon could not be asked to load it (%w); it loads there at its next reload (kill -HUP, or astrid stop; astrid start)", id, err)
	}
	defer c.Close()
	var st runtime.Status
	if err := c.Load(id, loadWait, &st); err != nil {
		return fmt.Errorf("capsule %s is installed, but the running daemon did not load it: %w", id, err)
	}
	if st.State != capsule.Ready.String() || st.Error != "" {
		why := st.Error
		if why == "" {
			why = "its state is " + st.State
		}
		if st.State == capsule.Ready.String() {
			return fmt.Errorf("the running daemon did not load the new capsule %s; the one it ran before still serves: %s", id, oneLine(why, 500))
		}
		return fmt.Errorf("capsule %s is installed, but the running daemon could not load it: %s", id, oneLine(why, 500))
	}
	tools := "no tools"
	if len(st.Tools) > 0 {
		tools = "tools: " + strings.Join(st.Tools, ", ")
	}
	fmt.Fprintf(w, "astrid: the running daemon loaded capsule %s (%s)\n", id, tools)
	return nil
}
