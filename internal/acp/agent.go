package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/sessionmcp"
	"github.com/astrid-go/astrid/ipc"
)

var (
	_ acpsdk.Agent       = (*agent)(nil)
	_ acpsdk.AgentLoader = (*agent)(nil)
)

var errShuttingDown = errors.New("astrid acp is shutting down")

// askTimeout bounds a round trip to the session store or the registry.
const askTimeout = 10 * time.Second

// session is one ACP session: a session of the store, bound to a
// workspace, with at most one turn at a time.
type session struct {
	id string
	// cwd is the directory the editor named, the key its workspace is
	// opened again by (reconnect.go).
	cwd string

	// turn is a one-slot semaphore: the turn running, if any. A newer
	// prompt waits for the older one, which the SDK cancels first.
	turn chan struct{}

	mu       sync.Mutex
	ws       Workspace          // read with workspace(); changed by session/load and a reconnect
	cancel   context.CancelFunc // the running turn's, nil when idle
	provider string             // session/set_model; "" the registry's choice
	model    string
	recorded bool // its workspace is recorded in the store
	// own: ws is the session's alone (it brought MCP servers, mcp.go),
	// released with the session; servers are those, attached again on
	// a reconnect.
	own     bool
	servers []sessionmcp.Server
	// commands are the capsules' slash commands (commands.go).
	commands []commandclient.Command
}

// workspace is the session's way to the kernel now.
func (s *session) workspace() Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ws
}

func (s *session) cancelTurn() {
	s.mu.Lock()
	c := s.cancel
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

// Errors the editor gets, by JSON-RPC code.
func invalidParams(format string, args ...any) error {
	return &acpsdk.RequestError{Code: -32602, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &acpsdk.RequestError{Code: -32002, Message: "Resource not found: " + fmt.Sprintf(format, args...)}
}

func internal(format string, args ...any) error {
	return &acpsdk.RequestError{Code: -32603, Message: fmt.Sprintf(format, args...)}
}

// Initialize answers with our protocol version and what we take.
func (a *agent) Initialize(_ context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	offer := fsOffer{read: p.ClientCapabilities.Fs.ReadTextFile, write: p.ClientCapabilities.Fs.WriteTextFile}
	a.mu.Lock()
	a.fs = offer
	a.mu.Unlock()
	a.log.Info("acp: initialize", "client_protocol", p.ProtocolVersion, "editor_reads", offer.read, "editor_writes", offer.write)
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession: true,
			// Text, resource links and embedded resources (their
			// text goes into the prompt), images (a prompt with
			// images is refused when the session's model does not
			// take them: takesImages); no audio.
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			// stdio and HTTP servers are the session's own
			// (mcp.go), under the operator's rules; no SSE.
			McpCapabilities: acpsdk.McpCapabilities{Http: true},
		},
		AgentInfo:   &acpsdk.Implementation{Name: "astrid", Title: acpsdk.Ptr("Astrid"), Version: a.opts.Version},
		AuthMethods: []acpsdk.AuthMethod{},
	}, nil
}

// Authenticate has nothing to check: the editor runs astrid as the
// person's own process, and providers take their keys from the
// environment or `astrid capsule env set`.
func (a *agent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

// NewSession opens a session working on the editor's cwd.
func (a *agent) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	if !a.enter() {
		return acpsdk.NewSessionResponse{}, internal("%v", errShuttingDown)
	}
	defer a.leave()
	servers, err := editorServers(p.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	ws, own, err := a.openSession(ctx, p.Cwd, servers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	s := &session{id: agentclient.NewSessionID(), cwd: filepath.Clean(p.Cwd), ws: ws, own: own, servers: servers, turn: make(chan struct{}, 1)}
	a.add(s)
	a.log.Info("acp: new session", "session", s.id, "workspace", ws.Dir)
	defer a.loadCommands(s)
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.id), Models: a.models(ctx, s)}, nil
}

// open checks the editor's cwd and opens its workspace.
func (a *agent) open(ctx context.Context, cwd string) (Workspace, error) {
	if !filepath.IsAbs(cwd) {
		return Workspace{}, invalidParams("cwd %q is not an absolute path", cwd)
	}
	ws, err := a.workspace(ctx, filepath.Clean(cwd))
	if err != nil {
		if errors.Is(err, errShuttingDown) {
			return Workspace{}, internal("%v", err)
		}
		return Workspace{}, invalidParams("cwd: %v", err)
	}
	return ws, nil
}

func (a *agent) add(s *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sessions[s.id] = s
}

func (a *agent) session(id acpsdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[string(id)]
	if !ok {
		return nil, notFound("no session %q in this connection (session/new or session/load opens one)", string(id))
	}
	return s, nil
}

// models is the registry's model list with the session's current one, or
// nil when no registry answers.
func (a *agent) models(ctx context.Context, s *session) *acpsdk.SessionModelState {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	list, err := registryclient.List(ctx, s.workspace().Kernel, a.opts.Principal)
	if err != nil {
		a.log.Info("acp: no model list for the editor", "err", err)
		return nil
	}
	st := &acpsdk.SessionModelState{AvailableModels: []acpsdk.ModelInfo{}}
	for _, m := range list.Providers {
		info := acpsdk.ModelInfo{ModelId: acpsdk.ModelId(m.ID), Name: m.ID}
		if m.Description != "" {
			info.Description = acpsdk.Ptr(m.Description)
		}
		st.AvailableModels = append(st.AvailableModels, info)
	}
	s.mu.Lock()
	chosen := s.provider
	if chosen != "" {
		chosen += ":" + s.model
	}
	s.mu.Unlock()
	switch {
	case chosen != "":
		st.CurrentModelId = acpsdk.ModelId(chosen)
	case list.ActiveModel != nil:
		st.CurrentModelId = acpsdk.ModelId(list.ActiveModel.ID)
	}
	return st
}

// UnstableSetSessionModel makes the session's later turns ask model id
// ("<provider>:<model>", one of the registry's): the prompt's context, as
// astrid -p --provider --model, for this session only.
func (a *agent) UnstableSetSessionModel(ctx context.Context, p acpsdk.UnstableSetSessionModelRequest) (acpsdk.UnstableSetSessionModelResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.UnstableSetSessionModelResponse{}, err
	}
	id := string(p.ModelId)
	provider, model, ok := strings.Cut(id, ":")
	if !ok || provider == "" || model == "" || strings.Contains(provider, ".") || ipc.ValidateTopic(ipc.LLMGenerateTopic(provider)) != nil {
		return acpsdk.UnstableSetSessionModelResponse{}, invalidParams("model %q: want <provider>:<model>, as astrid models list names them", id)
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	list, err := registryclient.List(ctx, s.workspace().Kernel, a.opts.Principal)
	if err != nil {
		return acpsdk.UnstableSetSessionModelResponse{}, internal("the provider registry did not answer: %v", err)
	}
	known := false
	for _, m := range list.Providers {
		known = known || m.ID == id
	}
	if !known {
		return acpsdk.UnstableSetSessionModelResponse{}, invalidParams("model %q is not offered (astrid models list)", id)
	}
	s.mu.Lock()
	s.provider, s.model = provider, model
	s.mu.Unlock()
	a.log.Info("acp: session model set", "session", s.id, "model", id)
	return acpsdk.UnstableSetSessionModelResponse{}, nil
}

// LoadSession binds a stored session to the editor's cwd and replays its
// history as session/update notifications before answering.
func (a *agent) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	if !a.enter() {
		return acpsdk.LoadSessionResponse{}, internal("%v", errShuttingDown)
	}
	defer a.leave()
	id := string(p.SessionId)
	if err := sessionclient.ValidSessionID(id); err != nil {
		return acpsdk.LoadSessionResponse{}, invalidParams("%v", err)
	}
	servers, err := editorServers(p.McpServers)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	ws, own, err := a.openSession(ctx, p.Cwd, servers)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	kept := false
	defer func() {
		if own && !kept {
			release(ws)
		}
	}()
	actx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	if _, ok, err := sessionclient.Meta(actx, ws.Kernel, a.opts.Principal, id); err != nil {
		return acpsdk.LoadSessionResponse{}, internal("the session store did not answer: %v", err)
	} else if !ok {
		return acpsdk.LoadSessionResponse{}, notFound("no session %q of principal %s (astrid session list shows them)", id, a.opts.Principal)
	}
	msgs, err := sessionclient.Messages(actx, ws.Kernel, a.opts.Principal, id)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, internal("the session store did not answer: %v", err)
	}
	a.mu.Lock()
	s, ok := a.sessions[id]
	a.mu.Unlock()
	if ok {
		if err := a.acquire(ctx, s); err != nil {
			return acpsdk.LoadSessionResponse{}, err
		}
		s.releaseOwn()
		s.mu.Lock()
		s.ws, s.cwd, s.recorded, s.own, s.servers = ws, filepath.Clean(p.Cwd), false, own, servers
		s.mu.Unlock()
		kept = true
		<-s.turn
	} else {
		s = &session{id: id, cwd: filepath.Clean(p.Cwd), ws: ws, own: own, servers: servers, turn: make(chan struct{}, 1)}
	}
	if err := a.replay(ctx, s, msgs); err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	a.add(s)
	kept = true // a new session's workspace is released with it from now on
	a.log.Info("acp: session loaded", "session", id, "workspace", ws.Dir, "messages", len(msgs))
	defer a.loadCommands(s)
	return acpsdk.LoadSessionResponse{Models: a.models(ctx, s)}, nil
}

// replay sends a stored history as the updates a live turn would have
// sent: the person's messages, the agent's text, each tool call with its
// result.
func (a *agent) replay(ctx context.Context, s *session, msgs []ipc.Message) error {
	ws := s.workspace()
	send := func(u acpsdk.SessionUpdate) error {
		return a.conn.SessionUpdate(ctx, acpsdk.SessionNotification{SessionId: acpsdk.SessionId(s.id), Update: u})
	}
	names := map[string]string{}
	for _, m := range msgs {
		var err error
		switch {
		case m.Content.Kind == ipc.ContentText && m.Role == ipc.RoleUser:
			err = send(acpsdk.UpdateUserMessageText(m.Content.Text))
		case m.Content.Kind == ipc.ContentText && m.Role == ipc.RoleAssistant:
			err = send(acpsdk.UpdateAgentMessageText(m.Content.Text))
		case m.Content.Kind == ipc.ContentMultiPart && m.Role == ipc.RoleUser:
			for _, part := range m.Content.Parts {
				switch {
				case err != nil:
				case part.Type == ipc.PartText:
					err = send(acpsdk.UpdateUserMessageText(part.Text))
				case part.Type == ipc.PartImage:
					err = send(acpsdk.UpdateUserMessage(acpsdk.ImageBlock(part.Data, part.MediaType)))
				}
			}
		case m.Content.Kind == ipc.ContentToolCalls:
			for _, c := range m.Content.ToolCalls {
				names[c.ID] = c.Name
				title, kind, locs := describeCall(ws.Dir, c.Name, c.Arguments)
				_, input := parseArgs(c.Arguments)
				opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(kind), acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending), acpsdk.WithStartRawInput(input)}
				if len(locs) > 0 {
					opts = append(opts, acpsdk.WithStartLocations(locs))
				}
				if d, ok := diffOf(ws.Dir, c.Name, c.Arguments, nil); ok {
					opts = append(opts, acpsdk.WithStartContent([]acpsdk.ToolCallContent{d}))
				}
				if err == nil {
					err = send(acpsdk.StartToolCall(acpsdk.ToolCallId(c.ID), title, opts...))
				}
			}
		case m.Content.Kind == ipc.ContentToolResult:
			r := m.Content.ToolResult
			status := acpsdk.ToolCallStatusCompleted
			if r.IsError {
				status = acpsdk.ToolCallStatusFailed
			}
			err = send(acpsdk.UpdateToolCall(acpsdk.ToolCallId(r.CallID), acpsdk.WithUpdateStatus(status),
				acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(cut(r.Content, 4096)))})))
		}
		if err != nil {
			return internal("the history was not sent: %v", err)
		}
	}
	return nil
}

// cut is s cut to at most n bytes on a rune boundary, marked.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Cancel cancels the session's running turn (the SDK has already ended
// its prompt's context, which does the same); an idle session has nothing
// to cancel. A cancel is a notification: nothing answers it, so one for
// a session this connection does not have is only logged (an error
// would be logged again by the SDK, on the editor's log, as a failure).
func (a *agent) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		a.log.Info("acp: cancel for a session this connection does not have", "session", string(p.SessionId))
		return nil
	}
	s.cancelTurn()
	return nil
}

// CloseSession cancels the session's turn and forgets it here (the store
// keeps it: session/load opens it again).
func (a *agent) CloseSession(_ context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acpsdk.CloseSessionResponse{}, err
	}
	s.cancelTurn()
	a.mu.Lock()
	delete(a.sessions, s.id)
	a.mu.Unlock()
	s.releaseOwn()
	return acpsdk.CloseSessionResponse{}, nil
}

// ListSessions is not offered (no sessionCapabilities.list).
func (a *agent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionList)
}

// ResumeSession is not offered (no sessionCapabilities.resume).
func (a *agent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not offered (no config options).
func (a *agent) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetConfigOption)
}

// SetSessionMode is not offered (no modes).
func (a *agent) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetMode)
}
