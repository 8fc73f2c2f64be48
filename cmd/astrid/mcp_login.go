package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/engine/mcp"
	"github.com/astrid-go/astrid/internal/gate"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

// loginPatience bounds one login, the person's time in the browser
// included.
const loginPatience = 10 * time.Minute

func newMCPLoginCmd() *cobra.Command {
	var server string
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login <capsule>",
		Short: "Log in to the remote MCP servers of a capsule that ask for OAuth",
		Long: `Runs the OAuth 2.1 login (authorization code with PKCE) for each type = "http" MCP
server of the capsule that asks for authorization, or only --server. The server's
protected resource metadata names its authorization server; a client is registered
there dynamically unless the manifest names one (oauth_client_id) or a Client ID
Metadata Document the server accepts (oauth_client_metadata_url). The authorization
URL is printed on standard error, and opened in a browser when there is one; the login
completes when the browser comes back to a loopback address. The tokens are sealed in
the store, apart from the capsule's own secrets; the engine refreshes them. A running
capsule takes the new login up at the server's next refusal; otherwise it applies when
the capsule next loads (astrid capsule load, or a new run).

When a call fails because the server wants more scope (HTTP 403 insufficient_scope),
run the login again: it asks for the scopes the login had plus those the server named.
Servers with oauth_grant = "client_credentials" or "enterprise" need no login: the
engine gets their tokens itself.

Every request goes through the capsule's egress rules: the server's and the
authorization server's hosts must be in its net grant, and a loopback one in the
operator's [egress] allow.`,
		Example: `  astrid mcp login github
  astrid mcp login github --server issues --no-browser`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, loginPatience)
			defer cancel()
			lc, err := openMCPLogin(args[0], server)
			if err != nil {
				return err
			}
			defer lc.close()
			out := cmd.ErrOrStderr()
			did := 0
			for _, srv := range lc.servers {
				_, err := mcp.RunLogin(ctx, mcp.LoginConfig{
					Capsule: lc.m.ID(), Server: srv, Env: lc.env, Client: lc.client, Tokens: lc.st.MCPTokens(lc.m.ID()),
					Show: func(u string) error {
						fmt.Fprintf(out, "astrid: to log in to MCP server %s, open this URL:\n%s\n", srv.ID, u)
						if !noBrowser {
							openBrowser(u)
						}
						return nil
					},
				})
				if errors.Is(err, mcp.ErrNoLoginNeeded) && server == "" {
					fmt.Fprintf(out, "astrid: MCP server %s asks for no login\n", srv.ID)
					continue
				}
				if errors.Is(err, mcp.ErrEngineGrant) && server == "" {
					fmt.Fprintf(out, "astrid: MCP server %s needs no login (its oauth_grant is %s)\n", srv.ID, srv.OAuthGrant)
					continue
				}
				if err != nil {
					return fmt.Errorf("capsule %s: %w", lc.m.ID(), err)
				}
				did++
				fmt.Fprintf(out, "astrid: logged in to MCP server %s of capsule %s; a running capsule takes it up at the server's next refusal, else at its next load\n", srv.ID, lc.m.ID())
			}
			if did == 0 && server == "" {
				fmt.Fprintf(out, "astrid: no MCP server of capsule %s asked for a login\n", lc.m.ID())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "log in to this [[mcp_server]] id only")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the URL without opening a browser")
	return cmd
}

func newMCPLogoutCmd() *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "logout <capsule>",
		Short: "Forget the OAuth logins of a capsule's remote MCP servers",
		Long: `Deletes the sealed OAuth tokens and client of each remote MCP server of the capsule,
or of --server only. A loaded capsule keeps the token it holds until it is loaded again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			m, err := capsuleManifest(home, args[0])
			if err != nil {
				return err
			}
			servers, err := remoteServers(m, server)
			if err != nil {
				return err
			}
			st, err := openStore(home)
			if err != nil {
				return err
			}
			defer st.Close()
			tokens := st.MCPTokens(m.ID())
			for _, srv := range servers {
				_, had, err := tokens.Get(srv.ID)
				if err != nil {
					return fmt.Errorf("capsule %s: server %s: %w", m.ID(), srv.ID, err)
				}
				if err := tokens.Delete(srv.ID); err != nil {
					return fmt.Errorf("capsule %s: server %s: %w", m.ID(), srv.ID, err)
				}
				if had {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: logged out of MCP server %s of capsule %s\n", srv.ID, m.ID())
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: MCP server %s of capsule %s had no login\n", srv.ID, m.ID())
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "log out of this [[mcp_server]] id only")
	return cmd
}

// loginState is what a login needs: the capsule, its servers, its [env]
// values, the store and an HTTP client under the capsule's egress rules.
type loginState struct {
	m       *manifest.Manifest
	servers []manifest.MCPServer
	env     map[string]string
	st      *store.Store
	client  *http.Client
}

func (l *loginState) close() { _ = l.st.Close() }

func openMCPLogin(id, server string) (*loginState, error) {
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	m, err := capsuleManifest(home, id)
	if err != nil {
		return nil, err
	}
	servers, err := remoteServers(m, server)
	if err != nil {
		return nil, err
	}
	servers = slices.DeleteFunc(servers, func(s manifest.MCPServer) bool { return s.Type != manifest.MCPHTTP })
	if len(servers) == 0 {
		return nil, fmt.Errorf("capsule %s has no type = \"http\" MCP server to log in to", id)
	}
	cfg, err := config.Load(config.Layout(home).Config)
	if err != nil {
		return nil, err
	}
	g, err := gate.New(m.Capabilities, gate.Env{})
	if err != nil {
		return nil, err
	}
	client, err := egress.NewClient(egress.Options{
		AllowLocal: cfg.Egress.Allow,
		CheckHost:  g.Net,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	st, err := openStore(home)
	if err != nil {
		return nil, err
	}
	env, err := capsuleEnv(st, m.ID())
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &loginState{m: m, servers: servers, env: env, st: st, client: client}, nil
}

// capsuleManifest finds capsule id among the capsules the kernel would
// load.
func capsuleManifest(home, id string) (*manifest.Manifest, error) {
	bs := builtins()
	rb := make([]runtime.Builtin, len(bs))
	for i, b := range bs {
		rb[i] = runtime.Builtin(b)
	}
	cands, problems, err := runtime.Discover(rb, config.Layout(home).Capsules)
	if err != nil {
		return nil, err
	}
	idx := slices.IndexFunc(cands, func(c *runtime.Candidate) bool { return c.ID() == id })
	if idx < 0 {
		for _, p := range problems {
			if p.ID == id {
				return nil, fmt.Errorf("capsule %s cannot be loaded: %w", id, p.Err)
			}
		}
		return nil, fmt.Errorf("no capsule %s among the built-ins and %s", id, config.Layout(home).Capsules)
	}
	return cands[idx].Manifest, nil
}

// remoteServers are m's remote MCP servers, or only the one named.
func remoteServers(m *manifest.Manifest, only string) ([]manifest.MCPServer, error) {
	var out, all []manifest.MCPServer
	for _, s := range m.MCPServers {
		if !s.Remote() {
			continue
		}
		all = append(all, s)
		if only == "" || s.ID == only {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		if only != "" {
			var ids []string
			for _, s := range all {
				ids = append(ids, s.ID)
			}
			return nil, fmt.Errorf("capsule %s has no remote MCP server %q (it has: %s)", m.ID(), only, strings.Join(ids, ", "))
		}
		return nil, fmt.Errorf("capsule %s has no remote MCP server", m.ID())
	}
	return out, nil
}

// openStore opens the store of home as `capsule env set` does.
func openStore(home string) (*store.Store, error) {
	cfg, err := config.Load(config.Layout(home).Config)
	if err != nil {
		return nil, err
	}
	return store.Open(config.Layout(home).State, store.Options{Timeout: cfg.StoreLockWait.Duration})
}

// capsuleEnv is the capsule's operator-set [env] values, secrets unsealed,
// as the kernel hands them to its engines.
func capsuleEnv(st *store.Store, id string) (map[string]string, error) {
	out := map[string]string{}
	plain := st.Config(id)
	keys, err := plain.List("")
	if err != nil {
		return nil, fmt.Errorf("capsule %s: config: %w", id, err)
	}
	for _, k := range keys {
		if v, ok, err := plain.Get(k); err == nil && ok {
			out[k] = string(v)
		}
	}
	secrets := st.Secrets(id)
	if keys, err = secrets.List(); err != nil {
		return nil, fmt.Errorf("capsule %s: secrets: %w", id, err)
	}
	for _, k := range keys {
		v, ok, err := secrets.Get(k)
		if err != nil {
			return nil, fmt.Errorf("capsule %s: secret %s: %w", id, k, err)
		}
		if ok {
			out[k] = string(v)
		}
	}
	return out, nil
}

// openBrowser opens u in a browser when the session has one; the URL is
// printed either way, so a failure here is not an error.
func openBrowser(u string) {
	var name string
	var args []string
	switch goruntime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return // headless: no browser to open
		}
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return
	}
	c := exec.Command(path, append(args, u)...)
	if c.Start() == nil {
		go func() { _ = c.Wait() }()
	}
}
