package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// promptFlags are the flags of `astrid -p`.
type promptFlags struct {
	kernelFlags
	prompt   string
	provider string
	model    string
	session  string
	cont     bool
	yes      bool
	// unconfined: --dangerously-unconfined (approve.go)
	unconfined bool
	asJSON     bool
	timeout    time.Duration
}

func (f *promptFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.prompt, "prompt", "p", "", `run one agent turn on this prompt ("-" or empty with a pipe: read it from standard input; text piped along with a prompt is appended to it)`)
	fl.StringVar(&f.provider, "provider", "", "LLM provider to ask for this run (default: the active model's, astrid models current)")
	fl.StringVar(&f.model, "model", "", "model to ask for this run; alone, the active provider's (default: the active model, or with --provider the provider's own)")
	fl.StringVar(&f.session, "session", "", "continue this session, which must exist (default: a new one, named on stderr at the end)")
	fl.BoolVar(&f.cont, "continue", false, "continue the newest session of this workspace (--workspace, else the current directory)")
	fl.BoolVar(&f.yes, "yes", false, "approve every mutable tool call the agent makes (each once); never a process outside the sandbox")
	fl.BoolVar(&f.unconfined, dangerouslyUnconfined, false, "with --yes, also approve running processes OUTSIDE the sandbox when a tool asks to (full authority over your files, network and processes)")
	fl.BoolVar(&f.asJSON, "json", false, "print every event of the turn as one JSON line on stdout")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up on the turn after this long (exit 124)")
	f.kernelFlags.register(cmd)
}

// maxPromptBytes is the largest prompt: the bus's largest message, less
// room for the envelope around the text.
const maxPromptBytes = 1<<20 - 4<<10

// promptText is the prompt of -p: the flag's value, or standard input
// when it is "-" or when -p was given empty and stdin is not a terminal.
// With text in the flag, what is piped on standard input (a pipe or a
// file, never a terminal) is appended after a blank line, as upstream does
// (`git diff | astrid -p "review this"`): never dropped.
func promptText(cmd *cobra.Command, f *promptFlags) (string, error) {
	text := f.prompt
	in := cmd.InOrStdin()
	fromStdin := text == "-"
	if text == "" {
		if file, ok := in.(*os.File); !ok || !isTerminal(file) {
			fromStdin = true
		}
	}
	if fromStdin {
		data, err := io.ReadAll(io.LimitReader(in, maxPromptBytes+1))
		if err != nil {
			return "", fmt.Errorf("read the prompt from standard input: %w", err)
		}
		text = string(data)
	} else if piped(in) {
		data, err := io.ReadAll(io.LimitReader(in, maxPromptBytes+1))
		if err != nil {
			return "", fmt.Errorf("read standard input (piped with -p text, it is appended to the prompt): %w", err)
		}
		if strings.TrimSpace(string(data)) != "" {
			text += "\n\n" + string(data)
		}
	}
	switch {
	case len(text) > maxPromptBytes:
		return "", fmt.Errorf("the prompt is over %d KiB, the largest the bus carries in one message; put the text in a file of the workspace and ask the agent to read it", maxPromptBytes>>10)
	case strings.TrimSpace(text) == "":
		return "", errors.New(`the prompt is empty: astrid -p "your question" (or pipe it on standard input)`)
	}
	return text, nil
}

// piped reports whether in is standard input fed by a pipe or a file,
// whose text belongs to the prompt: not a terminal, and not a character
// device such as /dev/null (a script's or a service's empty stdin).
func piped(in io.Reader) bool {
	file, ok := in.(*os.File)
	if !ok {
		return false
	}
	info, err := file.Stat()
	if err != nil {
		return false
	}
	mode := info.Mode()
	return mode&os.ModeNamedPipe != 0 || mode.IsRegular()
}

// runPrompt is `astrid -p`: one agent turn, through the running daemon or
// in-process.
func runPrompt(cmd *cobra.Command, f *promptFlags) error {
	text, err := promptText(cmd, f)
	if err != nil {
		return usage(cmd, err)
	}
	session := f.session
	if session == "" {
		session = agentclient.NewSessionID()
	} else if err := sessionclient.ValidSessionID(session); err != nil {
		return usage(cmd, fmt.Errorf("--session: %w", err))
	}
	if f.provider != "" {
		if err := ipc.ValidateTopic(ipc.LLMGenerateTopic(f.provider)); err != nil || strings.Contains(f.provider, ".") {
			return usage(cmd, fmt.Errorf("--provider %q: a provider is named by one topic segment (replay, openai, anthropic)", f.provider))
		}
	}
	// Any capsule may serve the turn (a tool the model calls, a provider,
	// a hook), so an in-process boot loads them all before the prompt goes
	// out: each load is bounded by its own ready timeout, and one that did
	// not load is named (DESIGN §8).
	approve := newApprover(f.yes, cmd.ErrOrStderr())
	approve.unconfined = f.unconfined
	f.person = approve
	if f.cont && f.session != "" {
		return usage(cmd, errors.New("--continue and --session each name the session to continue; give one"))
	}
	ws, err := sessionWorkspace(f.kernelFlags)
	if err != nil {
		return err
	}
	fe, ctx, stop, err := openFrontend(cmd, f.kernelFlags)
	if err != nil {
		return err
	}
	defer func() { stop() }()
	if f.cont {
		if session, err = newestSession(ctx, fe.k, f.principal, ws); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
			return exitError{code: 2}
		}
	}
	fe.sayUnloaded(cmd.ErrOrStderr())
	if f.session != "" {
		// Continuing a session that does not exist is a mistake (a typo,
		// another principal's or workspace's id), not a new conversation.
		meta, ok, err := sessionclient.Meta(ctx, fe.k, f.principal, f.session)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: --session %s: the session store did not answer: %v\n", f.session, err)
			return exitError{code: 1}
		} else if !ok {
			return usage(cmd, fmt.Errorf("--session %s: no such session of principal %s (astrid session list shows them; leave --session out to start a new one)", f.session, f.principal))
		}
		// A session works on its own workspace, from wherever it is
		// continued (DESIGN §4a).
		if fe, ctx, err = followSession(cmd, fe, ctx, &stop, &f.kernelFlags, f.session, meta.Workspace, ws); err != nil {
			return err
		}
	}
	interrupted := ctx
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()

	printer := newTurnPrinter(cmd.OutOrStdout(), cmd.ErrOrStderr(), f.asJSON)
	prompt := agentclient.Prompt{
		Principal: f.principal, SessionID: session, Text: text,
		Context: ipc.PromptContext{Provider: f.provider, Model: f.model},
	}
	final, err := runUntilTaken(ctx, cmd.ErrOrStderr(), func() (ipc.AgentResponse, error) {
		return runTurn(ctx, fe.k, prompt, printer, approve, cmd.ErrOrStderr())
	})
	if note := agentclient.StandIn(final); note != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", note)
	}
	if final.Outcome == ipc.OutcomeBusy {
		printer.final(final)
	} else if f.session == "" && !f.cont {
		// A new session: recorded under this workspace for --continue.
		setWorkspace(interrupted, fe.k, f.principal, session, ws)
	}
	if !f.asJSON {
		if line := usageLine(final); line != "" {
			fmt.Fprintln(cmd.ErrOrStderr(), line)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "session %s (continue with --session %s)\n", session, session)
	}
	switch {
	case err == nil && final.Outcome == ipc.OutcomeBusy && interrupted.Err() != nil:
		fmt.Fprintln(cmd.ErrOrStderr(), "astrid: interrupted while the agent was busy; nothing ran")
		return exitError{code: 130}
	case err == nil && final.Outcome == ipc.OutcomeBusy && ctx.Err() != nil:
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: the agent stayed busy with this principal's other turns for --timeout %s; nothing ran\n", f.timeout)
		return exitError{code: 124}
	case err == nil:
		if code := turnExitCode(final.Outcome); code != 0 {
			return exitError{code: code}
		}
		return nil
	case interrupted.Err() != nil:
		fmt.Fprintln(cmd.ErrOrStderr(), "astrid: interrupted; the turn was cancelled")
		return exitError{code: 130}
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: no answer within --timeout %s; the turn was cancelled\n", f.timeout)
		return exitError{code: 124}
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
	return exitError{code: 1}
}

// runTurn runs one turn of prompt, printing its events; a final response
// saying the agent was busy is left to the caller, which may send the
// prompt again.
func runTurn(ctx context.Context, k agentclient.Kernel, prompt agentclient.Prompt, printer *turnPrinter, approve *approver, stderr io.Writer) (ipc.AgentResponse, error) {
	return agentclient.Run(ctx, k, prompt, func(t *agentclient.Turn, ev agentclient.Event) {
		switch ev.Kind {
		case agentclient.EventDelta:
			printer.delta(ev.Delta)
		case agentclient.EventToolStarted:
			printer.toolStarted(ev.ToolStarted)
		case agentclient.EventToolFinished:
			printer.toolFinished(ev.ToolFinished)
		case agentclient.EventToolProgress:
			printer.toolProgress(ev.ToolProgress)
		case agentclient.EventCompacted:
			printer.compacted(ev.Compacted)
		case agentclient.EventApproval:
			printer.approval(ev.Approval)
			if err := t.Answer(ev.Approval.RequestID, approve.decide(ctx, ev.Approval)); err != nil {
				fmt.Fprintln(stderr, "astrid: the approval answer was not delivered:", err)
			}
		case agentclient.EventElicit:
			if err := t.AnswerElicit(approve.elicit(ctx, ev.Elicit)); err != nil {
				fmt.Fprintln(stderr, "astrid: the answer was not delivered:", err)
			}
		case agentclient.EventFinal:
			if ev.Final.Outcome != ipc.OutcomeBusy {
				printer.final(ev.Final)
			}
		}
	})
}
