package ipc

import (
	"fmt"
	"path/filepath"
	"time"
)

// An editor's buffers (ACP fs/read_text_file and fs/write_text_file,
// docs/acp.md): the fs capsule, once the grants allowed a read_file or
// write_file of an agent turn's call, asks the frontend of that turn's
// session for the open buffer of the checked absolute path. It sends an
// EditorBufferRequest as a request (DESIGN §4b) on
// EditorBufferTopic(session), which only that session's frontend listens
// on, and takes the first EditorBufferReply on EditorBufferReplyTopic(request
// id) from the agent frontend (AgentClientID) or an uplink relaying it.
// Nobody listening (the kernel answers at once), an error or
// EditorBufferWait passing leaves the call on the disk, as without an
// editor. docs/rationale/cli.md says why.
const (
	// EditorBufferPattern matches every session's request topic.
	EditorBufferPattern = "astrid.v1.editor.buffer.*"
	// EditorBufferReplyPattern matches every reply topic.
	EditorBufferReplyPattern = "astrid.v1.editor.reply.*"
	// EditorBufferWait bounds the wait for the editor: a read or write
	// never fails because the editor is slow, it goes to the disk.
	EditorBufferWait = 2 * time.Second
)

// The operations of an EditorBufferRequest.
const (
	EditorRead  = "read"
	EditorWrite = "write"
)

// AgentClientID is the frontend identity agent turns run under
// (internal/agentclient): the one an editor buffer's answer comes from
// when the frontend runs in the kernel's process.
const AgentClientID = "astrid-agent-client"

// EditorBufferTopic is where session's frontend is asked for a buffer.
func EditorBufferTopic(session string) string { return "astrid.v1.editor.buffer." + session }

// EditorBufferReplyTopic is where request id's answer comes.
func EditorBufferReplyTopic(id string) string { return "astrid.v1.editor.reply." + id }

// EditorBufferRequest asks a session's frontend to read the editor's text
// of Path (Op EditorRead) or to have the editor write Content there (Op
// EditorWrite).
type EditorBufferRequest struct {
	// RequestID names the request (16 to 64 of [A-Za-z0-9_-], random):
	// its answer comes on EditorBufferReplyTopic(RequestID).
	RequestID string `json:"request_id"`
	// CallID is the tool call the request serves.
	CallID string `json:"call_id"`
	Op     string `json:"op"`
	// Path is absolute, every symlink resolved, already checked against
	// the asking capsule's grants.
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
}

// Validate checks a request's shape; the frontend checks it again against
// its session's workspace.
func (r EditorBufferRequest) Validate() error {
	if n := len(r.RequestID); n < 16 || n > maxSampleRequestID || !ValidSessionID(r.RequestID) {
		return fmt.Errorf("editor buffer: request id %q: want 16 to %d of [A-Za-z0-9_-]", r.RequestID, maxSampleRequestID)
	}
	if r.Op != EditorRead && r.Op != EditorWrite {
		return fmt.Errorf("editor buffer: op %q: want %s or %s", r.Op, EditorRead, EditorWrite)
	}
	if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
		return fmt.Errorf("editor buffer: path %q is not a clean absolute path", r.Path)
	}
	return nil
}

// EditorBufferReply answers an EditorBufferRequest: the editor's text (a
// read) or its confirmation (a write, Content empty), or Error saying why
// there is none (the asker then uses the disk).
type EditorBufferReply struct {
	RequestID string `json:"request_id"`
	Content   string `json:"content,omitempty"`
	Error     string `json:"error,omitempty"`
}
