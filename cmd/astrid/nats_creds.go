package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/spf13/cobra"

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
	cmd := &cobra.Command{
		Use:   "creds --account-seed FILE --host ID <dir-or-Capsule.toml>",
		Short: "Mint a capsule's NATS credentials for an external cluster (operator mode)",
		Long: "creds mints the credentials of one capsule on one host for a NATS cluster in decentralized\n" +
			"(operator) mode: a new user nkey and a user JWT signed by the account key in --account-seed,\n" +
			"whose broker permissions are exactly the capsule's [publish] and [subscribe] keys, on\n" +
			"subjects carrying its id (astrid.<id>.<topic>), as on the embedded server. Run it where the\n" +
			"account key lives (the operator's machine), not on the hosts. A key NATS cannot carry\n" +
			"refuses the mint.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if seedFile == "" || host == "" {
				return fmt.Errorf("nats creds: --account-seed and --host are required")
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
			m, diags := manifest.Load(args[0])
			if err := diags.Err(false); err != nil || m == nil {
				return fmt.Errorf("nats creds: %s does not load: %w", args[0], err)
			}
			creds, err := natsbus.MintCapsuleCreds(account, host, m.ID(), m.PublishPatterns(), m.SubscribePatterns(), ttl)
			if err != nil {
				return fmt.Errorf("nats creds: %w", err)
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(creds.File)
				return err
			}
			if err := os.WriteFile(out, creds.File, 0o600); err != nil {
				return fmt.Errorf("nats creds: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: capsule %s on host %s, user %s\n", out, m.ID(), host, creds.User)
			return nil
		},
	}
	cmd.Flags().StringVar(&seedFile, "account-seed", "", "file holding the account's nkey seed (SA...)")
	cmd.Flags().StringVar(&host, "host", "", "the host id the capsule runs on (--nats-host-id)")
	cmd.Flags().StringVar(&out, "out", "", "write the credentials to this file (mode 0600) instead of stdout")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the credentials are valid (0: no expiry)")
	return cmd
}
