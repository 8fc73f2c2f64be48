package main

import (
	"log/slog"
	"strings"

	"github.com/astrid-go/astrid/internal/caps"
	"github.com/astrid-go/astrid/internal/hostkey"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// tokenStanding is a capability token as a standing allowance of the
// approval layer: its id is the token's first ten hex digits.
func tokenStanding(e caps.Entry) standing {
	t := e.Token
	// The key is [~]cap/<capsule>/<tool or =action hash>/<id>: what a token that does not
	// decode was kept for.
	parts := strings.Split(e.Key, "/")
	id := parts[len(parts)-1]
	if t.ID == "" && len(parts) == 4 {
		t.Capsule, t.Tool = parts[1], parts[2]
		t.Kind = "?"
	}
	a := uplinkwire.Allowance{
		ID: id[:min(len(id), 10)], Kind: t.Kind, Capsule: t.Capsule, Tool: t.Tool,
		Since: sinceOf(t.Issued), Token: id, Pattern: t.Pattern, Ignored: e.Problem,
	}
	if t.Action != "" {
		// The host approval call's: the exact resource approved.
		a.Action, a.Resource, a.Pattern = t.Action, caps.UnescapePattern(t.Pattern), ""
	}
	if !t.Expiry.IsZero() {
		x := t.Expiry.UTC()
		a.Expiry = &x
	}
	return standing{Allowance: a, layer: layerTool, key: e.Key}
}

// openCaps is the token book of st, with the host key, for a command that
// opened the store itself (no kernel).
func openCaps(st *store.Store) (*caps.Book, error) {
	key, err := hostkey.Load(st)
	if err != nil {
		return nil, err
	}
	return caps.NewBook(st, key, nil, slog.Default()), nil
}
