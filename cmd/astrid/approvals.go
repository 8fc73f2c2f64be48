package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// The standing allowances live in two stores, and `astrid approvals` shows
// both as one list:
//   - the approval layer's (capsules/approval), one capability token per
//     (capsule, tool), signed and kept by the kernel (internal/caps):
//     "this session" volatile, "always" and operator grants durable;
//   - the host approval call's (internal/host, the shell's question for
//     each exact command), "this session" in the kernel's memory, "always"
//     in the kernel's own KV of each principal.
//
// The daemon answers them for the connection's principal (the queries
// approvals and revoke_approvals, docs/uplink.md); in-process the command
// reads the kernel it booted, for --principal. Either way a principal sees
// and revokes only their own.

// Which store an allowance is in: the approval layer's or the host call's.
const (
	layerTool = "tool"
	layerHost = "host"
)

// allowanceID names an allowance for `approvals revoke`: a prefix of a hash
// of where it is kept, so the same allowance has the same id for as long
// as it stands, and ids of different ones differ.
func allowanceID(layer, kind, key string) string {
	sum := sha256.Sum256([]byte(layer + "\x00" + kind + "\x00" + key))
	return hex.EncodeToString(sum[:])[:10]
}

// standing is one allowance with what revoking it takes.
type standing struct {
	uplinkwire.Allowance
	layer, key string
}

func sinceOf(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func kindOf(session bool) string {
	if session {
		return uplinkwire.AllowanceSession
	}
	return uplinkwire.AllowanceAlways
}

// standingAllowances lists principal's standing allowances in k: the
// approval layer's (tools), then the host call's (commands); "this
// session" before "always" in each.
func standingAllowances(k *kernel.Kernel, principal string) ([]standing, error) {
	var out []standing
	tokens, err := k.Caps.List(principal)
	if err != nil {
		return nil, fmt.Errorf("the allowances of %s: %w", principal, err)
	}
	for _, e := range tokens {
		out = append(out, tokenStanding(e))
	}
	host, err := k.HostApprovals().Allowances(k.Store, principal)
	if err != nil {
		return nil, err
	}
	for _, a := range host {
		kind := kindOf(a.Session)
		out = append(out, standing{layer: layerHost, key: a.Key, Allowance: uplinkwire.Allowance{
			ID: allowanceID(layerHost, kind, a.Key), Kind: kind, Capsule: a.Capsule,
			Action: a.Action, Resource: a.Resource, Unnamed: a.Unnamed, Since: sinceOf(a.Since),
		}})
	}
	return out, nil
}

// revokeAllowances withdraws principal's allowances named by args (all of
// them with args.All): the answer names those withdrawn and the ids that
// name none of principal's.
func revokeAllowances(k *kernel.Kernel, principal string, args uplinkwire.RevokeArgs) (uplinkwire.RevokeAnswer, error) {
	ans := uplinkwire.RevokeAnswer{Revoked: []uplinkwire.Allowance{}}
	list, err := standingAllowances(k, principal)
	if err != nil {
		return ans, err
	}
	want := map[string]bool{}
	for _, id := range args.IDs {
		want[strings.ToLower(strings.TrimSpace(id))] = true
	}
	for _, s := range list {
		named := want[s.ID]
		if s.Token != "" {
			// A token is named by its short id or its whole one.
			named = named || want[s.Token]
			delete(want, s.Token)
		}
		if !args.All && !named {
			continue
		}
		delete(want, s.ID)
		var err error
		ok := true
		switch s.layer {
		case layerTool:
			_, err = k.Caps.Revoke(principal, s.Token)
		case layerHost:
			ok, err = k.HostApprovals().Revoke(k.Store, principal, s.key, s.Kind == uplinkwire.AllowanceSession)
		}
		if err != nil {
			return ans, fmt.Errorf("revoke %s: %w", s.ID, err)
		}
		if ok {
			ans.Revoked = append(ans.Revoked, s.Allowance)
		}
	}
	for id := range want {
		ans.Unknown = append(ans.Unknown, oneLine(id, 40))
	}
	slices.Sort(ans.Unknown)
	return ans, nil
}

// approvals is the frontend's principal's standing allowances: the
// daemon's answer, or the in-process kernel's for principal.
func (fe frontend) approvals(principal string) ([]uplinkwire.Allowance, error) {
	if fe.remote != nil {
		var list []uplinkwire.Allowance
		if err := fe.remote.Query(uplinkwire.QueryApprovals, &list); err != nil {
			return nil, daemonQueryError("approvals list", err)
		}
		return list, nil
	}
	return allowanceList(fe.local, principal)
}

// allowanceList is principal's standing allowances as the wire shows them.
func allowanceList(k *kernel.Kernel, principal string) ([]uplinkwire.Allowance, error) {
	list, err := standingAllowances(k, principal)
	if err != nil {
		return nil, err
	}
	out := make([]uplinkwire.Allowance, len(list))
	for i, s := range list {
		out[i] = s.Allowance
	}
	return out, nil
}

// revokeApprovals withdraws allowances as args say, through the daemon or
// in the in-process kernel.
func (fe frontend) revokeApprovals(principal string, args uplinkwire.RevokeArgs) (uplinkwire.RevokeAnswer, error) {
	if fe.remote == nil {
		return revokeAllowances(fe.local, principal, args)
	}
	var ans uplinkwire.RevokeAnswer
	if err := fe.remote.QueryWith(uplinkwire.QueryRevokeApprovals, args, &ans); err != nil {
		return ans, daemonQueryError("approvals revoke", err)
	}
	return ans, nil
}

// daemonQueryError says what a daemon that predates the query needs.
func daemonQueryError(what string, err error) error {
	var de *daemonclient.Error
	if errors.As(err, &de) && de.Code == uplinkwire.CodeUnknownQuery {
		return fmt.Errorf("%s: the running daemon is older than this astrid and cannot answer it; restart it (astrid stop, then astrid start) or use --%s", what, noDaemonFlag)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// approvalQuery answers the daemon's approvals queries for q's principal.
func approvalQuery(k *kernel.Kernel, principal, name string, args json.RawMessage) (any, error) {
	if name == uplinkwire.QueryApprovals {
		return allowanceList(k, principal)
	}
	var ra uplinkwire.RevokeArgs
	if len(args) == 0 || json.Unmarshal(args, &ra) != nil {
		return nil, errors.New(`the arguments are {"ids":[…]} or {"all":true}`)
	}
	if len(ra.IDs) > maxRevokeIDs {
		return nil, fmt.Errorf("at most %d ids at once, not %d", maxRevokeIDs, len(ra.IDs))
	}
	if !ra.All && len(ra.IDs) == 0 {
		return nil, errors.New("name the allowances to revoke (ids), or all")
	}
	return revokeAllowances(k, principal, ra)
}

// maxRevokeIDs bounds the ids of one revoke.
const maxRevokeIDs = 1000

func newApprovalsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: `Show and withdraw the standing allowances ("this session", "always")`,
		Long: `An approval question answered "this session" or "always" is not asked again while
its allowance stands: for a tool (every call of it), or for a capsule's exact request
(a shell command, in its directory). These commands show them and withdraw them;
a withdrawn allowance is asked about again the next time. Through the running daemon
they are your principal's; in-process (no daemon, or --no-daemon) --principal's, and
"this session" ones live only in a daemon, so there are none.`,
	}
	cmd.AddCommand(newApprovalsListCmd(), newApprovalsRevokeCmd())
	return cmd
}

func newApprovalsListCmd() *cobra.Command {
	var f kernelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your standing allowances",
		Long: `Lists each standing allowance: its id (for revoke), its kind (session: until the
kernel stops; always: kept), the capsule it was given to, when, and what: a tool, or
the command approved. An "always" kept by an older astrid shows "(recorded before
names were kept)". The table fits 100 columns; --json prints everything.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.background = true
			fe, _, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			list, err := fe.approvals(f.principal)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No standing allowances: every question is asked.")
				return nil
			}
			return writeTable(cmd.OutOrStdout(), []string{"ID", "KIND", "CAPSULE", "SINCE", "WHAT"}, allowanceRows(list))
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the allowances as JSON")
	return cmd
}

// allowanceRows are the table rows of list.
func allowanceRows(list []uplinkwire.Allowance) [][]string {
	rows := make([][]string, 0, len(list))
	for _, a := range list {
		since := "-"
		if a.Since != nil {
			since = a.Since.Local().Format("2006-01-02 15:04")
		}
		rows = append(rows, []string{a.ID, a.Kind, a.Capsule, since, allowanceWhat(a)})
	}
	return rows
}

// allowanceWhat says what an allowance allows, on one line.
func allowanceWhat(a uplinkwire.Allowance) string {
	switch {
	case a.Tool != "":
		return "tool " + a.Tool
	case a.Unnamed:
		return "(recorded before names were kept)"
	case a.Resource != "" && strings.HasPrefix(a.Resource, a.Action):
		// A shell command: the action is its program (and subcommand).
		return a.Resource
	case a.Resource != "":
		return a.Action + " " + a.Resource
	}
	return a.Action
}

func newApprovalsRevokeCmd() *cobra.Command {
	var f kernelFlags
	var all bool
	cmd := &cobra.Command{
		Use:   "revoke <id>... | --all",
		Short: "Withdraw standing allowances: they are asked about again",
		Long: `Withdraws the standing allowances named by their ids (astrid approvals list), or all
of yours with --all, and names each one withdrawn. The next request each allowed is
asked about again.

Exit status: 0 when every id named an allowance; 1 when one did not (the others are
withdrawn all the same); 2 for a usage error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return usage(cmd, errors.New("give ids or --all, not both"))
			case !all && len(args) == 0:
				return usage(cmd, errors.New("name the allowances to revoke (astrid approvals list shows their ids), or pass --all"))
			case len(args) > maxRevokeIDs:
				return usage(cmd, fmt.Errorf("at most %d ids at once", maxRevokeIDs))
			}
			f.background = true
			fe, _, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			ans, err := fe.revokeApprovals(f.principal, uplinkwire.RevokeArgs{IDs: args, All: all})
			for _, a := range ans.Revoked {
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %s (%s, %s): %s\n", a.ID, a.Kind, a.Capsule, oneLine(allowanceWhat(a), 200))
			}
			if err != nil {
				return err
			}
			if len(ans.Unknown) > 0 {
				return fmt.Errorf("no standing allowance %s of yours (astrid approvals list shows them)", strings.Join(ans.Unknown, ", "))
			}
			if len(ans.Revoked) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No standing allowances to revoke.")
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "revoke every standing allowance of yours")
	return cmd
}
