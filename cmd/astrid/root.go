package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

// exitError carries a process exit status through cobra without printing
// anything more (the command has already said what went wrong).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitStoreBusy is the status when another astrid process kept the state
// database past store_lock_wait: contention, not failure, so a script can
// tell it apart and retry (75 is EX_TEMPFAIL in sysexits.h).
const exitStoreBusy = 75

func exitCode(err error) int {
	var e exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.code
	case errors.Is(err, store.ErrInUse):
		return exitStoreBusy
	}
	return 1
}

func newRootCmd() *cobra.Command {
	var pf promptFlags
	root := &cobra.Command{
		Use:   "astrid [-p \"prompt\"]",
		Short: "Astrid: an operating system for AI agents",
		Long: `Astrid runs capsules (sandboxed tools, agents, providers) on a kernel that routes IPC
events between them and enforces each capsule's Capsule.toml as its capability ACL.

Exit status: each command lists its own; every command exits 75 when another astrid
process kept the state database ($ASTRID_HOME/state.db) busy for longer than
store_lock_wait in config.toml (default 5s), naming that process. Several astrid
processes may share one $ASTRID_HOME: each holds the database only while it uses it.

astrid alone, in a terminal, opens the chat (astrid chat); elsewhere it prints this help.

astrid -p "prompt" runs one agent turn in-process: the answer streams to standard output,
each tool call is noted on standard error, and the session it was kept in is named at the
end (continue it with --session). A mutable tool call is asked about on the terminal;
without one it is denied unless --yes. Exit status of -p: 0 answered; 1 an error, an empty
answer or the iteration cap; 2 a usage error (an unknown --session included); 124 a timeout (a phase limit or --timeout);
130 interrupted (Ctrl-C cancels the turn and its tool calls).`,
		Example: `  astrid -p "What does README.md say about testing?" --provider replay
  git diff | astrid -p - --provider openai --model gpt-5.4-mini
  astrid -p "and the benchmarks?" --session s-0123abcd --json
  astrid session list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("prompt") {
				// In a terminal, astrid alone opens the chat (with the
				// flags that apply to it); elsewhere it shows this help.
				if !inTerminal(cmd) {
					return cmd.Help()
				}
				return runChat(cmd, &chatFlags{kernelFlags: pf.kernelFlags, provider: pf.provider, model: pf.model, session: pf.session, cont: pf.cont})
			}
			return runPrompt(cmd, &pf)
		},
		SilenceUsage:  true,
		SilenceErrors: true, // main prints errors, except exitError, which has been explained already
	}
	pf.register(root)
	root.PersistentFlags().BoolP(verboseFlag, "v", false, "show the in-process kernel's warnings and log on standard error (always kept in $ASTRID_HOME/logs/cli.log)")
	root.PersistentFlags().Bool(noDaemonFlag, false, "boot a kernel in-process even when a daemon runs for $ASTRID_HOME")
	// --version is what people try first; it prints what `version` does.
	root.Version = manifest.RuntimeVersion
	root.SetVersionTemplate("astrid {{.Version}}\n")
	root.AddCommand(newVersionCmd())
	root.AddCommand(newCapsuleCmd())
	root.AddCommand(newToolCmd())
	root.AddCommand(newSessionCmd())
	root.AddCommand(newApprovalsCmd())
	root.AddCommand(newCapsCmd())
	root.AddCommand(newAgentCmd())
	root.AddCommand(newModelsCmd())
	root.AddCommand(newChatCmd())
	root.AddCommand(newInitCmd())
	root.AddCommand(newConfigCmd(), newDoctorCmd(), newGCCmd())
	root.AddCommand(newDaemonCmd(), newStartCmd(), newStopCmd(), newRestartCmd(), newStatusCmd(), newUICmd())
	root.AddCommand(newLogsCmd())
	root.AddCommand(newNATSCmd())
	root.AddCommand(newSandboxCmd())
	root.AddCommand(newACPCmd())
	root.AddCommand(newMCPCmd())
	root.AddCommand(newAuditCmd())
	root.AddCommand(newKeyCmd(), newTrustCmd(), newRegistryCmd(), newDistroCmd())
	usageErrorsExit2(root)
	return root
}

// inTerminal reports whether the command's standard input and output are
// both a terminal (a person at the keyboard, not a script or a pipe).
func inTerminal(cmd *cobra.Command) bool {
	in, inOK := cmd.InOrStdin().(*os.File)
	out, outOK := cmd.OutOrStdout().(*os.File)
	return inOK && outOK && isTerminal(in) && isTerminal(out)
}
