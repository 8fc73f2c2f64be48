package runtime

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

const envManifest = `
[env]
NAME = { type = "text", default = "Agent" }
EMPTY_OK = { type = "text", default = "" }
ONLY = { type = "select", enum_values = ["solo"] }
REGION = { type = "select", enum_values = ["us", "eu"] }
API_KEY = { type = "secret", request = "Enter your API key" }
`

// The operator's values win; defaults and a single-choice select fill the
// rest; a required key without a value fails, naming the command per key.
func TestResolveEnv(t *testing.T) {
	m := parseManifest(t, manifestText("envy", envManifest))
	for _, tc := range []struct {
		name    string
		set     map[string]string
		ask     EnvAsker
		want    map[string]string
		wantErr []string
	}{
		{
			name: "all set", set: map[string]string{"API_KEY": "k", "REGION": "eu", "NAME": "Ada"},
			want: map[string]string{"API_KEY": "k", "REGION": "eu", "NAME": "Ada", "EMPTY_OK": "", "ONLY": "solo"},
		},
		{
			name: "required unset, nobody to ask", set: map[string]string{"REGION": "eu"},
			wantErr: []string{"API_KEY (secret, \"Enter your API key\"): set it with `astrid capsule env set envy API_KEY`"},
		},
		{
			name: "two required unset", set: nil,
			wantErr: []string{"astrid capsule env set envy REGION", "astrid capsule env set envy API_KEY"},
		},
		{
			name: "asked and answered", set: map[string]string{"NAME": "Ada"},
			ask: func(_ context.Context, id string, missing []manifest.EnvVar) (map[string]string, error) {
				if id != "envy" || len(missing) != 2 || missing[0].Key != "REGION" || missing[1].Key != "API_KEY" {
					return nil, errors.New("asked the wrong question")
				}
				return map[string]string{"REGION": "eu", "API_KEY": "sk-1", "NAME": "not asked for"}, nil
			},
			want: map[string]string{"API_KEY": "sk-1", "REGION": "eu", "NAME": "Ada", "EMPTY_OK": "", "ONLY": "solo"},
		},
		{
			name: "asked, a select answered outside its options", set: map[string]string{"API_KEY": "k"},
			ask: func(context.Context, string, []manifest.EnvVar) (map[string]string, error) {
				return map[string]string{"REGION": "mars"}, nil
			},
			wantErr: []string{"astrid capsule env set envy REGION"},
		},
		{
			name: "asked, the person declined", set: map[string]string{"REGION": "us"},
			ask: func(context.Context, string, []manifest.EnvVar) (map[string]string, error) {
				return nil, errors.New("API_KEY was not given")
			},
			wantErr: []string{"astrid capsule env set envy API_KEY", "API_KEY was not given"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveEnv(context.Background(), "envy", m, tc.set, tc.ask)
			if tc.wantErr != nil {
				if !errors.Is(err, ErrEnvMissing) {
					t.Fatalf("err = %v, want ErrEnvMissing", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to say %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "sk-") {
					t.Errorf("the error quotes a secret: %v", err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Fatalf("resolveEnv = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// An installed capsule missing a required value fails alone: the others
// load, and its status says which command sets the value. With a person to
// ask, the same capsule loads with the value they give.
func TestMissingEnvFailsOnlyItsCapsule(t *testing.T) {
	f := newFixture(t, []Builtin{echoBuiltin("echo")}, Engines{})
	f.install("needy", contextCapsule("needy", "n", `[env]`, `TOKEN = { type = "secret", request = "Token please" }`))
	f.install("calm", contextCapsule("calm", "c", `[env]`, `MODE = { type = "text", default = "quiet" }`))
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := f.status("needy"); s.State != "failed" || !strings.Contains(s.Error, "astrid capsule env set needy TOKEN") {
		t.Fatalf("needy = %+v", s)
	}
	for _, id := range []string{"calm", "echo"} {
		if s := f.status(id); s.State != "ready" {
			t.Fatalf("%s = %+v", id, s)
		}
	}

	g := newFixture(t, nil, Engines{})
	g.install("needy", contextCapsule("needy", "n", `[env]`, `TOKEN = { type = "secret", request = "Token please" }`))
	var mu sync.Mutex
	var asked []string
	g.rt.opts.AskEnv = func(_ context.Context, id string, missing []manifest.EnvVar) (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, id+"/"+missing[0].Key)
		return map[string]string{"TOKEN": "t0k"}, nil
	}
	if err := g.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := g.status("needy"); s.State != "ready" || len(asked) != 1 || asked[0] != "needy/TOKEN" {
		t.Fatalf("needy = %+v after asking %v", s, asked)
	}
}

// In a daemon (OnboardMissingEnv) a capsule whose required value nobody
// set loads: each principal is asked for it when a call reads it (host
// env.go), so the load does not fail.
func TestMissingEnvLoadsWhenPrincipalsAreAsked(t *testing.T) {
	f := newFixture(t, nil, Engines{})
	f.install("needy", contextCapsule("needy", "n", `[env]`, `TOKEN = { type = "secret", request = "Token please" }`, `MODE = { type = "text", default = "quiet" }`))
	f.rt.opts.OnboardMissingEnv = true
	if err := f.rt.Boot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := f.status("needy"); s.State != "ready" {
		t.Fatalf("needy = %+v", s)
	}
}
