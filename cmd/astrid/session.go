package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/ipc"
)

// sessionTimeout bounds each request to the session store.
const sessionTimeout = 10 * time.Second

func newSessionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "List, show, compact and delete the agent's conversations",
		Long: `Sessions are the agent's conversation histories, kept by the session store capsule
per principal (another principal's sessions are invisible). Continue one with
astrid -p "..." --session <id>, or the newest of this workspace with --continue.`,
	}
	cmd.AddCommand(newSessionListCmd(), newSessionShowCmd(), newSessionDeleteCmd(), newSessionCompactCmd(), newSessionUndoCmd())
	return cmd
}

func newSessionListCmd() *cobra.Command {
	var f kernelFlags
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the principal's sessions, newest last",
		Long: `Lists the principal's sessions in the order they were last written, the newest
last (astrid -p --continue resumes the newest of the current workspace).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fe, ctx, stop, err := bootForSessions(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			list, err := sessionclient.List(ctx, fe.k, f.principal, all)
			if err != nil {
				return err
			}
			sessionclient.SortByTime(list)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), `no sessions yet; start one with astrid -p "..."`)
				return nil
			}
			rows := make([][]string, 0, len(list))
			for _, s := range list {
				rows = append(rows, []string{s.SessionID, strconv.Itoa(s.MessageCount), unixTime(s.UpdatedAt), s.Preview})
			}
			return writeTable(cmd.OutOrStdout(), []string{"SESSION", "MESSAGES", "UPDATED", "FIRST QUESTION"}, rows)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "include archived sessions")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON")
	return cmd
}

func newSessionShowCmd() *cobra.Command {
	var f kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <session id>",
		Short: "Print a session's messages",
		Long: `Prints a session's messages: what the user asked, the assistant's answers, and each
tool call with its result. When the agent compacted the session (astrid session compact, or on
its own near the model's context window), the summary it sends in place of the older messages
is printed where they end; every message is still shown. Exit status: 0 when shown, 1 when
there is no such session.`,
		Args: oneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			fe, ctx, stop, err := bootForSessions(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			meta, ok, err := sessionclient.Meta(ctx, fe.k, f.principal, args[0])
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: no session %s (astrid session list shows them)\n", args[0])
				return exitError{code: 1}
			}
			msgs, comp, err := sessionclient.History(ctx, fe.k, f.principal, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), msgs)
			}
			for i, m := range msgs {
				if comp != nil && i == comp.Upto {
					fmt.Fprintf(cmd.OutOrStdout(), "── the model is sent this summary in place of the %d messages above ──\n%s\n──\n", comp.Upto, comp.Summary)
				}
				writeMessage(cmd.OutOrStdout(), m)
			}
			if line := sessionUsageLine(meta); line != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), line)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the messages as JSON")
	return cmd
}

// sessionUsageLine is a session's token and cost totals ("" when its
// turns reported none): a cost known for only some requests is a lower
// bound, and says so.
func sessionUsageLine(s sessionclient.Summary) string {
	if s.Usage == nil {
		return ""
	}
	r := ipc.AgentResponse{Usage: s.Usage}
	if !s.Unpriced || s.CostUSD > 0 {
		r.CostUSD = &s.CostUSD
	}
	line := usageLine(r)
	if s.Unpriced && s.CostUSD > 0 {
		line += " (at least: some requests had no price)"
	}
	return line
}

func newSessionDeleteCmd() *cobra.Command {
	var f kernelFlags
	cmd := &cobra.Command{
		Use:   "delete <session id>",
		Short: "Delete a session's history",
		Long:  `Deletes a session. Exit status: 0 when deleted, 1 when there was no such session.`,
		Args:  oneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			fe, ctx, stop, err := bootForSessions(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			deleted, err := sessionclient.Delete(ctx, fe.k, f.principal, args[0])
			if err != nil {
				return err
			}
			if !deleted {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: no session %s\n", args[0])
				return exitError{code: 1}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "deleted session %s\n", args[0])
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// writeMessage prints one history message for a person: role, then text,
// tool calls or the tool result.
func writeMessage(w io.Writer, m ipc.Message) {
	switch m.Content.Kind {
	case ipc.ContentText:
		fmt.Fprintf(w, "%s: %s\n", m.Role, m.Content.Text)
	case ipc.ContentToolCalls:
		for _, c := range m.Content.ToolCalls {
			fmt.Fprintf(w, "%s: → %s %s\n", m.Role, c.Name, compactJSON(c.Arguments))
		}
	case ipc.ContentToolResult:
		r := m.Content.ToolResult
		mark := "←"
		if r.IsError {
			mark = "← error:"
		}
		fmt.Fprintf(w, "%s: %s %s\n", m.Role, mark, oneLine(r.Content, 200))
	default:
		b, _ := json.Marshal(m.Content)
		fmt.Fprintf(w, "%s: %s\n", m.Role, b)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func unixTime(sec int64) string {
	if sec == 0 {
		return "-"
	}
	return time.Unix(sec, 0).Local().Format("2006-01-02 15:04")
}

// oneSessionID accepts exactly one argument, a valid session id.
func oneSessionID(cmd *cobra.Command, args []string) error {
	if err := cobra.ExactArgs(1)(cmd, args); err != nil {
		return usage(cmd, err)
	}
	if err := sessionclient.ValidSessionID(args[0]); err != nil {
		return usage(cmd, err)
	}
	return nil
}

// bootForSessions opens the frontend (the daemon or an in-process kernel)
// for a session command, with ctx bounded by
// sessionTimeout.
func bootForSessions(cmd *cobra.Command, f kernelFlags) (frontend, context.Context, func(), error) {
	fe, ctx, stop, err := openFrontend(cmd, f)
	if err != nil {
		return frontend{}, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	return fe, ctx, func() { cancel(); stop() }, nil
}
