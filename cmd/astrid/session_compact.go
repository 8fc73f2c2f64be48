package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// compactTimeout bounds `astrid session compact`: one model request.
const compactTimeout = 10 * time.Minute

func newSessionCompactCmd() *cobra.Command {
	var f kernelFlags
	var provider, model string
	cmd := &cobra.Command{
		Use:   "compact <session id>",
		Short: "Summarize a session's older messages so its next turns send less",
		Long: `Asks the model to summarize the session's history up to its last question; the
turns that follow send that summary in place of the messages it covers. The
session store keeps every message (astrid session show prints them all).

The agent does the same on its own before a request would pass its threshold
of the model's context window (react's [env] compact_threshold_pct, 80 % by
default; docs/agent.md, "Context window").

Exit status: 0 when compacted, 1 when nothing was (the reason is printed:
no such session, nothing old enough, the model failed or returned an empty
summary; the history is then unchanged).`,
		Example: `  astrid session compact s-3f2a…
  astrid session compact s-3f2a… --provider openai --model gpt-5.4-nano`,
		Args: oneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if provider != "" && (strings.Contains(provider, ".") || ipc.ValidateTopic(ipc.LLMGenerateTopic(provider)) != nil) {
				return usage(cmd, fmt.Errorf("--provider %q: a provider is named by one topic segment (replay, openai, anthropic)", provider))
			}
			fe, ctx, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			look, cancelLook := context.WithTimeout(ctx, sessionTimeout)
			_, ok, err := sessionclient.Meta(look, fe.k, f.principal, args[0])
			cancelLook()
			if err != nil {
				return fmt.Errorf("session %s: the session store did not answer: %w", args[0], err)
			}
			if !ok {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: no session %s (astrid session list shows them)\n", args[0])
				return exitError{code: 1}
			}
			ctx, cancel := context.WithTimeout(ctx, compactTimeout)
			defer cancel()
			final, err := agentclient.Run(ctx, fe.k, agentclient.Prompt{Principal: f.principal, SessionID: args[0],
				Context: ipc.PromptContext{Action: ipc.ActionCompact, Provider: provider, Model: model}}, nil)
			if err != nil {
				return fmt.Errorf("session %s: %w", args[0], err)
			}
			if final.Outcome != ipc.OutcomeCompacted {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s\n", final.Text)
				return exitError{code: 1}
			}
			fmt.Fprintln(cmd.OutOrStdout(), final.Text)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&provider, "provider", "", "LLM provider to write the summary (default: the active model's)")
	cmd.Flags().StringVar(&model, "model", "", "model to write the summary (default: the active model)")
	return cmd
}
