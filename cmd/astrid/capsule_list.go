package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/uplinkwire"
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
		Long: `Lists every capsule of the running daemon of $ASTRID_HOME (asked over its socket) or,
when none runs or with --no-daemon, of a kernel booted in-process as it would run: the
built-ins and those installed in $ASTRID_HOME/capsules, in load order, then any it could
not even read. For each: its engines, its state, the tools it provides and, when it
failed or a reload was refused, why. The table fits 100 columns (a long tool list is
cut; -v lists each capsule's tools in full, as --json does). A daemon shows another uid
than its owner's no install paths and no errors.

Exit status: 0 when every capsule is ready, 1 when some failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fe, _, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			list, err := fe.capsules()
			if err != nil {
				return err
			}
			failed := false
			for _, s := range list {
				failed = failed || s.State != "ready"
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(withOrigins(list)); err != nil {
					return err
				}
			} else {
				rows := make([][]string, 0, len(list))
				for _, s := range list {
					source := s.Dir
					if s.Builtin {
						source = "built-in"
					} else if o, ok := readOrigin(s.Dir); ok && s.Dir != "" {
						source = tableSource(o.Source) + " " + shortDigest(o.Digest)
					}
					rows = append(rows, []string{s.ID, orDash(strings.Join(s.Engines, ",")), s.State, orDash(source), orDash(strings.Join(s.Tools, ","))})
				}
				if err := writeTable(cmd.OutOrStdout(), []string{"CAPSULE", "ENGINES", "STATE", "SOURCE", "TOOLS"}, rows); err != nil {
					return err
				}
				if verbose, _ := cmd.Flags().GetBool(verboseFlag); verbose {
					for _, s := range list {
						if len(s.Tools) > 0 {
							fmt.Fprintf(cmd.OutOrStdout(), "\n%s tools: %s\n", s.ID, strings.Join(s.Tools, " "))
						}
					}
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

// capsules is the capsule list of the frontend's kernel: the daemon's, as
// it lets this client see it, or the in-process one's.
func (fe frontend) capsules() ([]runtime.Status, error) {
	if fe.remote == nil {
		return fe.local.Runtime.List(), nil
	}
	var list []runtime.Status
	if err := fe.remote.Query(uplinkwire.QueryCapsules, &list); err != nil {
		return nil, fmt.Errorf("the daemon's capsule list: %w", err)
	}
	return list, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortDigest cuts "sha256:<hex>" to its first 12 digits, as registries
// show image ids.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// tableSource drops the pinned manifest digest from a registry source
// that has a tag, to keep the table narrow (--json shows it whole).
func tableSource(s string) string {
	if at := strings.LastIndex(s, "@sha256:"); at > 0 && strings.Contains(s[strings.LastIndex(s[:at], "/")+1:at], ":") {
		return s[:at]
	}
	return s
}

// listedCapsule is one capsule of `capsule list --json`: its status and,
// for an archive install, where it came from.
type listedCapsule struct {
	runtime.Status
	Origin *installOrigin `json:"origin,omitempty"`
}

func withOrigins(list []runtime.Status) []listedCapsule {
	out := make([]listedCapsule, len(list))
	for i, s := range list {
		out[i].Status = s
		if s.Dir == "" || s.Builtin {
			continue
		}
		if o, ok := readOrigin(s.Dir); ok {
			out[i].Origin = &o
		}
	}
	return out
}
