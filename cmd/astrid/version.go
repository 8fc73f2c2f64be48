package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/manifest"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print this runtime's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "astrid %s\n", manifest.RuntimeVersion)
			return nil
		},
	}
}
