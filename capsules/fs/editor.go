package fs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The editor's buffers (ipc.EditorBufferRequest, docs/acp.md): a
// read_file or write_file of an agent turn whose frontend is an editor
// offering its buffers reads the editor's text (unsaved changes) or has the
// editor write, once the grants allowed the path. Whatever goes wrong on
// the way leaves the call on the disk, as without an editor.

// callPrefix keys a call's session (volatile: meaningless after a restart).
const callPrefix = "~call/"

// buffered are the tools that use an editor's buffers.
var buffered = map[string]bool{"read_file": true, "write_file": true}

// handleToolStarted ties an agent turn's read_file or write_file call to
// its session: the agent announces a call before it sends it, and this
// capsule handles one principal's events in order, so the tie is there
// when the call comes. Only the agent loop (the capsule that takes
// user.v1.prompt) speaks for a session.
func handleToolStarted(c *sdk.Call) error {
	var ev ipc.AgentToolStarted
	if json.Unmarshal(c.Payload(), &ev) != nil || ev.CallID == "" || !buffered[ev.Name] || !ipc.ValidSessionID(ev.SessionID) {
		return nil
	}
	agents, err := c.Interceptors(ipc.UserPromptTopic)
	if err != nil || !slices.Contains(agents, c.SourceID()) {
		return nil
	}
	return c.KVSet(callPrefix+ev.CallID, []byte(ev.SessionID))
}

// handleToolFinished forgets the tie of a call that never came here (the
// person denied it, the turn was cancelled): the call's end is announced
// either way, so no tie outlives its call.
func handleToolFinished(c *sdk.Call) error {
	var ev ipc.AgentToolFinished
	if json.Unmarshal(c.Payload(), &ev) != nil || ev.CallID == "" || !buffered[ev.Name] {
		return nil
	}
	return c.KVDelete(callPrefix + ev.CallID)
}

// callSession is the session of the call c serves and its call id; ok is
// false for a call no agent turn announced (astrid tool, astrid mcp serve,
// the ACP frontend's own reads), which has no editor behind it. The tie is
// used once.
func callSession(c *sdk.Call) (session, callID string, ok bool) {
	var req ipc.ToolExecuteRequest
	if req.UnmarshalJSON(c.Payload()) != nil || req.CallID == "" {
		return "", "", false
	}
	raw, found, err := c.KVGet(callPrefix + req.CallID)
	if err != nil || !found {
		return "", "", false
	}
	_ = c.KVDelete(callPrefix + req.CallID)
	return string(raw), req.CallID, ipc.ValidSessionID(string(raw))
}

// errNoEditor says the session's frontend gave no buffer: the disk serves.
var errNoEditor = errors.New("no editor buffer")

// editorRead is the editor's text of path, which FSRead has just read
// (the grants allowed it), when the call's session has an editor that
// offers its buffers.
func editorRead(c *sdk.Call, path string) (string, error) {
	session, callID, ok := callSession(c)
	if !ok {
		return "", errNoEditor
	}
	abs, err := c.FSResolve(path, false)
	if err != nil {
		return "", errNoEditor
	}
	r, err := askEditor(c, session, ipc.EditorBufferRequest{CallID: callID, Op: ipc.EditorRead, Path: abs})
	if err != nil {
		return "", err
	}
	return r.Content, nil
}

// editorWrite has the editor write content to path, after the grants
// allowed writing it (FSResolve checks as FSWrite would), when the call's
// session has an editor that offers its buffers and the file exists (a new
// file has no buffer: the disk takes it). A nil error means the editor
// wrote it; errNoEditor that the disk must. A refusal by the grants is
// returned as it is.
func editorWrite(c *sdk.Call, path, content string) error {
	session, callID, ok := callSession(c)
	if !ok {
		return errNoEditor
	}
	abs, err := c.FSResolve(path, true)
	if hostapi.CodeOf(err) == hostapi.CodeDenied {
		return err
	}
	if err != nil {
		return errNoEditor
	}
	if _, err := askEditor(c, session, ipc.EditorBufferRequest{CallID: callID, Op: ipc.EditorWrite, Path: abs, Content: content}); err != nil {
		return errNoEditor
	}
	return nil
}

// askEditor sends q to session's frontend and waits, at most
// ipc.EditorBufferWait, for its answer; errNoEditor (logged at debug when
// something was there to ask) when none comes or it says why not.
func askEditor(c *sdk.Call, session string, q ipc.EditorBufferRequest) (ipc.EditorBufferReply, error) {
	sum := sha256.Sum256([]byte(q.CallID + "\x00" + q.Op + "\x00" + strconv.FormatInt(c.Now().UnixNano(), 10)))
	q.RequestID = "eb" + hex.EncodeToString(sum[:15])
	payload, err := json.Marshal(q)
	if err != nil {
		return ipc.EditorBufferReply{}, fmt.Errorf("editor buffer: %w", err)
	}
	from := func(source string) bool { return fromFrontend(c, source) }
	answer, err := sdk.RoundTripFrom(c, ipc.EditorBufferTopic(session), ipc.EditorBufferReplyTopic(q.RequestID), q.RequestID, payload, from, ipc.EditorBufferWait, "editor")
	var failed sdk.RequestFailedError
	switch {
	case errors.As(err, &failed):
		return ipc.EditorBufferReply{}, errNoEditor // nobody listens for this session, or it went
	case err != nil:
		c.Log(hostapi.LogInfo, fmt.Sprintf("fs: no buffer of %s (%v); the disk serves", q.Path, err))
		return ipc.EditorBufferReply{}, errNoEditor
	}
	var r ipc.EditorBufferReply
	if json.Unmarshal(ipc.GuestBytes(answer), &r) != nil || r.RequestID != q.RequestID {
		return ipc.EditorBufferReply{}, errNoEditor
	}
	if r.Error != "" {
		c.Log(hostapi.LogDebug, fmt.Sprintf("fs: the editor gave no buffer of %s (%s); the disk serves", q.Path, r.Error))
		return ipc.EditorBufferReply{}, errNoEditor
	}
	return r, nil
}

// fromFrontend reports whether source may answer for an editor: the agent
// frontend in the kernel's process, or an uplink relaying its client's
// answer (the subscription sees only this principal's messages).
func fromFrontend(c *sdk.Call, source string) bool {
	if source == ipc.AgentClientID {
		return true
	}
	held, err := c.HoldsGrant(source, hostapi.GrantUplink)
	return err == nil && held
}
