package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/chatui"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// chatFlags are the flags of `astrid chat`.
type chatFlags struct {
	kernelFlags
	provider string
	model    string
	session  string
	cont     bool
}

func newChatCmd() *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk with the agent in an interactive terminal UI",
		Long: `Opens a conversation with the agent in this terminal. Answers stream in as the
model writes them; each tool call shows while it runs and folds to one line when done;
a tool call that changes things is asked about inline (y once, s this session,
a always, n deny). /clear starts a new session, /session shows its id (or continues
another), /models lists the models and chooses one, /help lists the keys.
Ctrl-C cancels the running turn; pressed twice, or with no turn running, it leaves.
The session is named at the end: continue it with astrid -p --session <id>.

astrid chat talks to the running daemon of $ASTRID_HOME; when none runs it starts one
(as astrid start does, on --workspace or the current directory) and says so; astrid stop
ends it, and with [daemon] idle_exit set in config.toml it stops by itself after that long
with no client and no turn. --no-daemon boots the kernel in-process instead (its log in
$ASTRID_HOME/logs/chat.log, not the screen). It needs a terminal; scripts use astrid -p.`,
		Example: `  astrid chat
  astrid chat --session s-0123abcd
  astrid chat --provider replay --workspace /tmp/project`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "LLM provider to ask (default: the active model's; /models chooses another)")
	fl.StringVar(&f.model, "model", "", "model to ask; alone, the active provider's")
	fl.StringVar(&f.session, "session", "", "continue this session (default: a new one)")
	fl.BoolVar(&f.cont, "continue", false, "continue the newest session of this workspace (--workspace, else the current directory)")
	f.kernelFlags.register(cmd)
	return cmd
}

func runChat(cmd *cobra.Command, f *chatFlags) error {
	in, inOK := cmd.InOrStdin().(*os.File)
	out, outOK := cmd.OutOrStdout().(*os.File)
	if !inOK || !outOK || !isTerminal(in) || !isTerminal(out) {
		return usage(cmd, errors.New(`astrid chat needs a terminal; in a script use astrid -p "prompt"`))
	}
	if f.session != "" {
		if err := sessionclient.ValidSessionID(f.session); err != nil {
			return usage(cmd, fmt.Errorf("--session: %w", err))
		}
	}
	if f.provider != "" {
		if err := ipc.ValidateTopic(ipc.LLMGenerateTopic(f.provider)); err != nil || strings.Contains(f.provider, ".") {
			return usage(cmd, fmt.Errorf("--provider %q: a provider is named by one topic segment (replay, openai, anthropic)", f.provider))
		}
	}
	if f.cont && f.session != "" {
		return usage(cmd, errors.New("--continue and --session each name the session to continue; give one"))
	}
	ws, err := sessionWorkspace(f.kernelFlags)
	if err != nil {
		return err
	}
	k, started, ctx, stop, err := chatKernel(cmd, f.kernelFlags)
	if err != nil {
		return err
	}
	defer func() { stop() }() // stop is replaced when the session moves the chat
	if f.session != "" {
		// A session works on its own workspace, from wherever it is
		// continued (DESIGN §4a), as with astrid -p --session.
		moved, err := chatSessionWorkspace(cmd, ctx, k, f.principal, f.session, ws)
		if err != nil {
			return err
		}
		if moved != "" {
			stop()
			f.workspace, ws = moved, moved
			if k, _, ctx, stop, err = chatKernel(cmd, f.kernelFlags); err != nil {
				stop = func() {}
				return err
			}
		}
	}
	if started != 0 {
		// Said again on the way out: the daemon outlives the chat.
		defer fmt.Fprintf(out, "the daemon this chat started (pid %d) still runs; astrid stop ends it%s\n", started, idleExitNote())
	}
	if f.cont {
		if f.session, err = newestSession(ctx, k, f.principal, ws); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
			return exitError{code: 2}
		}
	}
	session, err := chatui.Run(ctx, chatui.Options{
		Kernel: k, Principal: f.principal, SessionID: f.session, Provider: f.provider, Model: f.model, Workspace: ws,
	}, in, out)
	recordWorkspace(context.WithoutCancel(ctx), k, f.principal, session, ws)
	fmt.Fprintf(out, "session %s (continue with astrid -p --session %s, or astrid chat --session %s)\n", session, session, session)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// chatStartTimeout bounds how long astrid chat waits for the daemon it
// starts (or finds starting) to serve.
const chatStartTimeout = time.Minute

// chatKernel is where astrid chat finds its kernel: the running daemon of
// $ASTRID_HOME, started first (as astrid start does, saying so) when none
// runs. --no-daemon boots one in-process instead, as astrid -p does, with
// the kernel's log in $ASTRID_HOME/logs/chat.log so that it does not write
// over the UI.
// started is the pid of the daemon it started (0: none).
func chatKernel(cmd *cobra.Command, f kernelFlags) (k agentclient.Kernel, started int, ctx context.Context, stop func(), err error) {
	if noDaemon, _ := cmd.Flags().GetBool(noDaemonFlag); noDaemon {
		k, ctx, stop, err = chatInProcess(cmd, f)
		return k, 0, ctx, stop, err
	}
	fe, ctx, stop, err := attachDaemon(cmd, f)
	if errors.Is(err, daemonclient.ErrNoDaemon) {
		if started, err = ensureDaemon(cmd, f); err != nil {
			return nil, 0, nil, nil, err
		}
		fe, ctx, stop, err = attachDaemon(cmd, f)
	}
	if err != nil {
		return nil, 0, nil, nil, err
	}
	return fe.k, started, ctx, stop, nil
}

// ensureDaemon starts the daemon of $ASTRID_HOME on f's workspace (the
// current directory by default) and tells the person so, returning its
// pid; a daemon already starting is waited for instead (pid 0).
func ensureDaemon(cmd *cobra.Command, f kernelFlags) (int, error) {
	home, err := config.Home()
	if err != nil {
		return 0, err
	}
	if pid, err := daemon.Running(home); err == nil {
		for deadline := time.Now().Add(chatStartTimeout); !serves(home); time.Sleep(pollInterval) {
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("the daemon of %s (pid %d) did not serve within %s; see %s", home, pid, chatStartTimeout, daemon.PathsOf(home).Log)
			}
		}
		return 0, nil
	}
	if err := daemon.CheckHome(home); err != nil {
		return 0, err
	}
	ws := f.workspace
	if ws == "" {
		if ws, err = os.Getwd(); err != nil {
			return 0, err
		}
	}
	pid, err := startDetached(home, ws, startedByChat, chatStartTimeout)
	if err != nil {
		return 0, fmt.Errorf("no daemon runs for %s and starting one failed: %w", home, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "astrid chat: no daemon ran for %s; started one (pid %d, workspace %s); astrid stop ends it%s\n", home, pid, ws, idleExitNote())
	return pid, nil
}

// chatInProcess boots the kernel in-process for astrid chat --no-daemon,
// its log in $ASTRID_HOME/logs/chat.log.
func chatInProcess(cmd *cobra.Command, f kernelFlags) (agentclient.Kernel, context.Context, func(), error) {
	home, err := config.Home()
	if err != nil {
		return nil, nil, nil, err
	}
	logDir := filepath.Join(home, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("chat log: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(logDir, "chat.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("chat log: %w", err)
	}
	stderr := cmd.ErrOrStderr()
	cmd.SetErr(logFile) // bootKernel logs to the command's stderr
	// Every capsule is loaded before the first prompt can go out, as for
	// astrid -p (DESIGN §8).
	k, ctx, stop, err := bootKernel(cmd, f)
	cmd.SetErr(stderr)
	if err != nil {
		logFile.Close()
		return nil, nil, nil, err
	}
	sayUnloaded(stderr, k.Runtime.List())
	return k.Frontend(), ctx, func() { stop(); logFile.Close() }, nil
}

// startedByChat is what astrid chat passes a daemon it starts by itself
// (astrid daemon --started-by): only such a daemon has an idle timer.
const startedByChat = "chat"

// idleExitNote says, when [daemon] idle_exit is set, that a daemon chat
// started stops by itself once idle that long; "" otherwise.
func idleExitNote() string {
	home, err := config.Home()
	if err != nil {
		return ""
	}
	cfg, err := config.Load(filepath.Join(home, "config.toml"))
	if err != nil || cfg.Daemon.IdleExit.Duration <= 0 {
		return ""
	}
	return fmt.Sprintf(", or it stops by itself after %s with no client and no turn ([daemon] idle_exit)", cfg.Daemon.IdleExit)
}

// chatSessionWorkspace checks that the session to continue exists and
// returns the workspace it recorded when that is not ws ("" when the chat
// stays where it is), saying on stderr that the chat moves there.
func chatSessionWorkspace(cmd *cobra.Command, ctx context.Context, ak agentclient.Kernel, principal, id, ws string) (string, error) {
	k, ok := ak.(toolclient.Kernel)
	if !ok {
		return "", nil // a kernel that cannot answer session questions: the chat says so itself
	}
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	meta, ok, err := sessionclient.Meta(ctx, k, principal, id)
	switch {
	case err != nil:
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: --session %s: the session store did not answer: %v\n", id, err)
		return "", exitError{code: 1}
	case !ok:
		return "", usage(cmd, fmt.Errorf("--session %s: no such session of principal %s (astrid session list shows them; leave --session out to start a new one)", id, principal))
	}
	if move, err := sessionMoves(cmd, id, meta.Workspace, ws); err != nil || !move {
		return "", err
	}
	return meta.Workspace, nil
}
