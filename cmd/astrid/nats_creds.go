package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/manifest"
)

func newNATSCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nats",
		Short: "The bus across hosts on NATS (docs/nats.md)",
	}
	cmd.AddCommand(newNATSCredsCmd())
	return cmd
}

func newNATSCredsCmd() *cobra.Command {
	var seedFile, host, out string
	var ttl time.Duration
	var hostOnly bool
	cmd := &cobra.Command{
		Use:   "creds --account-seed FILE --host ID (<dir-or-Capsule.toml> | --host-only)",
		Short: "Mint a capsule's NATS credentials for an external cluster (operator mode)",
		Long: "creds mints the credentials of one capsule on one host for a NATS cluster in decentralized\n" +
			"(operator) mode: a new user nkey and a user JWT signed by the account key in --account-seed,\n" +
			"whose broker permissions are exactly the capsule's [publish] and [subscribe] keys, on\n" +
			"subjects carrying its id (astrid.<id>.<topic>), as on the embedded server. Run it where the\n" +
			"account key lives (the operator's machine), not on the hosts. A key NATS cannot carry\n" +
			"refuses the mint. The host's daemon reads one such file per capsule, <capsule id>.creds,\n" +
			"from [nats] creds_dir. --host-only mints the host's own credentials instead (its [nats]\n" +
			"creds_file), which may publish only the host's presence, never as a capsule.",
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if seedFile == "" || host == "" {
				return fmt.Errorf("nats creds: --account-seed and --host are required")
			}
			if hostOnly == (len(args) == 1) {
				return fmt.Errorf("nats creds: give either a capsule (a directory or Capsule.toml) or --host-only")
			}
			if fi, err := os.Stat(seedFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
				return fmt.Errorf("nats creds: %s: mode %04o lets others read the account key; chmod 600 it", seedFile, fi.Mode().Perm())
			}
			raw, err := os.ReadFile(seedFile)
			if err != nil {
				return fmt.Errorf("nats creds: %w", err)
			}
			account, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(raw))))
			if err != nil {
				return fmt.Errorf("nats creds: %s: %w", seedFile, err)
			}
			defer account.Wipe()
			var creds natsbus.CapsuleCreds
			what := "the host's own connections"
			if hostOnly {
				creds, err = natsbus.MintHostCreds(account, host, ttl)
			} else {
				m, diags := manifest.Load(args[0])
				if err := diags.Err(false); err != nil || m == nil {
					return fmt.Errorf("nats creds: %s does not load: %w", args[0], err)
				}
				what = "capsule " + m.ID()
				creds, err = natsbus.MintCapsuleCreds(account, host, m.ID(), m.PublishPatterns(), m.SubscribePatterns(), ttl)
			}
			if err != nil {
				return fmt.Errorf("nats creds: %w", err)
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(creds.File)
				return err
			}
			if err := atomicfile.Write(out, creds.File, 0o600); err != nil {
				return fmt.Errorf("nats creds: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s on host %s, user %s\n", out, what, host, creds.User)
			return nil
		},
	}
	cmd.Flags().StringVar(&seedFile, "account-seed", "", "file holding the account's nkey seed (SA...)")
	cmd.Flags().StringVar(&host, "host", "", "the host id the capsule runs on (--nats-host-id)")
	cmd.Flags().StringVar(&out, "out", "", "write the credentials to this file (mode 0600) instead of stdout")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the credentials are valid (0: no expiry)")
	cmd.Flags().BoolVar(&hostOnly, "host-only", false, "mint the host's own credentials ([nats] creds_file beside creds_dir), not a capsule's")
	return cmd
}
