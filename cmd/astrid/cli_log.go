package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// verboseFlag shows the in-process kernel's log on standard error.
const verboseFlag = "verbose"

// cliLogName is the log of the kernels commands boot in-process, in
// $ASTRID_HOME/logs; it is renamed to cliLogName+".1" past cliLogMax.
const (
	cliLogName = "cli.log"
	cliLogMax  = 10 << 20
)

// cliLogger is the logger of a kernel a command boots in-process: every
// record at the configured level goes to $ASTRID_HOME/logs/cli.log, and
// only errors to standard error, unless -v is given, so a warning never
// lands between the lines of an answer (docs/rationale/cli.md, "Why do
// warnings go to a log file and not to the terminal?"). The returned
// function closes the file.
func cliLogger(cmd *cobra.Command, home string, level slog.Level) (*slog.Logger, func()) {
	verbose, _ := cmd.Flags().GetBool(verboseFlag)
	termLevel := slog.LevelError
	if verbose {
		termLevel = level
	}
	handlers := []slog.Handler{slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: termLevel})}
	closeFile := func() {}
	if f, err := openCLILog(home); err == nil {
		handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: level}))
		closeFile = func() { f.Close() }
	}
	return slog.New(fanout(handlers)), closeFile
}

// openCLILog opens the CLI's log for appending, 0600, rotating it once
// when it has grown past cliLogMax (several processes may append to it at
// once; O_APPEND keeps their lines whole).
func openCLILog(home string) (io.WriteCloser, error) {
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, cliLogName)
	if st, err := os.Stat(path); err == nil && st.Size() > cliLogMax {
		_ = os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

// fanout sends each record to every handler that takes its level.
type fanout []slog.Handler

func (h fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, x := range h {
		if x.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (h fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, x := range h {
		if x.Enabled(ctx, r.Level) {
			errs = append(errs, x.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (h fanout) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make(fanout, len(h))
	for i, x := range h {
		out[i] = x.WithAttrs(attrs)
	}
	return out
}

func (h fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(h))
	for i, x := range h {
		out[i] = x.WithGroup(name)
	}
	return out
}
