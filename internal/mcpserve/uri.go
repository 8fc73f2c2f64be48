package mcpserve

import (
	"fmt"

	"github.com/yosida95/uritemplate/v3"

	"github.com/astrid-go/astrid/ipc"
)

// MaxURI is the longest resource URI the server passes on to a capsule.
const MaxURI = ipc.MaxResourceURI

// checkURI refuses a resource URI a client sent before any capsule sees
// it (ipc.CheckResourceURI).
func checkURI(uri string) error { return ipc.CheckResourceURI(uri) }

// checkTemplate parses a capsule's URI template: ipc.CheckResourceTemplate's
// rules, then RFC 6570 syntax.
func checkTemplate(raw string) (*uritemplate.Template, error) {
	if err := ipc.CheckResourceTemplate(raw); err != nil {
		return nil, err
	}
	t, err := uritemplate.New(raw)
	if err != nil {
		return nil, fmt.Errorf("the URI template %q: %w", clip(raw), err)
	}
	return t, nil
}

// checkOwnURI checks a URI a capsule describes (ipc.CheckOwnResourceURI:
// never the astrid: scheme of the declared files).
func checkOwnURI(uri string) error { return ipc.CheckOwnResourceURI(uri) }

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}
