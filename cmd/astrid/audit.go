package main

import (
	"bufio"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/hostkey"
)

// errStopShow ends a show at --limit.
var errStopShow = errors.New("limit reached")

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show and verify the signed audit chain",
		Long: `The host keeps a signed, hash-linked audit chain per principal (and one for
system events) under $ASTRID_HOME/audit: approvals asked and answered, grants
recorded and removed, capsules loaded, reloaded and refused, each tool call's
start and end, confinement and policy refusals, cluster peers. Each entry names
the previous entry's hash; seal entries, written within 10 ms of the entries
they follow and when the daemon stops, are signed with the host's key and
vouch for everything before them. docs/audit.md describes the format.

Both commands read the chain files directly, so they work while a daemon runs
and appends.`,
	}
	cmd.AddCommand(newAuditShowCmd(), newAuditVerifyCmd())
	return cmd
}

func newAuditShowCmd() *cobra.Command {
	var (
		principals []string
		since      string
		asJSON     bool
		limit      int
		system     bool
		seals      bool
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print audit entries, oldest first",
		Long: `Prints audit entries of every chain, or of --principal's, merged oldest first,
one a line: time, chain, seq, kind, subject, then the rest. The chains are read
as streams, so a long chain starts printing at once; --since and --limit page
through it.

--since takes a time (2026-12-07T13:00:00Z, 2026-12-07) or a duration back from
now (90m, 24h). --json prints each entry's body as the chain holds it (one JSON
object a line). The writer's own seal entries (audit.seal) are left out unless
--seals. show does not check signatures: astrid audit verify does.

Exit status: 0; 1 when a chain cannot be read; 2 for a usage error.`,
		Example: `  astrid audit show --since 1h
  astrid audit show --principal default --json | jq .kind
  astrid audit show --system --limit 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f audit.Filter
			for _, p := range principals {
				if p == "" || !audit.ValidPrincipal(p) {
					return usage(cmd, fmt.Errorf("--principal %q is not a principal id ([A-Za-z0-9_-], 1 to 64 characters)", p))
				}
			}
			if len(principals) > 0 || system {
				f.Principals = slices.Clone(principals)
				if system {
					f.Principals = append(f.Principals, "")
				}
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usage(cmd, err)
				}
				f.Since = t
			}
			if limit < 0 {
				return usage(cmd, fmt.Errorf("--limit must be 0 (all) or more, not %d", limit))
			}
			home, err := config.Home()
			if err != nil {
				return err
			}
			f.Seals = seals
			w := bufio.NewWriter(cmd.OutOrStdout())
			defer w.Flush()
			n := 0
			err = audit.Show(config.Layout(home).Audit, f, func(r audit.Record) error {
				if asJSON {
					w.Write(r.Body)
					w.WriteByte('\n')
				} else {
					writeAuditLine(w, r.Entry)
				}
				if n++; limit > 0 && n >= limit {
					return errStopShow
				}
				return nil
			})
			if errors.Is(err, errStopShow) {
				return nil
			}
			if err != nil {
				w.Flush()
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid audit show: %v\n", err)
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&principals, "principal", nil, "only this principal's chain (repeatable)")
	cmd.Flags().BoolVar(&system, "system", false, "only the system chain (with --principal: as well)")
	cmd.Flags().StringVar(&since, "since", "", "only entries at or after this time, or this long ago (1h)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print entries as signed JSON, one a line")
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "stop after this many entries (0: all)")
	cmd.Flags().BoolVar(&seals, "seals", false, "print the signed seal entries too")
	return cmd
}

// parseSince reads --since: an RFC 3339 time, a date, or a duration back
// from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: a duration back from now is positive", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a time (2026-12-07T13:00:00Z, 2026-12-07) nor a duration (90m, 24h)", s)
}

// writeAuditLine prints one entry for a person.
func writeAuditLine(w io.Writer, e audit.Entry) {
	chain := e.Principal
	if chain == "" {
		chain = "(system)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s #%d %s", e.Time.Format("2006-01-02T15:04:05.000Z07:00"), chain, e.Seq, e.Kind)
	if e.Subject != "" {
		fmt.Fprintf(&b, " %s", quoteIfNeeded(e.Subject))
	}
	if e.Capsule != "" {
		fmt.Fprintf(&b, " capsule=%s", quoteIfNeeded(e.Capsule))
	}
	if e.Outcome != "" {
		fmt.Fprintf(&b, " outcome=%s", quoteIfNeeded(e.Outcome))
	}
	keys := make([]string, 0, len(e.Detail))
	for k := range e.Detail {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", sanitize(k), quoteIfNeeded(e.Detail[k]))
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}

func newAuditVerifyCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check every audit chain: links, seals' signatures, order and checkpoints",
		Long: `Reads every chain as a stream and checks each entry: it is exactly as written
(any edited byte shows), its seq is one more than the entry before and its prev
hash is that entry's (an edited, removed, reordered or inserted entry shows), it
is in its own principal's chain and its time does not go back (the writer never
records a time before the last, even when the clock is set back). Each seal
entry's signature must verify with the host's key; through the links it vouches
for every entry before it. Then each chain's signed checkpoint: the chain must
still hold the entry it names, with that hash, so cutting entries off the end is
detected back to the last checkpoint (written at least once a second while
entries come, and when the kernel stops).

Entries after a chain's last seal are linked but not yet signed: the writer
seals within 10 ms, so on a running daemon there may be a few; a daemon killed
leaves them until the next writer seals the chain. verify counts them
("N not yet sealed") and still exits 0: until sealed, someone able to write the
file could change them unnoticed (docs/rationale/audit.md). Entries a later
writer sealed for one that was killed are named as such.

The host key is read from $ASTRID_HOME's store, which a running daemon shares.

Exit status: 0 when every chain verifies; 1 naming the first bad entry (chain,
seq, line of its file and why); 2 for a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			dir := config.Layout(home).Audit
			chains, err := audit.Chains(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(chains) == 0 {
				fmt.Fprintf(out, "no audit chains in %s yet\n", dir)
				return nil
			}
			pub, err := hostPublicKey(home)
			if err != nil {
				return err
			}
			var total, seals, unsealed uint64
			err = audit.Verify(dir, pub, func(s audit.Summary) {
				total += s.Entries - s.Seals
				seals += s.Seals
				unsealed += s.Unsealed()
				if asJSON {
					json.NewEncoder(out).Encode(map[string]any{"chain": s.Chain, "entries": s.Entries - s.Seals, "seals": s.Seals,
						"sealed_to": s.Sealed, "unsealed": s.Unsealed(), "adopted": s.Adopted, "checkpoint": s.Checkpoint, "ok": true})
					return
				}
				name := "principal " + s.Chain
				if s.Chain == "" {
					name = "system"
				}
				ck := "no checkpoint yet"
				if s.Checkpoint > 0 {
					ck = fmt.Sprintf("checkpoint at entry %d", s.Checkpoint)
				}
				fmt.Fprintf(out, "%s: %s and %s verified (%s)", name, plural(int(s.Entries-s.Seals), "entry"), plural(int(s.Seals), "seal"), ck)
				if n := s.Unsealed(); n > 0 {
					fmt.Fprintf(out, "; %d not yet sealed (entries %d to %d)", n, s.Sealed+1, s.Entries)
				}
				for _, r := range s.Adopted {
					fmt.Fprintf(out, "; entries %d to %d sealed by a later writer (theirs stopped first)", r[0], r[1])
				}
				fmt.Fprintln(out)
			})
			var p *audit.Problem
			if errors.As(err, &p) {
				if asJSON {
					json.NewEncoder(out).Encode(map[string]any{"chain": p.Chain, "ok": false, "seq": p.Seq, "line": p.Line, "reason": p.Reason})
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid audit verify: FAILED: %v\n", p)
				return exitError{1}
			}
			if err != nil {
				return err
			}
			if !asJSON {
				fmt.Fprintf(out, "ok: %d chains, %d entries", len(chains), total)
				if unsealed > 0 {
					fmt.Fprintf(out, " (%d not yet sealed)", unsealed)
				}
				fmt.Fprintln(out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per chain")
	return cmd
}

// hostPublicKey reads the host's public key from home's store.
func hostPublicKey(home string) (ed25519.PublicKey, error) {
	if _, err := os.Stat(config.Layout(home).State); err != nil {
		return nil, fmt.Errorf("no store at %s to read the host key from: %w", config.Layout(home).State, err)
	}
	st, err := openStore(home)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	pub, err := hostkey.Public(st)
	if errors.Is(err, hostkey.ErrNone) {
		return nil, fmt.Errorf("the store %s holds no host signing key, so no chain here can be verified (was state.db or secrets.key replaced?)", config.Layout(home).State)
	}
	return pub, err
}
