package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/sessionclient"
)

func newSessionUndoCmd() *cobra.Command {
	var (
		f      kernelFlags
		turn   int
		asJSON bool
		list   bool
	)
	cmd := &cobra.Command{
		Use:   "undo <session id>",
		Short: "Restore the files a turn of a session changed",
		Long: `Restores the files the agent changed with write_file, replace_in_file, delete_file and
move_file in one turn of the session: by default the latest turn not undone yet, with --turn N
the N-th of the session's turns that changed files (undo numbers them from 1; it keeps the last
20). Each file goes back to what it was before the turn, unless it changed since: then it is
left alone and the reason is shown. A file deleted since is put back; one replaced by a directory
is left alone. What shell commands changed cannot be undone.

Exit status: 0 when every file was restored (or already was as before), 1 when some were not or
there was nothing to undo.`,
		Example: `  astrid session undo s-1a2b3c
  astrid session undo s-1a2b3c --list
  astrid session undo s-1a2b3c --turn 2`,
		Args: oneSessionID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if turn < 0 {
				return usage(cmd, fmt.Errorf("--turn %d: a turn number is 1 or more", turn))
			}
			fe, ctx, stop, err := bootForSessions(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			if list {
				kept, err := sessionclient.UndoList(ctx, fe.k, f.principal, args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.OutOrStdout(), kept)
				}
				writeUndoList(cmd.OutOrStdout(), args[0], kept)
				return nil
			}
			r, err := sessionclient.Undo(ctx, fe.k, f.principal, args[0], turn)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), r); err != nil {
					return err
				}
			} else {
				writeUndo(cmd.OutOrStdout(), args[0], r)
			}
			for _, fr := range r.Files {
				if !fr.Restored && !isUnchanged(fr.What) {
					return exitError{code: 1}
				}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().IntVar(&turn, "turn", 0, "the turn to undo, numbered among the session's turns that changed files (default: the latest not undone)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&list, "list", false, "list the turns undo keeps (their numbers for --turn) and undo nothing")
	return cmd
}

// writeUndo prints what an undo did, a line a file.
func writeUndo(w io.Writer, session string, r sessionclient.UndoResult) {
	fmt.Fprintf(w, "Undid turn %d of %d kept for session %s:\n", r.Turn, r.Turns, session)
	for _, f := range r.Files {
		mark := "✗"
		if f.Restored || isUnchanged(f.What) {
			mark = "✓"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, f.Path, f.What)
	}
	if r.Shell {
		fmt.Fprintln(w, "  The turn also ran shell commands: what they changed is out of undo's reach.")
	}
}

func isUnchanged(what string) bool { return strings.HasPrefix(what, "unchanged") }

// writeUndoList prints the turns undo keeps, a line each.
func writeUndoList(w io.Writer, session string, kept []sessionclient.UndoTurn) {
	if len(kept) == 0 {
		fmt.Fprintf(w, "Session %s has no turn whose file changes undo keeps.\n", session)
		return
	}
	for _, k := range kept {
		note := ""
		if k.Undone {
			note += " (undone)"
		}
		if k.Shell {
			note += " (also ran shell commands, not undoable)"
		}
		fmt.Fprintf(w, "turn %d: %s%s\n", k.Turn, strings.Join(k.Files, ", "), note)
	}
}
