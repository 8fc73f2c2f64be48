package main

import (
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/spf13/cobra"
)

// exitError carries a process exit status through cobra without printing
// anything more (the command has already said what went wrong).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitStoreBusy is the status when another astrid process kept the state
// database past store_lock_wait: contention, not failure, so a script can
// tell it apart and retry (75 is EX_TEMPFAIL in sysexits.h).
const exitStoreBusy = 75

func exitCode(err error) int {
	var e exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.code
	case errors.Is(err, store.ErrInUse):
		return exitStoreBusy
	}
	return 1
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "astrid",
		Short: "Astrid: an operating system for AI agents",
		Long: `Astrid runs capsules (sandboxed tools, agents, providers) on a kernel that routes IPC
events between them and enforces each capsule's Capsule.toml as its capability ACL.

Exit status: each command lists its own; every command exits 75 when another astrid
process kept the state database ($ASTRID_HOME/state.db) busy for longer than
store_lock_wait in config.toml (default 5s), naming that process. Several astrid
processes may share one $ASTRID_HOME: each holds the database only while it uses it.`,
		SilenceUsage:  true,
		SilenceErrors: true, // main prints errors, except exitError, which has been explained already
	}
	root.AddCommand(newVersionCmd())
	root.AddCommand(newCapsuleCmd())
	root.AddCommand(newToolCmd())
	root.AddCommand(newSessionCmd())
	return root
}
