package runtime

import (
	"encoding/json"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// Status is what the runtime knows of one capsule.
type Status struct {
	ID      string   `json:"id"`
	Dir     string   `json:"dir,omitempty"` // "" for a built-in
	Builtin bool     `json:"builtin,omitempty"`
	Engines []string `json:"engines"`
	State   string   `json:"state"`
	Tools   []string `json:"tools,omitempty"`
	// Error is the last error: why it failed, or why a reload was refused
	// while the capsule kept running.
	Error string `json:"error,omitempty"`
	// Restarts counts the health monitor's restarts of it since it last
	// failed (health.go); GaveUp is set once they are spent and it stays
	// failed until it is reloaded or reinstalled.
	Restarts int  `json:"restarts,omitempty"`
	GaveUp   bool `json:"gave_up,omitempty"`
}

// List returns every capsule the runtime knows, in load order, then the
// capsules found but never loaded (their manifest was unreadable or their
// name taken).
func (r *Runtime) List() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Status, 0, len(r.order)+len(r.problems))
	now := time.Now()
	for _, id := range r.order {
		e := r.entries[id]
		s := Status{ID: id, Dir: e.cand.Dir, Builtin: e.cand.Builtin(), Tools: e.tools}
		var health capsule.Health
		switch {
		case e.comp != nil:
			s.Engines = e.comp.Engines()
			health = e.comp.Health()
			s.Restarts = e.comp.Restarts()
		case e.cand.Builtin():
			s.Engines = append([]string{"native"}, without(e.cand.Manifest.Engines(), "wasm")...)
			health = capsule.Health{State: capsule.Failed}
		default:
			// Never built: the engines the manifest asks for.
			s.Engines = e.cand.Manifest.Engines()
			health = capsule.Health{State: capsule.Failed}
		}
		s.State = health.State.String()
		if e.loading {
			s.State = capsule.Loading.String()
		}
		if !e.loaded && health.State != capsule.Failed {
			// Unloaded after a failed readiness wait or registration.
			if e.err != nil {
				s.State = capsule.Failed.String()
			}
		}
		switch {
		case e.err != nil:
			s.Error = e.err.Error()
		case health.Err != nil:
			s.Error = health.Err.Error()
		}
		r.restartNote(id, &s, now)
		out = append(out, s)
	}
	for _, p := range r.problems {
		out = append(out, Status{ID: p.ID, Dir: p.Dir, State: capsule.Failed.String(), Error: p.Err.Error()})
	}
	return out
}

func without(list []string, drop ...string) []string {
	var out []string
	for _, s := range list {
		keep := true
		for _, d := range drop {
			keep = keep && s != d
		}
		if keep {
			out = append(out, s)
		}
	}
	return out
}

// LoadedEvent is the data of astrid.v1.capsules_loaded (a custom payload).
type LoadedEvent struct {
	Capsules []LoadedCapsule `json:"capsules"`
}

// LoadedCapsule is one capsule in a LoadedEvent.
type LoadedCapsule struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// publishLoaded records who provides each tool and tells every subscriber
// that the set of capsules changed.
func (r *Runtime) publishLoaded() {
	r.saveProviders()
	ev := LoadedEvent{Capsules: []LoadedCapsule{}}
	for _, s := range r.List() {
		ev.Capsules = append(ev.Capsules, LoadedCapsule{ID: s.ID, State: s.State})
	}
	data, err := json.Marshal(ev)
	if err == nil {
		var payload json.RawMessage
		if payload, err = ipc.EncodePayload(ipc.Custom{Data: data}); err == nil {
			_, err = r.opts.Dispatcher.Publish(dispatch.Caller{}, ipc.CapsulesLoadedTopic, payload, dispatch.KernelEvent)
			if r.opts.Principals != nil {
				for _, p := range r.opts.Principals() {
					if p == ipc.DefaultPrincipal || p == "" {
						continue
					}
					if _, perr := r.opts.Dispatcher.Publish(dispatch.Caller{Principal: p}, ipc.CapsulesLoadedTopic, payload, dispatch.KernelEvent); perr != nil {
						r.log.Warn("capsules_loaded not published", "principal", p, "err", perr)
					}
				}
			}
		}
	}
	if err != nil {
		r.log.Warn("capsules_loaded not published", "err", err)
	}
}
