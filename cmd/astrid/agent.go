package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/principals"
)

// `astrid agent create | list | remove` manage the principals an operator
// creates, with their own limits (internal/principals, DESIGN §13). The
// records are written to the store, which a running daemon reads on each
// turn, so a change counts from the next one.

func newAgentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Create, list and remove agents: principals with their own limits",
		Long: `An agent is a principal with its own limits: the capsules whose tools it may use,
whether it is read-only (it is never offered a mutable tool, and the approval layer
refuses one it calls anyway), its CPU budget per second and its LLM tokens per day.
Run a turn as an agent with --principal <name> (in-process, or through a daemon that
maps your uid to it).`,
	}
	cmd.AddCommand(newAgentCreateCmd(), newAgentListCmd(), newAgentRemoveCmd())
	return cmd
}

// withAgents runs fn with the registry of $ASTRID_HOME's store.
func withAgents(fn func(*principals.Registry) error) error {
	home, err := config.Home()
	if err != nil {
		return err
	}
	st, err := openStore(home)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(principals.NewRegistry(st))
}

func newAgentCreateCmd() *cobra.Command {
	var a principals.Agent
	var capsules []string
	cmd := &cobra.Command{
		Use:   "create <name> [--capsules a,b] [--cpu-budget ms] [--tokens-per-day n] [--read-only]",
		Short: "Create an agent",
		Long: `Creates the agent <name>: 1 to 64 ASCII letters, digits, '-' and '_' (not "default",
the local user's). Without --capsules it may use every capsule's tools; --cpu-budget
is its CPU time in ms per second (0: the host's budget); --tokens-per-day bounds the
LLM tokens of its turns per UTC day (0: none); --read-only offers it no mutable tool.`,
		Example: `  astrid agent create reader --read-only --capsules astrid-capsule-fs
  astrid agent create bot --cpu-budget 100 --tokens-per-day 200000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.Name = args[0]
			for _, c := range capsules {
				if c = strings.TrimSpace(c); c != "" {
					a.Capsules = append(a.Capsules, c)
				}
			}
			a.Created = time.Now().UTC()
			if err := a.Validate(); err != nil {
				return usage(cmd, err)
			}
			err := withAgents(func(r *principals.Registry) error { return r.Create(a) })
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created agent %s: %s\n", a.Name, agentLimits(a))
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&capsules, "capsules", nil, "capsules whose tools it may use (default: all)")
	cmd.Flags().IntVar(&a.CPUBudgetMs, "cpu-budget", 0, "CPU budget in ms per second (0: the host's)")
	cmd.Flags().Int64Var(&a.TokensPerDay, "tokens-per-day", 0, "LLM tokens per UTC day (0: no bound)")
	cmd.Flags().BoolVar(&a.ReadOnly, "read-only", false, "offer it no mutable tool")
	return cmd
}

// agentLimits says an agent's limits on one line.
func agentLimits(a principals.Agent) string {
	parts := []string{"capsules: all"}
	if len(a.Capsules) > 0 {
		parts[0] = "capsules: " + strings.Join(a.Capsules, ",")
	}
	if a.ReadOnly {
		parts = append(parts, "read-only")
	}
	if a.CPUBudgetMs > 0 {
		parts = append(parts, "cpu "+strconv.Itoa(a.CPUBudgetMs)+" ms/s")
	}
	if a.TokensPerDay > 0 {
		parts = append(parts, strconv.FormatInt(a.TokensPerDay, 10)+" tokens/day")
	}
	return strings.Join(parts, "; ")
}

func newAgentListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agents and their limits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list []principals.Agent
			if err := withAgents(func(r *principals.Registry) (err error) { list, err = r.List(); return err }); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No agents: astrid agent create <name> makes one.")
				return nil
			}
			rows := make([][]string, 0, len(list))
			for _, a := range list {
				rows = append(rows, []string{a.Name, oneLine(agentLimits(a), 70)})
			}
			return writeTable(cmd.OutOrStdout(), []string{"NAME", "LIMITS"}, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the agents as JSON")
	return cmd
}

func newAgentRemoveCmd() *cobra.Command {
	var keepData, yes bool
	cmd := &cobra.Command{
		Use:   "remove <name> [--keep-data | --yes]",
		Short: "Remove an agent and its data (sessions, stores, tokens, home:// files)",
		Long: `Removes the agent <name> and, unless --keep-data, everything kept for it:
what every capsule stores for it (its sessions, memory, counters and capability
tokens) and its home:// directory. Deleting data asks first on a terminal;
elsewhere it needs --yes. Its audit chain is kept: it is the record of what the
agent did (astrid audit show --principal <name>).`,
		Example: `  astrid agent remove bot              # asks before deleting its data
  astrid agent remove bot --yes        # deletes it without asking
  astrid agent remove bot --keep-data  # removes the agent, keeps its data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := principals.ValidateName(name); err != nil {
				return usage(cmd, err)
			}
			if keepData && yes {
				return usage(cmd, errors.New("--keep-data and --yes contradict each other: --yes deletes the data without asking"))
			}
			home, err := config.Home()
			if err != nil {
				return err
			}
			st, err := openStore(home)
			if err != nil {
				return err
			}
			defer st.Close()
			reg := principals.NewRegistry(st)
			if _, ok, err := reg.Get(name); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("no agent %s (astrid agent list shows them)", name)
			}
			if !keepData && !yes {
				cmd.SilenceErrors = true
				t := terminalOf(cmd)
				if t == nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: agent %s was not removed: removing it deletes its data (sessions, stores, capability tokens, home:// files), and nobody can confirm that here (standard input is not a terminal); run again with --yes to delete it, or --keep-data to keep it\n", name)
					return exitError{code: 1}
				}
				ok, err := t.confirm(fmt.Sprintf("Remove agent %s and delete its data (sessions, stores, capability tokens, home:// files)?", name))
				if err != nil {
					return err
				}
				if !ok {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: agent %s was not removed (pass --keep-data to remove it but keep its data)\n", name)
					return exitError{code: 1}
				}
			}
			var stores []string
			if !keepData {
				if stores, err = st.PurgePrincipal(name); err != nil {
					return err
				}
				dir := filepath.Join(config.Layout(home).Principals, name)
				if err := os.RemoveAll(dir); err != nil {
					return fmt.Errorf("agent %s: its stores were deleted but not its home directory %s: %w", name, dir, err)
				}
			}
			if err := reg.Remove(name); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case keepData:
				fmt.Fprintf(out, "removed agent %s; its data is kept (a new agent of that name would find it)\n", name)
			default:
				fmt.Fprintf(out, "removed agent %s and its data (what %s kept, its home directory); its audit chain is kept\n", name, plural(len(stores), "capsule"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&keepData, "keep-data", false, "remove the agent only; keep its sessions, stores, tokens and files")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete its data without asking")
	return cmd
}
