package natsbus

import (
	"context"
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// serverLog passes the embedded nats-server's own log to the daemon's: its
// warnings and errors (a route refused, a peer unreachable) as warnings,
// its notices and debug lines at debug level. Its protocol trace is never
// turned on: it would log every message.
//
// It also counts, into auth, what nats-server reports only in its log: a
// route connection refused for its credentials (whether it presented wrong
// ones or spoke before authenticating, which routeGuard never sees) and a
// client's permissions violation. nats-server prefixes such a line with the
// connection's address and kind ("127.0.0.1:41234 - rid:7 - ..."), which
// the line keeps.
type serverLog struct {
	log   *slog.Logger
	auth  *Authenticator
	audit *audit.Log
}

// The parts of nats-server's error lines that serverLog counts (client.go:
// authViolation, pubPermissionViolation, subPermissionViolation,
// replySubjectViolation).
const (
	routeConnTag  = " - rid:"
	violationText = " Violation - "
)

var authErrorText = server.ErrAuthentication.Error()

func (l serverLog) emit(level slog.Level, format string, v []any) {
	ctx := context.Background()
	counted := level >= slog.LevelWarn && l.auth != nil
	if !counted && !l.log.Enabled(ctx, level) {
		return
	}
	msg := strings.TrimSuffix(fmt.Sprintf(format, v...), "\n")
	if counted {
		switch {
		case strings.Contains(msg, routeConnTag) && strings.Contains(msg, authErrorText):
			l.auth.routesRefused.Add(1)
			auditPeer(l.audit, audit.KindPeerRefused, "", msg)
		case strings.Contains(msg, violationText):
			l.auth.violations.Add(1)
		}
	}
	l.log.Log(ctx, level, "nats-server: "+msg)
}

func (l serverLog) Noticef(format string, v ...any) { l.emit(slog.LevelDebug, format, v) }
func (l serverLog) Warnf(format string, v ...any)   { l.emit(slog.LevelWarn, format, v) }
func (l serverLog) Fatalf(format string, v ...any)  { l.emit(slog.LevelError, format, v) }
func (l serverLog) Errorf(format string, v ...any)  { l.emit(slog.LevelWarn, format, v) }
func (l serverLog) Debugf(format string, v ...any)  { l.emit(slog.LevelDebug, format, v) }
func (l serverLog) Tracef(format string, v ...any)  { l.emit(slog.LevelDebug, format, v) }
