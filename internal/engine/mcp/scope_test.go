package mcp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/engine/mcp/oauthtest"
)

// TestScopeStepUp: a call refused 403 insufficient_scope is answered with
// the scopes the next login asks for (the union), recorded on the stored
// login; that login asks for them, and the running engine takes it up at
// the next refusal: the call goes through without a restart.
func TestScopeStepUp(t *testing.T) {
	fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
	fake.CallScopes = []string{"tools", "write"}
	u := fake.URL + "/mcp"
	tokens := &memTokens{}
	if err := login(t, fake, tokens); err != nil {
		t.Fatalf("login: %v", err)
	}
	r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{Tokens: tokens})
	res := r.roundTrip("rem:echo", "s1", `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.Content, "astrid mcp login remote-capsule") || !strings.Contains(res.Content, `"tools write"`) {
		t.Fatalf("call without the scope = %+v, want to be told to log in for \"tools write\"", res)
	}
	l, _, _ := LoadLogin(tokens, "rem")
	if !l.StepUpPending() || !slices.Equal(l.StepUp, []string{"tools", "write"}) {
		t.Fatalf("stored login after the 403: %+v", l)
	}
	if err := login(t, fake, tokens); err != nil {
		t.Fatalf("step-up login: %v", err)
	}
	if got := fake.Scopes[len(fake.Scopes)-1]; got != "tools write" {
		t.Fatalf("the step-up login asked for scope %q, want \"tools write\"", got)
	}
	l, _, _ = LoadLogin(tokens, "rem")
	if l.StepUpPending() || l.StepUps != 1 {
		t.Fatalf("stored login after the step-up: %+v", l)
	}
	if res := r.roundTrip("rem:echo", "s2", `{"text":"stepped up"}`); res.IsError || res.Content != "stepped up" {
		t.Fatalf("call after the step-up login = %+v", res)
	}
}

// TestScopeStepUpRefused: challenges a step-up must not follow — a scope
// list of 10,000 entries, scopes with characters RFC 6749 forbids, a scope
// the login already asked for, step-ups spent — fail the call saying a
// login would not help, and leave no step-up on the stored login.
func TestScopeStepUpRefused(t *testing.T) {
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	tests := []struct {
		name, challenge string
		stepUps         int
		want            string
	}{
		{"10000 scopes", strings.Join(many, " "), 0, "unusable"},
		{"65 scopes", strings.Join(many[:65], " "), 0, "more than 64"},
		{"a quote in a scope", `tools wr\"ite`, 0, "does not allow"},
		{"non-ASCII scope", "tools wrïte", 0, "does not allow"},
		{"nothing new", "tools", 0, "already asked for"},
		{"step-ups spent", "tools write", maxStepUps, "after 2 step-up logins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthtest.New(t, func() *mcp.Server { return remoteTools(newBlocking(t)) })
			fake.CallScopes, fake.Challenge = []string{"tools", "write"}, tt.challenge
			u := fake.URL + "/mcp"
			tokens := &memTokens{}
			if err := login(t, fake, tokens); err != nil {
				t.Fatalf("login: %v", err)
			}
			l, _, _ := LoadLogin(tokens, "rem")
			l.StepUps = tt.stepUps
			if err := SaveLogin(tokens, "rem", l); err != nil {
				t.Fatal(err)
			}
			r := mustRemoteRig(t, remoteManifest(t, "http", u, ""), []string{hostPort(t, u)}, 0, Options{Tokens: tokens})
			res := r.roundTrip("rem:echo", "s1", `{"text":"x"}`)
			if !res.IsError || !strings.Contains(res.Content, tt.want) || strings.Contains(res.Content, "run `astrid mcp login") {
				t.Fatalf("call = %+v, want a refusal with %q and no login advice", res, tt.want)
			}
			if l, _, _ := LoadLogin(tokens, "rem"); l.StepUpPending() {
				t.Fatalf("a step-up was recorded: %+v", l.StepUp)
			}
			if len(fake.Scopes) != 1 {
				t.Fatalf("authorization requests: %d", len(fake.Scopes))
			}
		})
	}
}

func TestParseScopeChallenge(t *testing.T) {
	tests := []struct {
		header       string
		scopes       []string
		insufficient bool
		bad          bool
	}{
		{``, nil, false, false},
		{`Bearer scope="a b a"`, []string{"a", "b"}, false, false},
		{`Bearer error="insufficient_scope", scope="mcp:basic mcp:write"`, []string{"mcp:basic", "mcp:write"}, true, false},
		{`Basic realm="x", Bearer error="insufficient_scope"`, nil, true, false},
		{`Bearer scope="a\\b"`, nil, false, true},
		{`Bearer scope="` + strings.Repeat("x", maxScopeLen+1) + `"`, nil, false, true},
		{`Bearer scope="unterminated`, nil, false, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.header != "" {
			h.Set("WWW-Authenticate", tt.header)
		}
		got, err := parseScopeChallenge(h)
		if (err != nil) != tt.bad || !slices.Equal(got.scopes, tt.scopes) || got.insufficient != tt.insufficient {
			t.Errorf("parseScopeChallenge(%.60q) = %+v, %v", tt.header, got, err)
		}
	}
}

// FuzzParseScopeChallenge: a server's WWW-Authenticate never panics the
// parser, and what it accepts is a bounded list of valid scope tokens.
func FuzzParseScopeChallenge(f *testing.F) {
	f.Add(`Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://x/.well-known/oauth-protected-resource"`)
	f.Add(`Bearer scope="a\"b"`)
	f.Add(`Basic realm="r", Bearer scope=a`)
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{"Www-Authenticate": {v}}
		ch, err := parseScopeChallenge(h)
		if err != nil {
			return
		}
		if len(ch.scopes) > maxScopes {
			t.Fatalf("%d scopes", len(ch.scopes))
		}
		for _, s := range ch.scopes {
			if s == "" || checkScope(s) != nil {
				t.Fatalf("accepted scope %q", s)
			}
		}
	})
}
