package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// usageErrorsExit2 makes every usage error of root's command tree exit 2,
// as the commands' help says: an unknown or malformed flag (--bogus, -p
// with no value) and arguments a command does not take (an unknown
// subcommand included), each named with where to read the usage.
func usageErrorsExit2(root *cobra.Command) {
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageHint(cmd, err)
	})
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.HasSubCommands() && !cmd.Runnable() {
			// A group (astrid capsule): alone it shows its help; an
			// argument that is none of its commands is a usage error,
			// not help with exit 0.
			cmd.Args = cobra.NoArgs
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		if args := cmd.Args; args != nil {
			cmd.Args = func(cmd *cobra.Command, a []string) error {
				err := args(cmd, a)
				var done exitError
				if err == nil || errors.As(err, &done) {
					return err
				}
				return usageHint(cmd, err)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// usageHint reports a usage error, naming the help to read, and exits 2.
func usageHint(cmd *cobra.Command, err error) error {
	fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %v (%s --help shows the usage)\n", err, cmd.CommandPath())
	return exitError{code: 2}
}
