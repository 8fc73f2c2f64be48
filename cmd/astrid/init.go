package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/distro"
	"github.com/astrid-go/astrid/internal/hostkey"
)

func newInitCmd() *cobra.Command {
	var force, yes bool
	var distroFile string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create $ASTRID_HOME and write a commented config.toml",
		Long: `init creates $ASTRID_HOME (default ~/.astrid, 0700) and writes config.toml there with every
key at its default, commented out, each with what it does: uncomment a line to change it.
It refuses to replace an existing config.toml unless --force. It also creates the host's
signing key (sealed in the state database; it signs the audit chain, docs/audit.md) if there
is none yet.

With --distro, it then installs a distro into the home, all or nothing: a Distro.lock (every
capsule fetched and checked against it), a bundle from ` + "`astrid distro bundle`" + ` (no network), or
a distro published to a registry by ` + "`astrid distro publish`" + ` (oci://…), as ` + "`astrid distro apply`" + `
does; an existing config.toml is then left as it is.`,
		Example: `  astrid init
  ASTRID_HOME=/srv/agent astrid init --distro my-agent.distro.tar --yes
  ASTRID_HOME=/srv/agent astrid init --distro oci://registry.example/astrid/my-agent:1.0.0 --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			path := config.Layout(home).Config
			if _, err := os.Lstat(path); err == nil && !force && distroFile != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s exists; it is left as it is\n", path)
				return initDistro(cmd, distroFile, yes)
			} else if err == nil && !force {
				return fmt.Errorf("init: %s exists; it is left as it is (--force replaces it with the commented defaults)", path)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("init: %w", err)
			}
			if err := atomicfile.Write(path, config.Template(), 0o600); err != nil {
				return fmt.Errorf("init: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: wrote %s (every key at its default, commented out)\n", path)
			if err := func() error {
				st, err := openStore(home)
				if err != nil {
					return err
				}
				defer st.Close()
				_, err = hostkey.Load(st)
				return err
			}(); err != nil {
				return fmt.Errorf("init: %w", err)
			}
			if distroFile != "" {
				return initDistro(cmd, distroFile, yes)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing config.toml")
	cmd.Flags().StringVar(&distroFile, "distro", "", "then install this Distro.lock, distro bundle (.tar) or published distro (oci://…)")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --distro, install without asking (you reviewed the grants)")
	cmd.Flags().Bool(acceptRiskFlag, false, "with --distro --yes, also accept high-risk grants")
	cmd.Flags().Bool(allowUnsignedFlag, false, "with --distro, accept unsigned capsules or unknown publishers without asking")
	return cmd
}

// initDistro applies the lock or bundle at file to the new home.
func initDistro(cmd *cobra.Command, file string, yes bool) error {
	if filepath.Base(file) == distro.FileName {
		return fmt.Errorf("init --distro takes a Distro.lock or a bundle; lock %s first: astrid distro lock %s", file, file)
	}
	if strings.HasSuffix(file, ".tar") || strings.HasPrefix(file, ociScheme) {
		return applyDistro(cmd, "", file, yes)
	}
	return applyDistro(cmd, file, "", yes)
}
