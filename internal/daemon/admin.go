package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/astrid-go/astrid/internal/admin"
	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/metrics"
	"github.com/astrid-go/astrid/internal/webview"
)

// adminCloseGrace bounds how long a shutdown waits for the admin server's
// requests (its event streams end at once).
const adminCloseGrace = 2 * time.Second

// startAdmin starts the admin server of opts.Config.Admin with the web
// view at / and opts.AdminHandlers beside it, and writes its run file
// (p.Admin, 0600: the token is in it). The returned stop closes both and
// removes the file. A server that cannot start is logged, not fatal: the
// daemon's clients reach it through the socket, not the web view.
func startAdmin(k *kernel.Kernel, opts Options, frontends []dispatch.CapsuleACL, p Paths, log *slog.Logger) (stop func()) {
	if !opts.Config.Admin.Enabled {
		if opts.Config.Telemetry.Metrics {
			log.Warn("[telemetry] metrics is on but [admin] is off: no /metrics is served")
		}
		return func() {}
	}
	srv, err := admin.New(admin.Options{Listen: opts.Config.Admin.Listen, Logger: log})
	if err != nil {
		log.Error("admin server not started: no web view", "err", err)
		return func() {}
	}
	view, err := webview.New(webview.Options{Source: webview.KernelSource{Kernel: k, Frontends: frontends}, Logger: log, Notice: kernel.SandboxNotice(opts.Config.Sandbox)})
	if err != nil {
		log.Error("web view not started", "err", err)
		_ = srv.Close(context.Background())
		return func() {}
	}
	srv.Handle("/", view)
	if opts.Config.Telemetry.Metrics {
		srv.Handle("/metrics", metrics.New(k))
	}
	for pattern, h := range opts.AdminHandlers {
		srv.Handle(pattern, h)
	}
	srv.Serve()
	if err := writeAdminInfo(p.Admin, srv.Info(os.Getpid())); err != nil {
		log.Warn("admin run file not written: astrid ui cannot find the web view", "err", err)
	}
	log.Info("admin server listening", "url", srv.BaseURL())
	return func() {
		if err := os.Remove(p.Admin); err != nil && !os.IsNotExist(err) {
			log.Warn("admin run file not removed", "err", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), adminCloseGrace)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			log.Warn("admin server close", "err", err)
		}
		view.Close()
	}
}

func writeAdminInfo(path string, info admin.RunInfo) error {
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// ReadAdmin reads the admin run file of the daemon running for home: the
// URL and token `astrid ui` prints.
func ReadAdmin(home string) (admin.RunInfo, error) {
	var info admin.RunInfo
	path := PathsOf(home).Admin
	data, err := os.ReadFile(path)
	if err != nil {
		return info, fmt.Errorf("daemon: admin run file: %w", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("daemon: admin run file %s: %w", path, err)
	}
	return info, nil
}
