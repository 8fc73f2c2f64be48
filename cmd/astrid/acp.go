package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/acp"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/sessionmcp"
	"github.com/astrid-go/astrid/manifest"
)

func newACPCmd() *cobra.Command {
	var f kernelFlags
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdio, for an editor (Zed, JetBrains, Neovim, Emacs)",
		Long: `Speaks the Agent Client Protocol (agentclientprotocol.com) on standard input and
output: the editor starts astrid acp, one process per connection, and drives the agent
through it. Configure your editor to run "astrid acp" (docs/acp.md has Zed's
agent_servers settings and others').

Each ACP session works on the editor's cwd as its workspace: the agent's tools read and
write there, checked against the capsules' grants as everywhere else, so two sessions of
different projects in one process each see only their own files. A tool call that changes
things is put to the editor as a permission request (allow once, allow until astrid
restarts, always allow, reject); one the editor never answers is refused after the
approval layer's approval_timeout_secs (300 s by default). session/load replays a stored
session (astrid session list); session/set_model takes a model of astrid models list.
Closing standard input cancels the running turns and exits 0.

Talks to the running daemon of $ASTRID_HOME when there is one (a connection per
workspace), and boots a kernel in-process otherwise (--no-daemon forces that). When
that daemon stops or restarts, a session's next prompt connects again (waiting up to
30 s for it to answer) and goes on with the session's history. Standard
output carries JSON-RPC only; warnings go to standard error (the editor's log), and
everything to $ASTRID_HOME/logs/cli.log.

MCP servers the editor lists for a session (stdio and HTTP) are that session's own: they
run in its workspace, confined like an installed capsule's, and only its turns are
offered their tools; each call is asked about (the server is the editor's, not yours);
they stop when the session or the connection ends. A stdio server's command must be
listed in config.toml [mcp] session_commands (e.g. ["npx"]), with the directories its
code lives in under session_read; a server refused says why, and the session is not
opened. An editor that offers its buffers (fs/read_text_file, fs/write_text_file) gives
read_file its unsaved text and writes write_file's existing files itself, after the
grants allowed the path (else, or after 2 s without an answer, the disk serves); its
terminals are never used (they run outside astrid's confinement). A prompt with images is refused (invalid params) when the
session's model does not take them (astrid models list shows its capabilities).

Exit status: 0 when the editor closes the connection; 1 when the kernel could not start;
2 a usage error.`,
		Example: `  astrid acp
  astrid acp --no-daemon
  # Zed, settings.json:
  #   "agent_servers": { "Astrid": { "command": "astrid", "args": ["acp"] } }`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runACP(cmd, &f) },
	}
	f.register(cmd)
	return cmd
}

// runACP serves ACP until the editor closes standard input.
func runACP(cmd *cobra.Command, f *kernelFlags) error {
	// An editor that closes our output must not kill us mid-cancel: a
	// write then fails instead.
	signal.Ignore(syscall.SIGPIPE)
	home, err := config.Home()
	if err != nil {
		return err
	}
	backend, log, ctx, stop, err := acpBackend(cmd, f, home)
	if err != nil {
		return err
	}
	defer stop()
	err = acp.Serve(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), acp.Options{
		Backend: backend, Principal: f.principal, Logger: log, Version: manifest.RuntimeVersion,
	})
	if err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
		return exitError{code: 1}
	}
	return nil
}

// acpBackend is the daemon of home when one runs (and --no-daemon is not
// given), else a kernel booted in-process, as openFrontend chooses; log
// says warnings on stderr and everything in the CLI's log.
func acpBackend(cmd *cobra.Command, f *kernelFlags, home string) (acp.Backend, *slog.Logger, context.Context, func(), error) {
	noDaemon, _ := cmd.Flags().GetBool(noDaemonFlag)
	if !noDaemon {
		fe, ctx, stop, err := attachDaemon(cmd, *f)
		switch {
		case err == nil:
			principal := fe.remote.Principal()
			fe.remote.Close() // each workspace dials its own connection
			env, err := clientEnv()
			if err != nil {
				stop()
				return nil, nil, nil, nil, usage(cmd, err)
			}
			log, closeLog := acpLogger(cmd, home)
			return daemonBackend{home: home, env: env, principal: principal}, log, ctx, func() { stop(); closeLog() }, nil
		case !errors.Is(err, daemonclient.ErrNoDaemon):
			return nil, nil, nil, nil, err
		}
	}
	k, ctx, stop, err := bootKernel(cmd, *f)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	(frontend{local: k}).sayUnloaded(cmd.ErrOrStderr())
	log, closeLog := acpLogger(cmd, home)
	return localBackend{k: k, principal: f.principal}, log, ctx, func() { stop(); closeLog() }, nil
}

// acpLogger is astrid acp's logger: warnings on stderr (an editor shows
// an agent's stderr in its log), everything from info up in the CLI's log.
func acpLogger(cmd *cobra.Command, home string) (*slog.Logger, func()) {
	handlers := []slog.Handler{slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})}
	closeFile := func() {}
	if f, err := openCLILog(home); err == nil {
		handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
		closeFile = func() { f.Close() }
	}
	return slog.New(fanout(handlers)), closeFile
}

// localBackend gives each workspace a request scope of the in-process
// kernel: what the uplink gives each daemon client, so a session's turn,
// its prompt builder, provider and every tool call work in the session's
// directory (DESIGN §4a).
type localBackend struct {
	k         *kernel.Kernel
	principal string
}

func (b localBackend) Open(_ context.Context, dir string) (acp.Workspace, error) {
	id, ws, err := b.k.OpenScope(b.principal, dir)
	if err != nil {
		return acp.Workspace{}, err
	}
	return acp.Workspace{Kernel: scopedFrontend{Frontend: b.k.Frontend(), scope: id}, Dir: ws, Close: func() { b.k.CloseScope(id) },
		Attach: func(ctx context.Context, servers []sessionmcp.Server) ([]string, error) {
			return b.k.AttachMCP(ctx, b.principal, id, servers)
		}}, nil
}

// scopedFrontend is the in-process kernel's frontend whose every publish
// carries one request scope.
type scopedFrontend struct {
	kernel.Frontend
	scope uint64
}

func (f scopedFrontend) Publish(from dispatch.Caller, topic string, payload json.RawMessage) (dispatch.Result, error) {
	from.Scope = f.scope
	return f.Frontend.Publish(from, topic, payload)
}

func (f scopedFrontend) PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error) {
	from.Scope = f.scope
	return f.Frontend.PublishRequest(from, topic, payload, req)
}

// daemonBackend gives each workspace its own connection to the daemon,
// whose hello names the directory and the provider settings of our
// environment (docs/uplink.md), as astrid -p --workspace does.
type daemonBackend struct {
	home      string
	env       map[string]string
	principal string
}

func (b daemonBackend) Open(ctx context.Context, dir string) (acp.Workspace, error) {
	ws, err := host.CheckWorkspace(dir, b.home, -1)
	if err != nil {
		return acp.Workspace{}, err
	}
	c, err := dialDaemonFor(ctx, b.home, ws, b.env)
	if err != nil {
		return acp.Workspace{}, fmt.Errorf("the daemon of %s: %w", b.home, err)
	}
	if c.Principal() != b.principal {
		c.Close()
		return acp.Workspace{}, fmt.Errorf("the daemon now serves you as principal %q, not %q", c.Principal(), b.principal)
	}
	// A daemon that stops or restarts ends the connection: the session
	// opens its workspace again on its next prompt (a new connection).
	return acp.Workspace{Kernel: c, Dir: c.Workspace(), Close: func() { c.Close() }, Lost: c.Done(),
		Attach: func(_ context.Context, servers []sessionmcp.Server) ([]string, error) {
			return c.AttachMCP(servers, loadWait)
		}}, nil
}
