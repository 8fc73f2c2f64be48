package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/jsonscan"
)

// logsPoll is how often astrid logs -f looks for new records.
const logsPoll = 200 * time.Millisecond

func newLogsCmd() *cobra.Command {
	var (
		follow  bool
		capsule string
		asJSON  bool
		lines   int
	)
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Show the Astrid daemon's log",
		Long: `Shows the daemon's structured log ($ASTRID_HOME/logs/daemon.log and the files it
was rotated into, oldest first), one record a line: time, level, message, then
the record's fields. --capsule keeps the records of one capsule; -f waits for
new records and follows the log across its rotation; --json prints the records
as the daemon wrote them (one JSON object a line).

Exit status: 0; 1 when the home has no daemon log (no daemon ever ran there);
2 for a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			if lines < 0 {
				return usage(cmd, fmt.Errorf("--lines must be 0 (all) or more, not %d", lines))
			}
			out := cmd.OutOrStdout()
			show := logPrinter(out, capsule, asJSON)
			r := daemon.OpenLog(home)
			defer r.Close()
			// Ctrl-C ends a follow cleanly from the start: taken before the
			// backlog shows, since a person (or a script waiting for a line
			// of it) may interrupt as soon as it does.
			ctx := cmd.Context()
			if follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
				defer stop()
			}
			// The backlog's last --lines matching records.
			var tail [][]byte
			err = r.Backlog(func(rec []byte) {
				if !logMatches(rec, capsule) {
					return
				}
				tail = append(tail, append([]byte(nil), rec...))
				if lines > 0 && len(tail) > lines {
					tail = tail[1:]
				}
			})
			if errors.Is(err, daemon.ErrNoLog) {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid logs: no daemon log at %s: no daemon has run in %s (astrid start runs one)\n", r.Path(), home)
				return exitError{1}
			}
			if err != nil {
				return err
			}
			for _, rec := range tail {
				show(rec)
			}
			if !follow {
				return nil
			}
			err = r.Follow(ctx, logsPoll, func(rec []byte) {
				if logMatches(rec, capsule) {
					show(rec)
				}
			})
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "wait for new records and print them as they come")
	cmd.Flags().StringVar(&capsule, "capsule", "", "only the records of this capsule")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as the daemon wrote them (JSON lines)")
	cmd.Flags().IntVarP(&lines, "lines", "n", 200, "show this many of the last records before following (0: all)")
	return cmd
}

// logMatches reports whether rec is one of capsule's records ("" matches
// every record): its "capsule" field names it.
func logMatches(rec []byte, capsule string) bool {
	if capsule == "" {
		return true
	}
	found := false
	jsonscan.ScanObject(rec, func(m jsonscan.Member) bool {
		if m.Is("capsule") {
			s, ok := jsonString(rec[m.ValStart:m.End])
			found = ok && s == capsule
			return false
		}
		return true
	})
	return found
}

// logPrinter returns what prints one record.
func logPrinter(w io.Writer, capsule string, asJSON bool) func(rec []byte) {
	if asJSON {
		return func(rec []byte) {
			// The record as written, but never a control byte to the
			// terminal (a JSON record has none unescaped; a torn one might).
			fmt.Fprintln(w, sanitize(string(rec)))
		}
	}
	return func(rec []byte) { fmt.Fprintln(w, formatLogRecord(rec, capsule != "")) }
}

// formatLogRecord renders one JSON record for a person: local time, level,
// message, then key=value for each other field in the record's order (the
// capsule's first, unless every line is that capsule's). A line that is not
// a JSON object is shown as it is. Nothing from the record reaches the
// terminal as a control character: a capsule's message cannot move the
// cursor or change colours.
func formatLogRecord(rec []byte, omitCapsule bool) string {
	var (
		when, level, msg, capsule string
		fields                    []string
	)
	ok := jsonscan.ScanObject(rec, func(m jsonscan.Member) bool {
		val := rec[m.ValStart:m.End]
		switch key := m.Key(); key {
		case "time":
			if s, ok := jsonString(val); ok {
				if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
					when = t.Local().Format("2006-01-02 15:04:05.000")
				} else {
					when = s
				}
			}
		case "level":
			level, _ = jsonString(val)
		case "msg":
			msg, _ = jsonString(val)
		case "capsule":
			if s, ok := jsonString(val); ok {
				capsule = s
				break
			}
			fields = append(fields, sanitize(key)+"="+logValue(val))
		default:
			fields = append(fields, sanitize(key)+"="+logValue(val))
		}
		return true
	})
	if !ok {
		return sanitize(string(rec))
	}
	var b strings.Builder
	if when != "" {
		b.WriteString(sanitize(when))
		b.WriteByte(' ')
	}
	fmt.Fprintf(&b, "%-5s %s", sanitize(level), sanitize(msg))
	if capsule != "" && !omitCapsule {
		b.WriteString(" capsule=" + quoteIfNeeded(capsule))
	}
	for _, f := range fields {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String()
}

// logValue renders one field's JSON value: a string unquoted when it is a
// plain word, quoted (Go syntax, escapes visible) otherwise; anything else
// as its JSON text.
func logValue(val []byte) string {
	if s, ok := jsonString(val); ok {
		return quoteIfNeeded(s)
	}
	return sanitize(string(val))
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r == ' ' || r == '"' || r == '=' || r == '\\' || !unicode.IsGraphic(r)
	}) {
		return strconv.QuoteToGraphic(s)
	}
	return s
}

// sanitize replaces what a terminal would act on or show misleadingly
// (control characters, format characters such as a bidi override, invalid
// UTF-8) with visible escapes.
func sanitize(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// jsonString decodes a JSON string value; false for any other value.
func jsonString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	if s, ok := jsonscan.DecodeString(val); ok {
		return s, true
	}
	var s string
	if err := json.Unmarshal(val, &s); err != nil {
		return "", false
	}
	return s, true
}
