package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// modelsTimeout bounds each request to the provider registry (its
// discovery takes at most half a second; a loaded machine gets slack).
const modelsTimeout = 10 * time.Second

func newModelsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the LLM models the providers offer, and choose the agent's",
		Long: `Models are named <provider>:<model> (openai:gpt-5.5, anthropic:claude-opus-5-5,
replay:replay). The provider registry capsule finds them by asking every loaded
provider, and keeps each principal's choice. A provider lists its configured
model and what its server serves (GET /v1/models of an OpenAI-compatible
server or of Anthropic, read when you list or set; until then, or when the
server does not answer, OpenAI's and Anthropic's current ids, with a note).
Without a choice the agent uses the first ready model of anthropic, then openai,
else the offline replay provider. astrid -p --provider/--model override the
choice for one run.`,
	}
	cmd.AddCommand(newModelsListCmd(), newModelsCurrentCmd(), newModelsSetCmd(), newModelsUnsetCmd())
	return cmd
}

func newModelsListCmd() *cobra.Command {
	var f kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every model the loaded providers offer, marking the active one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRegistry(cmd, f, func(ctx context.Context, k toolclient.Kernel) error {
				r, err := registryclient.List(ctx, k, f.principal)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), r)
				}
				for _, id := range r.Missing {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: capsule %s did not say which models it offers in time; its models are missing\n", id)
				}
				if len(r.Providers) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no LLM provider is loaded")
					return exitError{code: 1}
				}
				writeModels(cmd.OutOrStdout(), r)
				writeNotes(cmd.ErrOrStderr(), r)
				writeActive(cmd.ErrOrStderr(), r)
				return nil
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the registry's answer as JSON")
	return cmd
}

func newModelsCurrentCmd() *cobra.Command {
	var f kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "current",
		Short: "Print the model the agent uses for this principal",
		Long: `Prints the active model's id on standard output, and on standard error whether it
was chosen (astrid models set) or is the default, and what it lacks if its
provider is not ready. Exit status: 0, or 1 when no provider is loaded.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRegistry(cmd, f, func(ctx context.Context, k toolclient.Kernel) error {
				r, err := registryclient.Current(ctx, k, f.principal)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), r)
				}
				if r.ActiveModel == nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "no LLM provider is loaded")
					return exitError{code: 1}
				}
				fmt.Fprintln(cmd.OutOrStdout(), r.ActiveModel.ID)
				writeActive(cmd.ErrOrStderr(), r)
				return nil
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the registry's answer as JSON")
	return cmd
}

func newModelsSetCmd() *cobra.Command {
	var f kernelFlags
	cmd := &cobra.Command{
		Use:   "set <provider>:<model>",
		Short: "Choose the model the agent uses for this principal",
		Long: `Chooses one of the models astrid models list shows (astrid models set openai:gpt-5.5);
the choice is kept across runs, even before the provider has its key (it then says so).
Exit status: 0 when chosen, 1 when no provider offers that model.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return usage(cmd, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRegistry(cmd, f, func(ctx context.Context, k toolclient.Kernel) error {
				r, err := registryclient.Set(ctx, k, f.principal, args[0])
				if errors.Is(err, registryclient.ErrRejected) {
					fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
					return exitError{code: 1}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "active model for %s: %s\n", f.principal, r.ActiveModel.ID)
				if !r.ActiveModel.Ready {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: note: %s is not ready: %s\n", r.ActiveModel.ID, shownText(r.ActiveModel.Why))
				}
				return nil
			})
		},
	}
	f.register(cmd)
	return cmd
}

func newModelsUnsetCmd() *cobra.Command {
	var f kernelFlags
	cmd := &cobra.Command{
		Use:   "unset",
		Short: "Forget this principal's choice, so the default model applies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withRegistry(cmd, f, func(ctx context.Context, k toolclient.Kernel) error {
				r, err := registryclient.Unset(ctx, k, f.principal)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "model choice of %s forgotten\n", f.principal)
				writeActive(cmd.ErrOrStderr(), r)
				return nil
			})
		},
	}
	f.register(cmd)
	return cmd
}

// withRegistry opens the frontend (the daemon or an in-process kernel) and runs do with a context bounded by
// modelsTimeout.
func withRegistry(cmd *cobra.Command, f kernelFlags, do func(context.Context, toolclient.Kernel) error) error {
	fe, ctx, stop, err := openFrontend(cmd, f)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	return do(ctx, fe.k)
}

// writeModels prints the table of models, the active one marked "*".
func writeModels(w io.Writer, r ipc.RegistryReply) {
	var rows [][]string
	for _, e := range r.Providers {
		mark := ""
		if r.ActiveModel != nil && r.ActiveModel.ID == e.ID {
			mark = "*"
		}
		ready, note := "yes", e.Description
		if !e.Ready {
			ready, note = "no", e.Why
		}
		window := "-"
		if e.ContextWindow > 0 {
			window = strconv.FormatUint(e.ContextWindow, 10)
		}
		rows = append(rows, []string{mark, e.ID, ready, window, shownText(note)})
	}
	_ = writeTable(w, []string{"", "MODEL", "READY", "CONTEXT", "DESCRIPTION"}, rows)
}

// writeNotes prints each provider's note on its list once (a server
// whose model list was not read, and what is listed instead).
func writeNotes(w io.Writer, r ipc.RegistryReply) {
	seen := map[string]bool{}
	for _, e := range r.Providers {
		if e.Note != "" && !seen[e.Provider+"\x00"+e.Note] {
			seen[e.Provider+"\x00"+e.Note] = true
			fmt.Fprintf(w, "astrid: note: %s: %s\n", e.Provider, ipc.ApprovalText(oneLine(e.Note, 300), 0))
		}
	}
}

// writeActive says which model is active and why.
func writeActive(w io.Writer, r ipc.RegistryReply) {
	if r.Note != "" {
		fmt.Fprintln(w, "astrid: note:", shownText(r.Note))
	}
	e := r.ActiveModel
	switch {
	case e == nil:
		fmt.Fprintln(w, "no model is active: no LLM provider is loaded")
		return
	case r.Chosen:
		fmt.Fprintf(w, "active: %s (chosen; astrid models unset returns to the default)\n", e.ID)
	default:
		fmt.Fprintf(w, "active: %s (the default; choose another with astrid models set <id>)\n", e.ID)
	}
	if !e.Ready {
		fmt.Fprintf(w, "astrid: note: %s is not ready: %s\n", e.ID, shownText(e.Why))
	}
}

// shownText is a provider's words (a description, why it is not ready) as
// a terminal shows them: one line of at most 120 runes, every control or
// format character escaped, so a provider cannot move the cursor, recolour
// or reorder what the person reads.
func shownText(s string) string {
	return ipc.ApprovalText(oneLine(s, 120), 0)
}
