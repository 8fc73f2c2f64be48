package natsbus

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// serverLog passes the embedded nats-server's own log to the daemon's: its
// warnings and errors (a route refused, a peer unreachable) as warnings,
// its notices and debug lines at debug level. Its protocol trace is never
// turned on: it would log every message.
type serverLog struct{ log *slog.Logger }

func (l serverLog) emit(level slog.Level, format string, v []any) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return
	}
	l.log.Log(ctx, level, "nats-server: "+strings.TrimSuffix(fmt.Sprintf(format, v...), "\n"))
}

func (l serverLog) Noticef(format string, v ...any) { l.emit(slog.LevelDebug, format, v) }
func (l serverLog) Warnf(format string, v ...any)   { l.emit(slog.LevelWarn, format, v) }
func (l serverLog) Fatalf(format string, v ...any)  { l.emit(slog.LevelError, format, v) }
func (l serverLog) Errorf(format string, v ...any)  { l.emit(slog.LevelWarn, format, v) }
func (l serverLog) Debugf(format string, v ...any)  { l.emit(slog.LevelDebug, format, v) }
func (l serverLog) Tracef(format string, v ...any)  { l.emit(slog.LevelDebug, format, v) }
