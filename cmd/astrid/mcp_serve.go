package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/mcpserve"
	"github.com/astrid-go/astrid/manifest"
)

func newMCPServeCmd() *cobra.Command {
	var f kernelFlags
	var httpAddr string
	var window, timeout time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the loaded capsules' tools, resources and prompts to an MCP client (stdio, or --http on loopback)",
		Long: `Serves every tool the loaded capsules provide to an MCP client: over standard input
and output by default (an editor or another agent starts "astrid mcp serve" as its
stdio server), or with --http 127.0.0.1:PORT over streamable HTTP at /mcp, on a
loopback address only, behind a bearer token printed once on standard error.

The tools are listed as the router describes them (a name with ':' is served with
'.', as MCP allows no ':'), with readOnlyHint and destructiveHint from whether the
tool changes things. A call goes through the router, the approval capsule and the
providing capsule's confinement like any other, acting for --principal. When the
approval capsule asks about a call, the client is asked through MCP elicitation
(yes, no or always); a client that cannot elicit is refused, and the call answers
an error. A client's cancel cancels the call. A tool's images, audio and embedded
resources reach the client as MCP content, its progress and log messages as
notifications (log messages at the level the client sets with logging/setLevel),
and its form questions as one elicitation. A tool may ask the client's model
(sampling/createMessage) only when config.toml's [mcp] sampling names its capsule
and the client offers sampling.

Resources and prompts are the capsules' too: those a capsule offers through the
resource and prompt conventions, each [[skill]] and [[context_file]] at
astrid://<capsule>/skills/<name> and astrid://<capsule>/context/<name>, and each
slash [[command]] with a prompt as a prompt taking "args". A read or get is answered
by the capsule that owns it; a URI with a ".." segment, a control character or no
scheme, or over 2048 bytes, is refused first (docs/mcp.md).

Talks to the running daemon of $ASTRID_HOME when there is one (and --no-daemon is
not given), else boots a kernel in-process; either way the tools work on
--workspace (default: the current directory).

Exit status: 0 when the client disconnects (stdio) or on Ctrl-C or SIGTERM; 1 when
the server cannot start; 2 on a usage error.`,
		Example: `  astrid mcp serve
  astrid mcp serve --workspace ~/project --principal alice --no-daemon
  astrid mcp serve --http 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if httpAddr != "" {
				if err := loopbackAddr(httpAddr); err != nil {
					return usage(cmd, fmt.Errorf("--http: %w", err))
				}
			}
			fe, ctx, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			home, err := config.Home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(config.Layout(home).Config)
			if err != nil {
				return err
			}
			srv := mcpserve.New(mcpserve.Options{
				Kernel: fe.k, Principal: f.principal, Window: window, Timeout: timeout,
				Version: manifest.RuntimeVersion, Logger: fe.k.Logger(),
				Sampling: cfg.MCP.SamplingAllowed,
			})
			defer srv.Close()
			if err := srv.Sync(ctx); err != nil {
				return err
			}
			if httpAddr == "" {
				if err := srv.ServeStdio(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					return err
				}
				return nil
			}
			return serveMCPHTTP(ctx, cmd, srv, httpAddr)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT; port 0 picks one) instead of stdio")
	cmd.Flags().DurationVar(&window, "window", 2*time.Second, "upper bound on waiting for the capsules' describe answers on each tools/list")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long one call may take, the client's answers to approval questions included")
	return cmd
}

// loopbackAddr checks that addr is host:port on a loopback address: the
// server answers anyone who holds the token, so it is never offered to
// the network.
func loopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address; astrid mcp serve listens on loopback only (127.0.0.1:PORT)", addr)
	}
	return nil
}

// serveMCPHTTP serves srv over streamable HTTP on addr until ctx ends,
// after printing the address and the token once on standard error.
func serveMCPHTTP(ctx context.Context, cmd *cobra.Command, srv *mcpserve.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	token := mcpserve.NewToken()
	fmt.Fprintf(cmd.ErrOrStderr(), "astrid: serving MCP at http://%s%s\nastrid: bearer token (shown once): %s\n", ln.Addr(), mcpserve.Path, token)
	hs := &http.Server{Handler: srv.HTTPHandler(token), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			_ = hs.Close() // a client's open stream outlived the grace
		}
	}()
	err = hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}
