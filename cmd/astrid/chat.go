package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/chatui"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// chatFlags are the flags of `astrid chat`.
type chatFlags struct {
	kernelFlags
	provider string
	model    string
	session  string
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

For now astrid chat boots the kernel in-process, as astrid -p does (logs go to
$ASTRID_HOME/logs/chat.log, not the screen); once astrid daemon exists it will attach
to the running daemon instead. It needs a terminal; scripts use astrid -p.`,
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
	k, ctx, stop, err := chatKernel(cmd, f.kernelFlags)
	if err != nil {
		return err
	}
	defer stop()
	session, err := chatui.Run(ctx, chatui.Options{
		Kernel: k, Principal: f.principal, SessionID: f.session, Provider: f.provider, Model: f.model,
	}, in, out)
	fmt.Fprintf(out, "session %s (continue with astrid -p --session %s, or astrid chat --session %s)\n", session, session, session)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// chatKernel is where astrid chat finds its kernel — the one place to
// change when the daemon exists (attach to its socket, start one if none
// runs). Today it boots one in-process, as astrid -p does, with the
// kernel's log in $ASTRID_HOME/logs/chat.log so that it does not write
// over the UI.
func chatKernel(cmd *cobra.Command, f kernelFlags) (agentclient.Kernel, context.Context, func(), error) {
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
	f.background = true
	k, ctx, stop, err := bootKernel(cmd, f)
	cmd.SetErr(stderr)
	if err != nil {
		logFile.Close()
		return nil, nil, nil, err
	}
	return k.Frontend(), ctx, func() { stop(); logFile.Close() }, nil
}
