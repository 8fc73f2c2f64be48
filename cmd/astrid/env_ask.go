package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// askEnv is a kernel.EnvAsker for a command in a terminal: it asks the
// person, one key after another, for the required [env] values capsule id
// has none of (a secret without echo, a select by number), so that the
// capsule loads instead of failing. The kernel stores what it returns, as
// `astrid capsule env set` does. A declined key ends the asking for this
// capsule; the load then fails naming the command. `astrid capsule
// install` asks through it too.
func (a *approver) askEnv(ctx context.Context, id string, missing []manifest.EnvVar) (map[string]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tty == nil {
		return nil, errors.New("nobody can be asked here (no terminal)")
	}
	got := map[string]string{}
	for _, e := range missing {
		header := fmt.Sprintf("Capsule '%s' needs [env] %s before it can load (stored as `astrid capsule env set %s %s` would)", id, e.Key, id, e.Key)
		value := ""
		for attempt := 1; value == ""; attempt++ {
			r := a.ask(ctx, "", header, envField(e))
			if r.Value == nil || *r.Value == "" {
				return got, fmt.Errorf("%s was not given", e.Key)
			}
			err := e.Check(*r.Value)
			switch {
			case err == nil:
				value = *r.Value
			case attempt == envAsks:
				return got, fmt.Errorf("%s: %w", e.Key, err)
			default:
				// Refused by its type: asked again, saying why.
				header = fmt.Sprintf("Capsule '%s' needs [env] %s: %v; try again", id, e.Key, err)
			}
		}
		got[e.Key] = value
	}
	return got, nil
}

// envField is how an [env] key is asked for: a secret hidden, a select
// with enum_values by number, anything else (an array too: its value is
// stored as typed, comma-separated) as text.
func envField(e manifest.EnvVar) ipc.OnboardingField {
	prompt := e.Request
	if prompt == "" {
		prompt = "Value of " + e.Key
	}
	f := ipc.OnboardingField{Key: e.Key, Prompt: prompt, FieldType: ipc.FieldType{Kind: ipc.FieldText}}
	if e.Description != "" {
		d := e.Description
		f.Description = &d
	}
	switch {
	case e.Type == manifest.EnvSecret:
		f.FieldType.Kind = ipc.FieldSecret
	case e.Type == manifest.EnvSelect && len(e.EnumValues) > 0:
		f.FieldType = ipc.FieldType{Kind: ipc.FieldEnum, Options: e.EnumValues}
	}
	return f
}
