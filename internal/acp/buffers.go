package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// The editor's buffers (docs/acp.md): when the editor declared
// fs.readTextFile or fs.writeTextFile in initialize, the fs capsule asks a
// turn's session, on ipc.EditorBufferTopic(session id), for the buffer of a
// path its grants already allowed; the turn answers by asking the editor
// (fs/read_text_file, fs/write_text_file). This package touches no file:
// the editor reads and writes, and only paths the fs tool checked, inside
// the session's workspace, are put to it.

// fsOffer is what the editor offers of its file system.
type fsOffer struct{ read, write bool }

func (o fsOffer) any() bool { return o.read || o.write }

// offers is what the editor declared in initialize.
func (a *agent) offers() fsOffer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fs
}

// serveBuffers answers the fs tool's requests for the session's buffers
// until the returned stop is called; it subscribes before the turn starts,
// so no request of the turn finds nobody listening. When the editor offers
// nothing it subscribes to nothing: the tool's request then finds nobody
// and the tool goes to the disk at once.
func (r *run) serveBuffers() (stop func(), err error) {
	offer := r.a.offers()
	if !offer.any() {
		return func() {}, nil
	}
	caller := dispatch.Caller{Capsule: agentclient.ClientID, Principal: r.a.opts.Principal}
	sub, err := r.ws.Kernel.Subscribe(caller, ipc.EditorBufferTopic(r.s.id), true)
	if err != nil {
		return nil, fmt.Errorf("acp: subscribe to the editor buffer requests of session %s: %w", r.s.id, err)
	}
	ctx, cancel := context.WithCancel(r.a.hard)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			// Each on its own: a slow editor holds up only its request.
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.buffer(ctx, offer, caller, d)
			}()
		}
	}()
	return func() {
		cancel()
		sub.Close()
		wg.Wait()
	}, nil
}

// buffer answers one request for a buffer. A request that is not the fs
// tool's, not about a path inside the session's workspace, or for what the
// editor does not offer is ignored (the tool's wait ends on its own and it
// uses the disk); a failure of the editor is answered with why, so the
// tool goes to the disk at once.
func (r *run) buffer(ctx context.Context, offer fsOffer, caller dispatch.Caller, d bus.Delivery) {
	q, ok := r.bufferRequest(offer, d)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, ipc.EditorBufferWait)
	defer cancel()
	reply := ipc.EditorBufferReply{RequestID: q.RequestID}
	switch q.Op {
	case ipc.EditorRead:
		resp, err := r.a.conn.ReadTextFile(ctx, acpsdk.ReadTextFileRequest{SessionId: acpsdk.SessionId(r.s.id), Path: q.Path})
		if err != nil {
			reply.Error = err.Error()
		} else {
			reply.Content = resp.Content
		}
	case ipc.EditorWrite:
		if _, err := r.a.conn.WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: acpsdk.SessionId(r.s.id), Path: q.Path, Content: q.Content}); err != nil {
			reply.Error = err.Error()
		}
	}
	if reply.Error != "" {
		r.a.log.Info("acp: the editor gave no buffer; the fs tool uses the disk", "session", r.s.id, "op", q.Op, "path", q.Path, "err", reply.Error)
	}
	payload, err := json.Marshal(reply)
	if err == nil {
		// The answer lets admitted work go on: the CPU budget never
		// refuses it.
		caller.Continues = true
		_, err = r.ws.Kernel.Publish(caller, ipc.EditorBufferReplyTopic(q.RequestID), payload)
	}
	if err != nil {
		r.a.log.Warn("acp: the editor's buffer was not sent back", "session", r.s.id, "err", err)
	}
}

// bufferRequest is d as a request this session answers: from the capsule
// that provides the tool the operation belongs to (read_file, write_file:
// the one that checked the path against its grants), for an operation the
// editor offers, about an absolute path inside the session's workspace.
func (r *run) bufferRequest(offer fsOffer, d bus.Delivery) (ipc.EditorBufferRequest, bool) {
	e := d.Envelope
	var q ipc.EditorBufferRequest
	if json.Unmarshal(ipc.GuestBytes(e.Payload), &q) != nil || q.Validate() != nil {
		r.a.log.Warn("acp: a malformed editor buffer request was ignored", "session", r.s.id, "from", e.SourceID)
		return q, false
	}
	tool, offered := "read_file", offer.read
	if q.Op == ipc.EditorWrite {
		tool, offered = "write_file", offer.write
	}
	switch {
	case !slices.Contains(r.ws.Kernel.Interceptors(ipc.ToolExecuteTopic(tool)), e.SourceID):
		r.a.log.Warn("acp: an editor buffer request from a capsule that does not provide "+tool+" was ignored", "session", r.s.id, "from", e.SourceID)
		return q, false
	case !offered:
		return q, false
	case !inside(r.ws.Dir, q.Path):
		r.a.log.Warn("acp: an editor buffer request outside the session's workspace was ignored", "session", r.s.id, "from", e.SourceID, "path", q.Path)
		return q, false
	}
	return q, true
}

// inside reports whether path (absolute, clean) is dir or below it.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
