package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleListCmd)
}

func newCapsuleListCmd() *cobra.Command {
	var f kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the capsules: engines, state, tools and last error",
		Long: `Boots a kernel in-process, as it would run, and lists every capsule it found: the
built-ins and those installed in $ASTRID_HOME/capsules, in load order, then any it could
not even read. For each: its engines, its state, the tools it provides and, when it
failed, why.

Exit status: 0 when every capsule is ready, 1 when some failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, _, stop, err := bootKernel(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			list := k.Runtime.List()
			failed := false
			for _, s := range list {
				failed = failed || s.State != "ready"
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(list); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CAPSULE\tENGINES\tSTATE\tTOOLS\tSOURCE")
				for _, s := range list {
					source := s.Dir
					if s.Builtin {
						source = "built-in"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, orDash(strings.Join(s.Engines, ",")), s.State, orDash(strings.Join(s.Tools, ",")), source)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				for _, s := range list {
					if s.Error != "" {
						fmt.Fprintf(cmd.OutOrStdout(), "\n%s: %s\n", s.ID, s.Error)
					}
				}
			}
			if failed {
				return exitError{code: 1}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the capsules as JSON")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
