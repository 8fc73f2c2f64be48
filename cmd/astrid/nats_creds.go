package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
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
	var seedFile, host, out, outDir string
	var ttl time.Duration
	var hostOnly, forDaemon bool
	cmd := &cobra.Command{
		Use:   "creds --account-seed FILE --host ID (<dir-or-Capsule.toml>... | --host-only | --daemon --out-dir DIR)",
		Short: "Mint NATS credentials of a host's capsules for an external cluster (operator mode)",
		Long: "creds mints the credentials of capsules on one host for a NATS cluster in decentralized\n" +
			"(operator) mode: for each, a new user nkey and a user JWT signed by the account key in\n" +
			"--account-seed, whose broker permissions are exactly the capsule's [publish] and [subscribe]\n" +
			"keys, on subjects carrying its id (astrid.<id>.<topic>), as on the embedded server. Run it\n" +
			"where the account key lives (the operator's machine), not on the hosts. A key NATS cannot\n" +
			"carry refuses the mint. The host's daemon reads one such file per capsule, <capsule id>.creds,\n" +
			"from [nats] creds_dir. --host-only mints the host's own credentials instead (its [nats]\n" +
			"creds_file), which may publish only the host's presence, never as a capsule.\n\n" +
			"--daemon mints everything `astrid daemon` on that host connects with: the host's own\n" +
			"credentials (DIR/host.creds), one file per built-in capsule and per identity astrid's\n" +
			"commands act under (DIR/capsules/<id>.creds), and one per capsule directory given (the\n" +
			"capsules installed on that host). Start the daemon with\n" +
			"  --nats-creds DIR/host.creds --nats-creds-dir DIR/capsules\n" +
			"Files are written by rename, mode 0600, so a running daemon renews from them safely.",
		Example: "  astrid nats creds --account-seed acc.seed --host gpu-box --out echo.creds ./echo-tool\n" +
			"  astrid nats creds --account-seed acc.seed --host gpu-box --daemon --out-dir ./gpu-box --ttl 720h",
		RunE: func(cmd *cobra.Command, args []string) error {
			if seedFile == "" || host == "" {
				return fmt.Errorf("nats creds: --account-seed and --host are required")
			}
			switch {
			case forDaemon && (hostOnly || out != ""):
				return fmt.Errorf("nats creds: --daemon writes into --out-dir; it takes neither --host-only nor --out")
			case forDaemon && outDir == "":
				return fmt.Errorf("nats creds: --daemon needs --out-dir")
			case !forDaemon && hostOnly == (len(args) > 0):
				return fmt.Errorf("nats creds: give either a capsule (a directory or Capsule.toml) or --host-only")
			case len(args) > 1 && outDir == "":
				return fmt.Errorf("nats creds: %d capsules need --out-dir (one file each)", len(args))
			case out != "" && outDir != "":
				return fmt.Errorf("nats creds: give --out or --out-dir, not both")
			}
			account, err := readAccountSeed(seedFile)
			if err != nil {
				return err
			}
			defer account.Wipe()
			m := minter{account: account, host: host, ttl: ttl, log: cmd.ErrOrStderr()}

			if forDaemon {
				return m.daemon(outDir, args)
			}
			var creds natsbus.CapsuleCreds
			what := "the host's own connections"
			if hostOnly {
				creds, err = natsbus.MintHostCreds(account, host, ttl)
				if err != nil {
					return fmt.Errorf("nats creds: %w", err)
				}
			} else {
				acls, err := capsuleACLs(args)
				if err != nil {
					return err
				}
				if outDir != "" {
					return m.capsules(outDir, acls)
				}
				what = "capsule " + acls[0].ID
				if creds, err = m.mint(acls[0]); err != nil {
					return err
				}
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(creds.File)
				return err
			}
			return m.write(out, what, creds)
		},
	}
	cmd.Flags().StringVar(&seedFile, "account-seed", "", "file holding the account's nkey seed (SA...)")
	cmd.Flags().StringVar(&host, "host", "", "the host id the capsule runs on (--nats-host-id)")
	cmd.Flags().StringVar(&out, "out", "", "write the credentials to this file (mode 0600) instead of stdout")
	cmd.Flags().StringVar(&outDir, "out-dir", "", "write each capsule's credentials to <id>.creds in this directory")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the credentials are valid (0: no expiry)")
	cmd.Flags().BoolVar(&hostOnly, "host-only", false, "mint the host's own credentials ([nats] creds_file beside creds_dir), not a capsule's")
	cmd.Flags().BoolVar(&forDaemon, "daemon", false, "mint all that astrid daemon on the host needs: its own, every built-in's and frontend's, and the capsules given")
	return cmd
}
