package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
)

// A finding's status.
const (
	findingOK      = "ok"
	findingProblem = "problem"
	findingSkipped = "skipped"
)

// finding is one thing astrid doctor looked at: what, how it stands and,
// for a problem, the command or change that fixes it.
type finding struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func okFinding(check, detail string) finding {
	return finding{Check: check, Status: findingOK, Detail: detail}
}

func problemFinding(check, detail, fix string) finding {
	return finding{Check: check, Status: findingProblem, Detail: detail, Fix: fix}
}

func skippedFinding(check, detail string) finding {
	return finding{Check: check, Status: findingSkipped, Detail: detail}
}

func newDoctorCmd() *cobra.Command {
	var asJSON, offline bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this machine and $ASTRID_HOME for problems, each with its fix",
		Long: `Looks at everything astrid depends on and prints one line per check, with the fix
for each problem:

  home        $ASTRID_HOME and its directories private to you (no group or other
              write), state.db, secrets.key and config.toml readable by you alone
  config      config.toml decodes (a problem is named at file:line:col)
  sandbox     the kernel confines the processes capsules start (Landlock ABI,
              seccomp) and a self-test of escapes is refused, as astrid sandbox
              check runs it; [sandbox] mode = "off" is a problem
  store       state.db opens within store_lock_wait and bbolt finds every page
              consistent
  daemon      no stale socket or pid file left by a daemon that was killed, and a
              running daemon answers on its socket
  provider    each LLM provider with a key or base_url configured (astrid capsule
              env set, or OPENAI_API_KEY, ANTHROPIC_BASE_URL, ...) answers over
              HTTP within --timeout (any HTTP status counts: the server is there);
              --offline skips this

doctor changes nothing: it never creates $ASTRID_HOME, never takes the daemon's
lock and never writes to state.db.

Exit status: 0 when no check found a problem; 1 when one did.`,
		Example: `  astrid doctor
  astrid doctor --offline            # no network: skip the providers
  astrid doctor --json | jq '.[] | select(.status == "problem")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.HomeDir()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			findings := runDoctor(ctx, home, doctorOptions{offline: offline, timeout: timeout})
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(findings); err != nil {
					return err
				}
			} else {
				writeFindings(cmd.OutOrStdout(), home, findings)
			}
			for _, f := range findings {
				if f.Status == findingProblem {
					return exitError{code: 1}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as a JSON array of {check, status, detail, fix}")
	cmd.Flags().BoolVar(&offline, "offline", false, "skip the checks that use the network (the providers)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long each provider has to answer")
	return cmd
}

// writeFindings prints one line per finding, its fix indented below.
func writeFindings(w io.Writer, home string, findings []finding) {
	fmt.Fprintf(w, "astrid doctor: %s\n", home)
	problems := 0
	for _, f := range findings {
		mark := map[string]string{findingOK: "ok     ", findingProblem: "PROBLEM", findingSkipped: "skipped"}[f.Status]
		fmt.Fprintf(w, "  %s  %-9s %s\n", mark, f.Check, f.Detail)
		if f.Fix != "" {
			fmt.Fprintf(w, "           %-9s fix: %s\n", "", strings.ReplaceAll(f.Fix, "\n", "\n                              "))
		}
		if f.Status == findingProblem {
			problems++
		}
	}
	switch problems {
	case 0:
		fmt.Fprintln(w, "no problems found")
	case 1:
		fmt.Fprintln(w, "1 problem found")
	default:
		fmt.Fprintf(w, "%d problems found\n", problems)
	}
}
