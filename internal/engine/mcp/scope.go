package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Scope step-up (MCP 2025-11-25, "scope challenge handling"): a server
// that refuses a call with 403 and error="insufficient_scope" names the
// scopes the call needs. The engine cannot ask the person (it may run
// headless), so it records the union of what the login asked for and what
// the server asks for on the stored login (Login.StepUp) and tells the
// person to log in again; `astrid mcp login` asks for that union. Bounded:
// a challenge that asks for nothing the login did not already ask for is
// not worth another login, and at most maxStepUps step-up logins follow
// one another.

// maxStepUps bounds the step-up logins in a row (the conformance suite's
// scope-retry-limit allows 3 authorization attempts in all).
const maxStepUps = 2

// maxScopes bounds a scope list: a challenge, a login's union.
const maxScopes = 64

// maxScopeLen bounds one scope token.
const maxScopeLen = 256

// scopeChallenge is what a 401 or 403's WWW-Authenticate says of scope.
type scopeChallenge struct {
	scopes       []string // the scope parameter, validated
	insufficient bool     // error="insufficient_scope"
}

// parseScopeChallenge reads the Bearer challenge of h. A challenge that
// cannot be parsed or names unusable scopes is an error: the engine then
// asks for nothing new.
func parseScopeChallenge(h http.Header) (scopeChallenge, error) {
	var out scopeChallenge
	vals := h.Values("WWW-Authenticate")
	if len(vals) == 0 {
		return out, nil
	}
	cs, err := oauthex.ParseWWWAuthenticate(vals)
	if err != nil {
		return out, fmt.Errorf("unreadable WWW-Authenticate: %w", err)
	}
	for _, c := range cs {
		if !strings.EqualFold(c.Scheme, "bearer") {
			continue
		}
		if strings.EqualFold(c.Params["error"], "insufficient_scope") {
			out.insufficient = true
		}
		if s, ok := c.Params["scope"]; ok {
			if out.scopes, err = parseScopes(s); err != nil {
				return scopeChallenge{}, err
			}
		}
	}
	return out, nil
}

// parseScopes splits a scope parameter (RFC 6749 §3.3: space-separated
// scope tokens of printable ASCII without '"' and '\\'), refusing more
// than maxScopes tokens or one longer than maxScopeLen.
func parseScopes(s string) ([]string, error) {
	if len(s) > maxScopes*(maxScopeLen+1) {
		return nil, fmt.Errorf("the scope list is %d bytes, more than %d", len(s), maxScopes*(maxScopeLen+1))
	}
	var out []string
	for _, tok := range strings.Split(s, " ") {
		if tok == "" {
			continue
		}
		if err := checkScope(tok); err != nil {
			return nil, err
		}
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
		if len(out) > maxScopes {
			return nil, fmt.Errorf("the scope list names more than %d scopes", maxScopes)
		}
	}
	return out, nil
}

func checkScope(tok string) error {
	if len(tok) > maxScopeLen {
		return fmt.Errorf("a scope of %d bytes, more than %d", len(tok), maxScopeLen)
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return fmt.Errorf("scope %q holds a character RFC 6749 §3.3 does not allow", clipScope(tok))
		}
	}
	return nil
}

func clipScope(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// unionScopes is have followed by what want adds, in order, at most
// maxScopes.
func unionScopes(have, want []string) ([]string, error) {
	out := slices.Clone(have)
	for _, s := range want {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > maxScopes {
		return nil, fmt.Errorf("the scopes asked for would be %d, more than %d", len(out), maxScopes)
	}
	return out, nil
}

// errStepUpHopeless says a step-up login would not help.
var errStepUpHopeless = errors.New("logging in again would not help")

// stepUp decides what a 403 insufficient_scope asking for ch.scopes does
// to login l: the scopes the next login asks for, or errStepUpHopeless
// (wrapped with why) when they add nothing or the step-ups are spent.
func stepUp(l *Login, ch scopeChallenge) ([]string, error) {
	if len(ch.scopes) == 0 {
		return nil, fmt.Errorf("the server names no scope it wants: %w", errStepUpHopeless)
	}
	want, err := unionScopes(l.Scopes, ch.scopes)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, errStepUpHopeless)
	}
	if len(want) == len(l.Scopes) {
		return nil, fmt.Errorf("the login already asked for scope %q and the server still refuses it: %w", strings.Join(ch.scopes, " "), errStepUpHopeless)
	}
	if l.StepUps >= maxStepUps {
		return nil, fmt.Errorf("the server asked for more scope after %d step-up logins: %w", l.StepUps, errStepUpHopeless)
	}
	return want, nil
}
