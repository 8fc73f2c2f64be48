package undo

import (
	_ "embed"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the capsule's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// ID is the capsule's id (its manifest's package name).
const ID = "astrid-capsule-undo"

// Topics: undo is a session request (the CLI's session client may send it).
const (
	RequestTopic  = "session.v1.request.undo"
	responseTopic = "session.v1.response.undo.*"
)

// Bounds on what is kept.
const (
	// MaxFileBytes is the largest prior content kept of one file; a larger
	// file's change is recorded, and undo says it cannot restore it.
	MaxFileBytes = 512 << 10
	// MaxSessionBytes caps the prior contents kept for one session; past
	// it, the oldest turns' records go first.
	MaxSessionBytes = 32 << 20
	// MaxTurns is how many turns that changed files a session keeps.
	MaxTurns = 20
)

// The tools whose changes are kept, with their path arguments.
var tracked = map[string][]string{
	"write_file":      {"file_path"},
	"replace_in_file": {"file_path"},
	"delete_file":     {"file_path"},
	"move_file":       {"source_path", "destination_path"},
}

// The tools whose changes are out of reach: a turn that ran one says so.
var unreachable = map[string]bool{
	"run_shell_command":        true,
	"spawn_background_process": true,
}

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Keeps what the fs tools overwrite in a turn, so the turn can be undone")
	c.Handle(ipc.ToolRequestExecuteTopic, "handle_tool_request", handleToolRequest)
	c.Handle(ipc.AgentToolStartedTopic, "handle_tool_started", handleToolStarted)
	c.Handle(ipc.AgentToolFinishedTopic, "handle_tool_finished", handleToolFinished)
	c.Handle(RequestTopic, "handle_undo", handleUndo)
	c.Handle(sessionDeletedTopic, "handle_session_deleted", handleSessionDeleted)
	c.Publishes(responseTopic)
	return c
}
