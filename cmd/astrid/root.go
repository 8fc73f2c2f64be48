package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// exitError carries a process exit status through cobra without printing
// anything more (the command has already said what went wrong).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error) int {
	var e exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "astrid",
		Short:         "Astrid: an operating system for AI agents",
		Long:          "Astrid runs capsules (sandboxed tools, agents, providers) on a kernel that routes IPC\nevents between them and enforces each capsule's Capsule.toml as its capability ACL.",
		SilenceUsage:  true,
		SilenceErrors: true, // main prints errors, except exitError, which has been explained already
	}
	root.AddCommand(newVersionCmd())
	root.AddCommand(newCapsuleCmd())
	root.AddCommand(newToolCmd())
	return root
}
