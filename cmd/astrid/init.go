package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/config"
)

func newInitCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create $ASTRID_HOME and write a commented config.toml",
		Long: `init creates $ASTRID_HOME (default ~/.astrid, 0700) and writes config.toml there with every
key at its default, commented out, each with what it does: uncomment a line to change it.
It refuses to replace an existing config.toml unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			path := config.Layout(home).Config
			if _, err := os.Lstat(path); err == nil && !force {
				return fmt.Errorf("init: %s exists; it is left as it is (--force replaces it with the commented defaults)", path)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("init: %w", err)
			}
			if err := atomicfile.Write(path, config.Template(), 0o600); err != nil {
				return fmt.Errorf("init: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: wrote %s (every key at its default, commented out)\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing config.toml")
	return cmd
}
