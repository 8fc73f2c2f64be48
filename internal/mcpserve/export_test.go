package mcpserve

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SetWindow changes how long s waits for the describe answers.
func SetWindow(s *Server, d time.Duration) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.opts.Window = d
}

// MCP is the go-sdk server, for the tests' in-memory transport
// (the server runs its own: ServeStdio, the HTTP handler).
func (s *Server) MCP() *mcp.Server { return s.srv }
