package config

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// MCP is what the operator lets MCP servers ask of Astrid.
type MCP struct {
	// Sampling lists the capsules whose MCP servers may ask for sampling
	// (sampling/createMessage): the request runs on the principal's active
	// model after the person approves it, like a tool call. Every other
	// capsule's request is refused (the default: a server must not spend
	// the person's model budget unasked). The same list lets a capsule's
	// tool, called through astrid mcp serve, ask that MCP client's model.
	Sampling []string `toml:"sampling"`
	// SessionCommands lists the commands an editor's session may start
	// as its own MCP servers (ACP mcpServers, stdio): bare names found on
	// PATH or absolute paths. Empty (the default): none; each such server
	// is refused, saying this key allows it. HTTP servers need no entry
	// (the egress guard checks each connection).
	SessionCommands []string `toml:"session_commands"`
	// SessionRead lists directories those servers may read besides the
	// session's workspace (their own code: a global node_modules, a
	// virtualenv), absolute.
	SessionRead []string `toml:"session_read"`
}

// SamplingAllowed reports whether the MCP servers of capsule id may ask
// for sampling.
func (m MCP) SamplingAllowed(id string) bool { return slices.Contains(m.Sampling, id) }

func (m MCP) validate(bad func(key, format string, args ...any)) {
	for i, c := range m.SessionCommands {
		if c == "" || !filepath.IsAbs(c) && strings.ContainsRune(c, '/') {
			bad("mcp.session_commands["+strconv.Itoa(i)+"]", "%q is neither a bare command name (found on PATH) nor an absolute path", c)
		}
	}
	for i, d := range m.SessionRead {
		if !filepath.IsAbs(d) {
			bad("mcp.session_read["+strconv.Itoa(i)+"]", "%q is not an absolute path", d)
		}
	}
	for i, id := range m.Sampling {
		if err := manifest.ValidateID(id); err != nil {
			bad("mcp.sampling["+strconv.Itoa(i)+"]", "%q is not a capsule id: %v", id, err)
		}
	}
}
