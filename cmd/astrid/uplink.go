package main

import (
	"context"
	"fmt"
	"os"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/manifest"
)

// uplinkBuiltin is the CLI uplink as the daemon loads it (DESIGN §8): a
// built-in serving $ASTRID_HOME/run/astrid.sock under cfg's [uplink], the
// running user as its owner ("default"), its queries answered by rep (nil:
// none). The daemon puts it first in its built-ins; a one-shot command does
// not load it.
func uplinkBuiltin(cfg config.Config, rep *daemon.Reporter) (kernel.Builtin, error) {
	principals, err := cfg.Uplink.UIDPrincipals()
	if err != nil {
		return kernel.Builtin{}, fmt.Errorf("config [uplink] principals: %w", err)
	}
	allowed, err := cfg.Uplink.UIDAllowedPrincipals()
	if err != nil {
		return kernel.Builtin{}, fmt.Errorf("config [uplink] principals: %w", err)
	}
	byPrincipal, err := cfg.Uplink.IngressByPrincipal()
	if err != nil {
		return kernel.Builtin{}, fmt.Errorf("config [uplink] ingress: %w", err)
	}
	if err := uplink.CheckIngress(byPrincipal); err != nil {
		return kernel.Builtin{}, fmt.Errorf("config [uplink] ingress: %w", err)
	}
	s := uplink.Settings{
		OwnerUID:    os.Getuid(),
		Principals:  principals,
		Allowed:     allowed,
		Ingress:     byPrincipal,
		MaxClients:  cfg.Uplink.MaxClients,
		ClientQueue: cfg.Uplink.ClientQueue,
	}
	if rep != nil {
		s.Report = queryReporter(rep)
		s.Load = capsuleLoader(rep)
		s.AttachMCP = mcpAttacher(rep)
		s.Clients = rep.Clients // the idle timer's
	}
	return kernel.Builtin{Manifest: uplink.Manifest, New: uplink.NewWith(s)}, nil
}

// dialDaemon connects to the daemon of home; errors.Is(err,
// daemonclient.ErrNoDaemon) means none runs, and the command boots the
// kernel in-process instead.
func dialDaemon(ctx context.Context, home string) (*daemonclient.Client, error) {
	return daemonclient.Dial(ctx, home, daemonclient.Options{Client: "astrid " + manifest.RuntimeVersion})
}
