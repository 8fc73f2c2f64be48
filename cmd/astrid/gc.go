package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
)

// sessionCapsule is the built-in session store whose records gc deletes
// (through its own requests, never by key).
const sessionCapsule = "astrid-capsule-session"

func newGCCmd() *cobra.Command {
	var f kernelFlags
	var dryRun bool
	var olderThan time.Duration
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove old sessions (with their undo snapshots) and stale caches (--dry-run lists them)",
		Long: `Removes what $ASTRID_HOME keeps that nobody needs any more:

  sessions   every principal's conversations nobody wrote to for longer than
             [gc] session_max_age in config.toml (default 90 days) or --older-than,
             deleted through the session store as ` + "`astrid session delete`" + ` does;
             "0s" keeps every session
  caches     compiled wasm code in cache/wasm left by another wazero version (an
             older astrid), and entries of this version unused for as long (a
             capsule still installed compiles again at its next load)

  undo       what the undo capsule keeps of a session to undo its turns (the
             files' prior contents, in state.db): it goes with its session, so
             each deleted session's line says how many snapshots went with it,
             and gc waits until they are gone

--dry-run lists what would go and removes nothing. Nothing else is touched: no
capsule, no stored value or secret, no approval, no log, no undo snapshot of a
session kept. It boots the capsules in-process to reach the session store, as
` + "`astrid --no-daemon`" + ` does; a running daemon may stay up.

Exit status: 0 done (or listed); 1 something could not be removed (named).`,
		Example: `  astrid gc --dry-run
  astrid gc --older-than 720h          # sessions untouched for 30 days
  astrid gc --older-than 0s            # caches only: keep every session`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(config.Layout(home).Config)
			if err != nil {
				return err
			}
			age := cfg.GC.SessionMaxAge.Duration
			if cmd.Flags().Changed("older-than") {
				if olderThan < 0 {
					return usage(cmd, fmt.Errorf("--older-than %s: must be 0 (keep every session) or positive", olderThan))
				}
				age = olderThan
			}
			out := cmd.OutOrStdout()
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			var failed []error
			var sessions int
			var snapshots undoKept
			if age > 0 {
				n, u, err := gcSessions(cmd, f, home, age, dryRun, out)
				sessions, snapshots = n, u
				if err != nil {
					failed = append(failed, err)
				}
			} else {
				fmt.Fprintln(out, "sessions: kept (session_max_age / --older-than is 0)")
			}
			entries, bytes, errs := gcWasmCache(config.Layout(home).WasmCache, wazeroCacheDir(), age, dryRun, out)
			failed = append(failed, errs...)
			fmt.Fprintf(out, "%s %d sessions (%s), %d cache entries (%s)\n", verb, sessions, snapshots, entries, byteSize(bytes))
			if len(failed) > 0 {
				for _, e := range failed {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: gc: %v\n", e)
				}
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed, remove nothing")
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "remove sessions unwritten for longer than this (default: [gc] session_max_age, 90 days); 0s keeps them all")
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "workspace of the in-process kernel (default: the current directory; gc does not touch it)")
	return cmd
}

// gcSessions deletes, for every principal with sessions, those last
// written before now-age, with what the undo capsule kept of them, and
// returns how many sessions it deleted (or would) and the undo snapshots
// that went with them.
func gcSessions(cmd *cobra.Command, f kernelFlags, home string, age time.Duration, dryRun bool, out io.Writer) (int, undoKept, error) {
	var total undoKept
	principals, err := sessionPrincipals(home)
	if err != nil || len(principals) == 0 {
		return 0, total, err
	}
	f.principal, f.background = ipc.DefaultPrincipal, true
	k, ctx, stop, err := bootKernel(cmd, f)
	if err != nil {
		return 0, total, err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cutoff := time.Now().Add(-age)
	n := 0
	for _, p := range principals {
		list, err := sessionclient.List(ctx, k.Frontend(), p, true)
		if err != nil {
			return n, total, fmt.Errorf("sessions of %s: %w", p, err)
		}
		for _, s := range list {
			written := s.LastWritten()
			if written.IsZero() || !written.Before(cutoff) {
				continue
			}
			when := written.Local().Format("2006-01-02 15:04")
			kept, err := undoKeptFor(k.Store, p, s.SessionID)
			if err != nil {
				return n, total, err
			}
			if dryRun {
				fmt.Fprintf(out, "would delete session %s of %s (last written %s; %s)\n", s.SessionID, p, when, kept)
				n++
				total.turns, total.bytes = total.turns+kept.turns, total.bytes+kept.bytes
				continue
			}
			if _, err := sessionclient.Delete(ctx, k.Frontend(), p, s.SessionID); err != nil {
				return n, total, fmt.Errorf("delete session %s of %s: %w", s.SessionID, p, err)
			}
			n++
			if err := waitUndoGone(ctx, k.Store, p, s.SessionID); err != nil {
				return n, total, err
			}
			total.turns, total.bytes = total.turns+kept.turns, total.bytes+kept.bytes
			fmt.Fprintf(out, "deleted session %s of %s (last written %s; %s)\n", s.SessionID, p, when, kept)
		}
	}
	return n, total, nil
}

// sessionPrincipals lists the principals the session store has records
// of, reading the state database only when it exists.
func sessionPrincipals(home string) ([]string, error) {
	path := config.Layout(home).State
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.KVPrincipals(sessionCapsule)
}

// wazeroCacheDir is the directory wazero keeps this build's compiled code
// in, under the cache: wazero-<version>-<arch>-<os>; "" when this build
// does not know wazero's version (a replaced module without one), and then
// no directory can be told stale by its name.
func wazeroCacheDir() string {
	v := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				v = d.Version
				if d.Replace != nil {
					v = d.Replace.Version
				}
			}
		}
	}
	if v == "" || v == "(devel)" {
		return ""
	}
	return "wazero-" + v + "-" + goruntime.GOARCH + "-" + goruntime.GOOS
}

// gcWasmCache removes the compiled code of other wazero versions than
// current's (none when current is ""), and current's entries unmodified for
// longer than age (none when age is 0).
func gcWasmCache(dir, current string, age time.Duration, dryRun bool, out io.Writer) (entries int, bytes int64, failed []error) {
	tops, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, 0, nil
		}
		return 0, 0, []error{err}
	}
	cutoff := time.Now().Add(-age)
	remove := func(path, why string) {
		size := treeSize(path)
		if dryRun {
			fmt.Fprintf(out, "would remove %s (%s, %s)\n", path, byteSize(size), why)
		} else if err := os.RemoveAll(path); err != nil {
			failed = append(failed, err)
			return
		} else {
			fmt.Fprintf(out, "removed %s (%s, %s)\n", path, byteSize(size), why)
		}
		entries++
		bytes += size
	}
	for _, top := range tops {
		path := filepath.Join(dir, top.Name())
		if current == "" {
			continue // which is this build's is unknown: keep them all
		}
		if top.Name() != current {
			remove(path, "compiled by another wazero version than this astrid's "+current)
			continue
		}
		if age <= 0 {
			continue
		}
		files, err := os.ReadDir(path)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		for _, f := range files {
			info, err := f.Info()
			if err == nil && info.ModTime().Before(cutoff) {
				remove(filepath.Join(path, f.Name()), "unused since "+info.ModTime().Local().Format("2006-01-02"))
			}
		}
	}
	return entries, bytes, failed
}

// treeSize is the bytes of the regular files under path.
func treeSize(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
