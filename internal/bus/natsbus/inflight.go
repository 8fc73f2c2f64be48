package natsbus

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// LostCall is a tool call this host forwarded to a provider on other hosts,
// all of which were lost before the call was answered (DESIGN §9: a host
// that disappears mid-call is detected and the caller gets a failure reply).
type LostCall struct {
	CallID    string
	Tool      string
	Principal string
	// Host is the host lost last, the one that was running the call.
	Host string
	// Reason says how the loss was detected.
	Reason string
}

// Why a host is taken as lost.
const (
	LostLeft     = "it left the bus"
	LostSilent   = "it has not announced itself for three presence intervals"
	LostOwnLink  = "this host lost its NATS connection"
	LostShutdown = "its NATS node shut down"
)

// maxRemoteCalls bounds the calls tracked at once; beyond it a call is
// still forwarded, only not answered by this host if its host is lost (the
// caller then waits for its deadline, as without tracking).
const maxRemoteCalls = 1 << 16

// remoteCallAge is how long a call whose answer this host never saw (its
// router refused the result, or was reloaded) is tracked: longer than any
// tool call's deadline.
const remoteCallAge = time.Hour

// inflight is the tool calls published on this host whose providers are all
// on other hosts, by call id, with the hosts chosen to run them (elect.go).
// A call is forgotten when the consolidated result for it is published
// here, when it is answered as lost, or after remoteCallAge.
type inflight struct {
	mu    sync.Mutex
	calls map[string]*remoteCall
}

type remoteCall struct {
	tool, principal string
	hosts           []string
	since           time.Time
}

// track observes an envelope this host forwards: a tool call published
// here whose providers are all elsewhere starts being tracked; the
// router's consolidated result ends it. Anything else costs one prefix
// check.
func (t *Transport) track(e *ipc.Envelope, view *peerView) {
	if t.opts.CallLost == nil || !strings.HasPrefix(e.Topic, "tool.v1.execute.") {
		return
	}
	if e.Topic == ipc.ToolExecuteResultTopic {
		if id := resultCallID(e.Payload); id != "" {
			t.calls.mu.Lock()
			delete(t.calls.calls, id)
			t.calls.mu.Unlock()
		}
		return
	}
	tool, ok := ipc.ToolNameFromExecuteTopic(e.Topic)
	if !ok || t.providedHere(e.Topic) {
		return
	}
	var req ipc.ToolExecuteRequest
	if err := req.UnmarshalJSON(e.Payload); err != nil || req.CallID == "" {
		return
	}
	var hosts []string
	for _, capsule := range exactInterceptors(view.hosts, e.Topic) {
		if h := electedIn(view.ids, view, capsule, t.opts.HostID, e.Seq, ""); h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return
	}
	c := &t.calls
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = make(map[string]*remoteCall)
	}
	if len(c.calls) >= maxRemoteCalls {
		t.log.Warn("natsbus: too many tool calls in flight on other hosts; this one is not answered if its host is lost", "call_id", req.CallID)
		return
	}
	c.calls[req.CallID] = &remoteCall{tool: tool, principal: e.Principal, hosts: hosts, since: time.Now()}
}

// providedHere reports whether a capsule attached here intercepts topic
// exactly: this host's dispatcher then ran the call itself. It reads a
// snapshot, so that Forward never waits behind an Attach.
func (t *Transport) providedHere(topic string) bool {
	m := t.intercepted.Load()
	return m != nil && (*m)[topic]
}

// resultCallID is a tool_execute_result's call id, "" if it has none.
func resultCallID(payload []byte) string {
	if id, _, ok := ipc.ToolResultCallIDs(payload); ok {
		return id
	}
	var res ipc.ToolExecuteResult
	if res.UnmarshalJSON(payload) != nil {
		return ""
	}
	return res.CallID
}

// hostLost answers, through Options.CallLost, the tracked calls that only
// host was still running.
func (t *Transport) hostLost(host, reason string) {
	t.answerLost(reason, func(h string) bool { return h == host })
}

// answerLost removes the hosts lost says are lost from every tracked call
// and answers the calls left with none.
func (t *Transport) answerLost(reason string, lost func(host string) bool) {
	if t.opts.CallLost == nil {
		return
	}
	var answers []LostCall
	now := time.Now()
	c := &t.calls
	c.mu.Lock()
	for id, rc := range c.calls {
		if now.Sub(rc.since) > remoteCallAge {
			delete(c.calls, id)
			continue
		}
		last := ""
		rc.hosts = slices.DeleteFunc(rc.hosts, func(h string) bool {
			if lost(h) {
				last = h
				return true
			}
			return false
		})
		if len(rc.hosts) == 0 {
			delete(c.calls, id)
			answers = append(answers, LostCall{CallID: id, Tool: rc.tool, Principal: rc.principal, Host: last, Reason: reason})
		}
	}
	c.mu.Unlock()
	for _, a := range answers {
		t.log.Warn("natsbus: a tool call's host was lost; answering the caller", "call_id", a.CallID, "tool", a.Tool, "lost_host", a.Host, "reason", reason)
		t.opts.CallLost(a)
	}
}

// RemoteCalls is the number of tool calls this host is tracking on other
// hosts.
func (t *Transport) RemoteCalls() int {
	t.calls.mu.Lock()
	defer t.calls.mu.Unlock()
	return len(t.calls.calls)
}
