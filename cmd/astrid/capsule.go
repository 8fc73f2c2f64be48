package main

import "github.com/spf13/cobra"

// capsuleSubcommands lets each `astrid capsule` subcommand register itself
// from its own file (an init appending its constructor).
var capsuleSubcommands []func() *cobra.Command

func newCapsuleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "capsule",
		Short: "Check, build and inspect capsules",
	}
	cmd.AddCommand(newCapsuleCheckCmd())
	for _, sub := range capsuleSubcommands {
		cmd.AddCommand(sub())
	}
	return cmd
}
