package mcp

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressOnlyForTheCallsOwnSession: a notification counts only when it
// carries a token the engine gave, on the session it gave it to, not too
// soon after the call's last one (unless it says the call is done), and
// not after the call ended.
func TestProgressOnlyForTheCallsOwnSession(t *testing.T) {
	var p progressCalls
	mine, other := &mcp.ClientSession{}, &mcp.ClientSession{}
	params := &mcp.CallToolParams{Name: "slow"}
	forget := p.track(params, nil, mine, "call-1", "srv:slow", nil)
	token := params.GetProgressToken()
	if token != "p1" {
		t.Fatalf("token %v, want the engine's own p1", token)
	}
	t0 := time.Unix(1000, 0)
	note := func(s *mcp.ClientSession, tok any, progress, total float64) *mcp.ProgressNotificationClientRequest {
		return &mcp.ProgressNotificationClientRequest{Session: s, Params: &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: progress, Total: total}}
	}
	steps := []struct {
		what string
		req  *mcp.ProgressNotificationClientRequest
		at   time.Duration
		want bool
	}{
		{"another session naming our token", note(other, token, 1, 5), 0, false},
		{"the call's id as the token", note(mine, "call-1", 1, 5), 0, false},
		{"a number token", note(mine, 1, 1, 5), 0, false},
		{"an unknown token", note(mine, "p2", 1, 5), 0, false},
		{"the first on its session", note(mine, token, 1, 5), 0, true},
		{"one right after", note(mine, token, 2, 5), progressGap / 2, false},
		{"one a gap later", note(mine, token, 3, 5), progressGap + progressGap/2, true},
		{"done, however soon", note(mine, token, 5, 5), progressGap + progressGap/2 + 1, true},
	}
	for _, s := range steps {
		pc, ok := p.take(s.req, t0.Add(s.at))
		if ok != s.want {
			t.Errorf("%s: taken %v, want %v", s.what, ok, s.want)
		}
		if ok && (pc.callID != "call-1" || pc.tool != "srv:slow") {
			t.Errorf("%s: call %+v", s.what, pc)
		}
	}
	forget()
	if _, ok := p.take(note(mine, token, 6, 0), t0.Add(time.Hour)); ok {
		t.Error("a notification after the call ended was taken")
	}
}

// A stdio call's answer waits until the handler has taken every progress
// notification read before it (whichever session's), and no longer than
// the call's done channel.
func TestProgressSettlesBeforeTheAnswer(t *testing.T) {
	var p progressCalls
	mine := &mcp.ClientSession{}
	params := &mcp.CallToolParams{Name: "slow"}
	forget := p.track(params, nil, mine, "call-1", "srv:slow", nil)
	token := params.GetProgressToken().(string)
	note := &mcp.ProgressNotificationClientRequest{Session: mine, Params: &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1}}
	other := &mcp.ProgressNotificationClientRequest{Session: &mcp.ClientSession{}, Params: &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 2}}
	p.read(token)
	p.read(token)
	p.read("p-unknown")
	p.take(note, time.Unix(1000, 0))
	p.handledOne(token) // published
	forgotten := make(chan struct{})
	go func() { forget(); close(forgotten) }()
	p.take(other, time.Unix(1001, 0)) // not taken...
	// ...and taking is not handling: the call still waits until the
	// handler is through with it (a report published after the call's end
	// would be lost).
	select {
	case <-forgotten:
		t.Fatal("the call ended before the handler was through with the last notification")
	default:
	}
	p.handledOne(token) // ...but handled
	select {
	case <-forgotten:
	case <-time.After(hangGuard):
		t.Fatal("the call still waits with every notification read handled")
	}

	// A notification read but never handled (the session ended) holds
	// the answer only until the call's done channel closes.
	done := make(chan struct{})
	forget = p.track(params, nil, mine, "call-2", "srv:slow", done)
	p.read(params.GetProgressToken().(string))
	close(done)
	forget()
}

func TestClipRunes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"", 3, ""}, {"abc", 3, "abc"}, {"abcd", 3, "abc…"}, {"ééééé", 2, "éé…"}} {
		if got := clipRunes(c.in, c.n); got != c.want {
			t.Errorf("clipRunes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
