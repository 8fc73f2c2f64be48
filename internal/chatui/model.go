package chatui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// exitWindow is how soon a second Ctrl-C must follow the one that
// cancelled a running turn to leave as well. With no turn running, any
// second Ctrl-C in a row leaves.
const exitWindow = 2 * time.Second

// registryTimeout bounds each request to the provider registry (its
// discovery takes at most half a second; a loaded machine gets slack).
const registryTimeout = 10 * time.Second

// Options configure a chat.
type Options struct {
	// Kernel is the kernel as a frontend reaches it: the in-process
	// kernel's Frontend today, the daemon's socket once that exists.
	Kernel agentclient.Kernel
	// Principal the turns act for ("" is ipc.DefaultPrincipal).
	Principal string
	// SessionID continues that session; "" starts a new one.
	SessionID string
	// Provider and Model pin every turn's provider and model, as
	// `astrid -p --provider/--model` do, until /models chooses another.
	Provider, Model string
	// Workspace is the directory the turns act on, named in the status
	// line ("" names none).
	Workspace string
}

// Model is the chat's state. It is a tea.Model; New makes one.
type Model struct {
	ctx       context.Context
	be        backend
	principal string
	session   string
	provider  string
	model     string
	// activeModel is the registry's answer to "which model", shown in the
	// status line ("" until it answers).
	activeModel string
	// usage sums the tokens of this session's turns since chat showed it
	// (nil: none reported), costUSD their known prices, unpriced whether
	// some had none; the status line shows them.
	usage    *ipc.Usage
	costUSD  float64
	unpriced bool
	now      func() time.Time
	// width and height are the terminal's (height 0: not known yet).
	width, height int

	// The running turn (nil when idle); turnCtx bounds the wait for its
	// next event and stopNext ends it.
	turn       turn
	turnCtx    context.Context
	stopNext   context.CancelFunc
	starting   bool // a prompt is on its way; turn is not set yet
	cancelling bool // Ctrl-C asked this turn to end
	// streamed is the text of the turn's deltas, so that a final answer
	// repeating it is not shown twice.
	streamed  string
	blocks    []block
	approvals []ipc.ApprovalRequired
	// elicits are the capsules' questions waiting for a value (after the
	// approvals); answer is the line the first one's value is typed on.
	elicits []ipc.ElicitRequest
	answer  editor

	editor editor
	picker *picker
	notice string
	// commands are the capsules' slash commands (slash.go).
	commands commandState

	// armedAt is when the last Ctrl-C came; armed says it was the last key.
	armed    bool
	armedAt  time.Time
	quitting bool

	// outbox holds finished lines not yet printed above the UI; printing
	// says a print is on its way, so that prints stay in order.
	outbox   []string
	printing bool

	// md renders answers (markdown.go).
	md markdown
	// workspace is Options.Workspace, as the status line shows it;
	// workspaceDir as given (write approvals diff against its files).
	workspace, workspaceDir string
}

// New makes the chat's model; ctx bounds every request it makes.
func New(ctx context.Context, o Options) *Model {
	principal := o.Principal
	if principal == "" {
		principal = ipc.DefaultPrincipal
	}
	return newModel(ctx, kernelBackend{k: o.Kernel, principal: principal}, o)
}

func newModel(ctx context.Context, be backend, o Options) *Model {
	session := o.SessionID
	if session == "" {
		session = agentclient.NewSessionID()
	}
	principal := o.Principal
	if principal == "" {
		principal = ipc.DefaultPrincipal
	}
	return &Model{
		ctx: ctx, be: be, principal: principal, session: session,
		provider: o.Provider, model: o.Model, now: time.Now, width: 80,
		workspace: shortWorkspace(o.Workspace), workspaceDir: o.Workspace,
	}
}

// SessionID is the session the chat is in (it changes with /clear and
// /session <id>).
func (m *Model) SessionID() string { return m.session }

// Messages the model sends itself.
type (
	// startedMsg: the prompt went out (turn) or did not (err).
	startedMsg struct {
		turn turn
		err  error
	}
	// eventMsg is the next event of turn, or the error that ended the wait.
	eventMsg struct {
		turn turn
		ev   agentclient.Event
		err  error
	}
	// cancelGraceMsg: agentclient.CancelGrace passed since turn was asked
	// to cancel.
	cancelGraceMsg struct{ turn turn }
	// answerFailedMsg: an approval or elicit answer could not be sent.
	answerFailedMsg struct{ err error }
	// modelsMsg is the registry's list, for /models.
	modelsMsg struct {
		reply ipc.RegistryReply
		err   error
	}
	// activeModelMsg is the registry's answer about the active model, after
	// a start or a choice (chosen).
	activeModelMsg struct {
		reply  ipc.RegistryReply
		err    error
		chosen bool
	}
	// printedMsg: the last print above the UI is done.
	printedMsg struct{}
)

// Init asks the registry which model is active, for the status line.
func (m *Model) Init() tea.Cmd {
	be, ctx := m.be, m.ctx
	return tea.Batch(func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, registryTimeout)
		defer cancel()
		r, err := be.currentModel(ctx)
		return activeModelMsg{reply: r, err: err}
	}, m.loadCommands(""))
}
