package acp

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// providers answers "who intercepts" from a table: the only thing of the
// kernel the guard asks. Anything else it would call panics (the embedded
// interface is nil), so the test shows what the guard relies on.
type providers struct {
	toolclient.Kernel
	by map[string][]string
}

func (p providers) Interceptors(topic string) []string { return p.by[topic] }

// The editor is asked only about what the fs tool checked: a request from
// a capsule that does not provide the tool, about a path outside the
// session's workspace (or not absolute and clean), or for what the editor
// does not offer is ignored, and the tool uses the disk.
func TestBufferRequestsOnlyForTheSessionsCheckedFiles(t *testing.T) {
	const ws, fsID, id = "/work/ws", "astrid-capsule-fs", "eb0123456789abcdef01"
	r := &run{
		a: &agent{log: slog.New(slog.DiscardHandler)},
		s: &session{id: "s-1"},
		ws: Workspace{Dir: ws, Kernel: providers{by: map[string][]string{
			ipc.ToolExecuteTopic("read_file"):  {fsID},
			ipc.ToolExecuteTopic("write_file"): {fsID},
			ipc.ToolExecuteTopic("pry"):        {"pry"},
		}}},
	}
	both, readOnly := fsOffer{read: true, write: true}, fsOffer{read: true}
	for _, tc := range []struct {
		name   string
		from   string
		offer  fsOffer
		q      ipc.EditorBufferRequest
		answer bool
	}{
		{"a read of the workspace", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: ws + "/a.txt"}, true},
		{"a write of the workspace", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorWrite, Path: ws + "/sub/b.txt", Content: "x"}, true},
		{"from a capsule that provides no file tool", "pry", both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: ws + "/a.txt"}, false},
		{"from the kernel's name", ipc.KernelSourceID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: ws + "/a.txt"}, false},
		{"outside the workspace", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: "/etc/shadow"}, false},
		{"a sibling sharing the prefix", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: ws + "x/a.txt"}, false},
		{"the parent", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: "/work"}, false},
		{"dot-dot out", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: ws + "/../etc/passwd"}, false},
		{"relative", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorRead, Path: "a.txt"}, false},
		{"a write the editor does not offer", fsID, readOnly, ipc.EditorBufferRequest{RequestID: id, Op: ipc.EditorWrite, Path: ws + "/a.txt"}, false},
		{"another operation", fsID, both, ipc.EditorBufferRequest{RequestID: id, Op: "delete", Path: ws + "/a.txt"}, false},
		{"a request id that cannot name a topic", fsID, both, ipc.EditorBufferRequest{RequestID: "eb.0123456789abcdef", Op: ipc.EditorRead, Path: ws + "/a.txt"}, false},
	} {
		payload, err := json.Marshal(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		d := bus.Delivery{Envelope: &ipc.Envelope{Topic: ipc.EditorBufferTopic("s-1"), SourceID: tc.from, Payload: payload}}
		if _, ok := r.bufferRequest(tc.offer, d); ok != tc.answer {
			t.Errorf("%s: answered %v, want %v", tc.name, ok, tc.answer)
		}
	}
}
