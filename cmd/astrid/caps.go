package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// `astrid caps` shows the capability tokens among the standing allowances
// (the approval layer's, DESIGN §13), revokes them, and lets an operator
// grant one in advance. Listing and revoking go through the running
// daemon as `astrid approvals` does (its "this session" tokens live
// there); a grant is written to the store, which a running daemon reads on
// every call.

func newCapsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "caps",
		Short: "Capability tokens: list, revoke, grant standing approvals of tools",
		Long: `A tool call answered "this session" or "always" leaves a capability token: the
principal, the capsule and tool (or, for a shell command, the exact command), an
argument pattern if any, when it was issued and when it expires, signed with this
host's key. While it stands, that tool (or command) runs without a question. The kernel checks the signature, expiry and revocation on every call, so
a revoked token counts at once in a running daemon, and a token edited on disk (say,
to extend its expiry) is ignored and logged.

An operator may grant a principal a token in advance with "astrid caps grant".`,
	}
	cmd.AddCommand(newCapsListCmd(), newCapsRevokeCmd(), newCapsGrantCmd())
	return cmd
}

func newCapsListCmd() *cobra.Command {
	var f kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your capability tokens",
		Long: `Lists each capability token of your principal (through the daemon) or of
--principal (in-process, --no-daemon): its id (for revoke), kind (session, always,
grant), capsule and tool, argument pattern, expiry, and, for a token that allows
nothing, why (tampered, expired, revoked, moved). --json prints everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.background = true
			fe, _, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			all, err := fe.approvals(f.principal)
			if err != nil {
				return err
			}
			list := []uplinkwire.Allowance{}
			for _, a := range all {
				if a.Token != "" {
					list = append(list, a)
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No capability tokens: every mutable tool is asked about.")
				return nil
			}
			rows := make([][]string, 0, len(list))
			for _, a := range list {
				expires := "never"
				if a.Expiry != nil {
					expires = a.Expiry.Local().Format("2006-01-02 15:04")
				}
				what := allowanceWhat(a)
				if a.Pattern != "" {
					what += " " + a.Pattern
				}
				status := "ok"
				if a.Ignored != "" {
					status = "IGNORED: " + a.Ignored
				}
				rows = append(rows, []string{a.ID, a.Kind, a.Capsule, expires, oneLine(what, 40), oneLine(status, 30)})
			}
			return writeTable(cmd.OutOrStdout(), []string{"ID", "KIND", "CAPSULE", "EXPIRES", "WHAT", "STATUS"}, rows)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tokens as JSON")
	return cmd
}

func newCapsRevokeCmd() *cobra.Command {
	var f kernelFlags
	cmd := &cobra.Command{
		Use:   "revoke <id>...",
		Short: "Revoke capability tokens: their tools are asked about again",
		Long: `Revokes the capability tokens named by their ids (astrid caps list; the short id or
the whole token id). A revoked token is remembered as revoked, so a copy put back
allows nothing. In a running daemon the next call of that tool is asked about again.

Exit status: 0 when every id named a token; 1 when one did not; 2 for a usage error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usage(cmd, errors.New("name the tokens to revoke (astrid caps list shows their ids)"))
			case len(args) > maxRevokeIDs:
				return usage(cmd, fmt.Errorf("at most %d ids at once", maxRevokeIDs))
			}
			f.background = true
			fe, _, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			ans, err := fe.revokeApprovals(f.principal, uplinkwire.RevokeArgs{IDs: args})
			for _, a := range ans.Revoked {
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s, %s): %s\n", a.ID, a.Kind, a.Capsule, oneLine(allowanceWhat(a), 200))
			}
			if err != nil {
				return err
			}
			if len(ans.Unknown) > 0 {
				return fmt.Errorf("no capability token %s of yours (astrid caps list shows them)", strings.Join(ans.Unknown, ", "))
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// defaultGrantTTL is how long a granted token stands unless --expires says.
const defaultGrantTTL = 30 * 24 * time.Hour

func newCapsGrantCmd() *cobra.Command {
	var principal, capsule, tool, pattern string
	var expires time.Duration
	cmd := &cobra.Command{
		Use:   "grant --principal <p> --capsule <id> --tool <name> [--pattern <glob>] [--expires <dur>]",
		Short: "Grant a principal a capability token in advance",
		Long: `Grants --principal a capability token for --capsule's --tool: that tool runs for the
principal without a question until the token expires (--expires, default 720h; 0 for
never) or is revoked. --pattern limits it to calls whose arguments, as the approval
question shows them (compact JSON), match: '*' matches any run of characters, e.g.
--pattern '{"command":"git status*"}'. The token is signed with this host's key and
written to the store; a running daemon honours it from its next call.`,
		Example: `  astrid caps grant --principal alice --capsule astrid-capsule-fs --tool write_file --expires 8h`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ipc.ValidatePrincipal(principal); err != nil {
				return usage(cmd, fmt.Errorf("--principal: %w", err))
			}
			if err := manifest.ValidateID(capsule); err != nil {
				return usage(cmd, fmt.Errorf("--capsule: %w", err))
			}
			if err := ipc.ValidateToolName(tool); err != nil {
				return usage(cmd, fmt.Errorf("--tool: %w", err))
			}
			if expires < 0 {
				return usage(cmd, fmt.Errorf("--expires %s: a token cannot have expired already", expires))
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
			book, err := openCaps(st)
			if err != nil {
				return err
			}
			t, err := book.Mint(caps.Request{Kind: caps.KindGrant, Principal: principal, Capsule: capsule, Tool: tool, Pattern: pattern, TTL: expires})
			if errors.Is(err, caps.ErrInvalid) {
				return usage(cmd, err)
			}
			if err != nil {
				return err
			}
			until := "never expires"
			if !t.Expiry.IsZero() {
				until = "expires " + t.Expiry.Local().Format(time.RFC3339)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "granted %s to %s: %s tool %s (%s)\n", t.ID[:10], principal, capsule, tool, until)
			return nil
		},
	}
	cmd.Flags().StringVar(&principal, "principal", ipc.DefaultPrincipal, "principal the token is for")
	cmd.Flags().StringVar(&capsule, "capsule", "", "capsule that provides the tool (astrid capsule list)")
	cmd.Flags().StringVar(&tool, "tool", "", "tool the token allows")
	cmd.Flags().StringVar(&pattern, "pattern", "", "only calls whose arguments match ('*' any run of characters)")
	cmd.Flags().DurationVar(&expires, "expires", defaultGrantTTL, "how long the token stands (0: never)")
	return cmd
}
