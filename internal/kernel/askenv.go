package kernel

import (
	"context"
	"fmt"

	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/manifest"
)

// EnvAsker asks a person for the values of capsule id's required [env]
// keys that have none (missing), and returns them by key; a key it leaves
// out stays unset. Loads run concurrently: it is called from several
// goroutines, and must ask one question at a time itself.
type EnvAsker func(ctx context.Context, id string, missing []manifest.EnvVar) (map[string]string, error)

// askEnv wraps ask so that every value a person gives is checked and
// stored, as `astrid capsule env set` stores it (a secret sealed), before
// the load uses it: the next boot does not ask again.
func (k *Kernel) askEnv(ask EnvAsker) runtime.EnvAsker {
	if ask == nil {
		return nil
	}
	return func(ctx context.Context, id string, missing []manifest.EnvVar) (map[string]string, error) {
		got, err := ask(ctx, id, missing)
		kept := map[string]string{}
		for _, e := range missing {
			v, ok := got[e.Key]
			if !ok {
				continue
			}
			if cerr := e.Check(v); cerr != nil {
				k.log.Warn("an [env] value given at load was refused", "capsule", id, "key", e.Key, "err", cerr)
				continue
			}
			if serr := k.Store.SetEnv(id, e.Key, e.Type == manifest.EnvSecret, []byte(v)); serr != nil {
				return kept, fmt.Errorf("store [env] %s of %s: %w", e.Key, id, serr)
			}
			kept[e.Key] = v
		}
		return kept, err
	}
}
