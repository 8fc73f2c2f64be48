package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// EnvAsker asks a person for the values of capsule id's required [env]
// keys that have none (missing, in manifest order), keeps them where the
// operator's values are kept, and returns them by key. It returns an error
// when nobody answers; a key it leaves out stays missing.
type EnvAsker func(ctx context.Context, id string, missing []manifest.EnvVar) (map[string]string, error)

// ErrEnvMissing is wrapped by the load error of a capsule whose required
// [env] values are unset.
var ErrEnvMissing = errors.New("required [env] values are not set")

// presetEnv is the operator's values and the manifest's presets, the
// required keys without a value left out (asked per principal on use).
func presetEnv(m *manifest.Manifest, set map[string]string) map[string]string {
	env := maps.Clone(set)
	if env == nil {
		env = map[string]string{}
	}
	for _, e := range m.Env {
		if _, ok := env[e.Key]; ok {
			continue
		}
		if v, ok := e.Preset(); ok {
			env[e.Key] = v
		}
	}
	return env
}

// resolveEnv is the [env] a capsule loads with: the operator's values
// (set), then the manifest's presets (defaults, a single-choice select)
// for keys without one, then, for required keys still without a value,
// what ask gets from a person. A required key left without a value fails
// the load with the command that sets it.
func resolveEnv(ctx context.Context, id string, m *manifest.Manifest, set map[string]string, ask EnvAsker) (map[string]string, error) {
	env := maps.Clone(set)
	if env == nil {
		env = map[string]string{}
	}
	var missing []manifest.EnvVar
	for _, e := range m.Env {
		if _, ok := env[e.Key]; ok {
			continue
		}
		if v, ok := e.Preset(); ok {
			env[e.Key] = v
			continue
		}
		missing = append(missing, e)
	}
	if len(missing) == 0 {
		return env, nil
	}
	var askErr error
	if ask != nil {
		got, err := ask(ctx, id, missing)
		askErr = err
		still := missing[:0]
		for _, e := range missing {
			if v, ok := got[e.Key]; ok && e.Check(v) == nil {
				env[e.Key] = v
			} else {
				still = append(still, e)
			}
		}
		missing = still
	}
	if len(missing) == 0 {
		return env, nil
	}
	lines := make([]string, len(missing))
	for i, e := range missing {
		what := e.Type
		if e.Request != "" {
			what += ", " + fmt.Sprintf("%q", e.Request)
		}
		lines[i] = fmt.Sprintf("%s (%s): set it with `astrid capsule env set %s %s`", e.Key, what, id, e.Key)
	}
	err := fmt.Errorf("%w: %s", ErrEnvMissing, strings.Join(lines, "; "))
	if askErr != nil {
		err = fmt.Errorf("%w (asking for them: %v)", err, askErr)
	}
	return nil, err
}
