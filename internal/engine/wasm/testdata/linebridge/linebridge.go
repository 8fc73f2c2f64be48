// Package linebridge is a third-party uplink as a wasm capsule: its service
// (run as the capsule's run loop, sdk/wasmrun) listens on loopback TCP and
// bridges a line protocol to the agent. A client sends
//
//	<principal> <prompt text>
//
// and gets back, for that principal, a line per approval question
// ("approve? <action> <resource>", answered by the client's next line, "y"
// or anything else) and the answer ("answer: <text>"); a refusal by the
// host is "error: <why>". It is built only for GOOS=wasip1 (testdata is
// outside ./...).
package linebridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	_ "github.com/astrid-go/astrid/sdk/wasmrun" // the service runs as the run loop
)

// New returns the capsule.
func New() *sdk.Capsule {
	c := sdk.New("bridges a line protocol on TCP to the agent")
	c.Serve(serve)
	return c
}

// wait bounds each wait in the host, well inside the run loop's 5-second
// progress window.
const wait = time.Second

func serve(_ context.Context, h hostapi.Host) error {
	up, ok := h.(hostapi.Uplink)
	if !ok {
		return fmt.Errorf("this host cannot act for other principals")
	}
	ln, err := h.NetBind("127.0.0.1:0")
	if err != nil {
		return err
	}
	addr, _ := json.Marshal(map[string]string{"addr": ln.Addr})
	if err := h.Publish("linebridge.v1.listening", addr); err != nil {
		return err
	}
	for {
		conn, err := h.NetAccept(ln.Handle, wait)
		if hostapi.CodeOf(err) == hostapi.CodeTimeout {
			continue
		}
		if err != nil {
			return err
		}
		session(h, up, &lines{h: h, handle: conn.Handle})
		_ = h.NetClose(conn.Handle)
	}
}

// session serves one client until it hangs up.
func session(h hostapi.Host, up hostapi.Uplink, l *lines) {
	for {
		line, ok := l.read()
		if !ok {
			return
		}
		principal, text, _ := strings.Cut(line, " ")
		if err := turn(h, up, l, principal, text); err != nil {
			l.write("error: " + err.Error())
		}
	}
}

// turn sends one prompt for principal and relays its questions and answer.
func turn(h hostapi.Host, up hostapi.Uplink, l *lines, principal, text string) error {
	answers, err := up.SubscribeAs(principal, ipc.AgentResponseTopic, nil)
	if err != nil {
		return err
	}
	defer h.Unsubscribe(answers)
	questions, err := up.SubscribeAs(principal, ipc.ApprovalRequestTopic, nil)
	if err != nil {
		return err
	}
	defer h.Unsubscribe(questions)
	prompt, _ := json.Marshal(ipc.UserInput{Text: text, SessionID: "line-" + principal})
	if err := up.PublishAs(principal, ipc.UserPromptTopic, prompt); err != nil {
		return err
	}
	for {
		if m, ok, err := h.Poll(questions); err != nil {
			return err
		} else if ok {
			var q ipc.ApprovalRequired
			if json.Unmarshal(m.Payload, &q) == nil && q.RequestID != "" {
				l.write("approve? " + q.Action + " " + q.Resource)
				reply, _ := l.read()
				decision := "deny"
				if reply == "y" {
					decision = "approve"
				}
				out, _ := json.Marshal(ipc.ApprovalResponse{RequestID: q.RequestID, Decision: decision})
				if err := up.PublishAs(principal, ipc.ApprovalResponseTopic(q.RequestID), out); err != nil {
					return err
				}
			}
		}
		m, err := h.Recv(answers, 100*time.Millisecond)
		if hostapi.CodeOf(err) == hostapi.CodeTimeout {
			continue
		}
		if err != nil {
			return err
		}
		var r ipc.AgentResponse
		if json.Unmarshal(m.Payload, &r) == nil && r.IsFinal {
			l.write("answer: " + r.Text)
			return nil
		}
	}
}

// lines reads and writes newline-ended lines on a stream.
type lines struct {
	h      hostapi.Host
	handle hostapi.NetHandle
	buf    []byte
}

func (l *lines) read() (string, bool) {
	for {
		if i := bytes.IndexByte(l.buf, '\n'); i >= 0 {
			line := string(l.buf[:i])
			l.buf = l.buf[i+1:]
			return strings.TrimSpace(line), true
		}
		data, err := l.h.NetRead(l.handle, 4096, wait)
		if hostapi.CodeOf(err) == hostapi.CodeTimeout {
			continue
		}
		if err != nil || len(data) == 0 {
			return "", false
		}
		l.buf = append(l.buf, data...)
	}
}

func (l *lines) write(s string) {
	_ = l.h.NetWrite(l.handle, []byte(s+"\n"))
}
