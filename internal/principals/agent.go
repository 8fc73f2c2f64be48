package principals

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// Agent is one principal the operator created, with its limits.
type Agent struct {
	Name string `json:"name"`
	// Capsules are the capsules whose tools it may use; empty: all.
	Capsules []string `json:"capsules,omitempty"`
	// ReadOnly: it is offered, and may call, no mutable tool.
	ReadOnly bool `json:"read_only,omitempty"`
	// CPUBudgetMs is its CPU budget in ms per second; 0: the host's.
	CPUBudgetMs int `json:"cpu_budget_ms,omitempty"`
	// TokensPerDay bounds the LLM tokens its turns may use in a UTC
	// day; 0: no bound.
	TokensPerDay int64     `json:"tokens_per_day,omitempty"`
	Created      time.Time `json:"created"`
}

// Errors of the registry.
var (
	ErrExists   = errors.New("principals: an agent of that name exists")
	ErrNotFound = errors.New("principals: no agent of that name")
	ErrInvalid  = errors.New("principals: invalid agent")
)

// maxCapsules bounds an agent's capsule list.
const maxCapsules = 256

// ValidateName checks an agent's name: a principal id (1 to 64 ASCII
// letters, digits, '-', '_'), not the local user's ("default", which every
// host has) and not starting with '-' (it would read as a flag).
func ValidateName(name string) error {
	if err := ipc.ValidatePrincipal(name); err != nil {
		return fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	if name == ipc.DefaultPrincipal {
		return fmt.Errorf("%w: name %q is the local user's principal, which always exists", ErrInvalid, name)
	}
	if strings.HasPrefix(name, "-") {
		return fmt.Errorf("%w: name %q starts with '-', which reads as a flag", ErrInvalid, name)
	}
	return nil
}

// Validate checks a's fields.
func (a Agent) Validate() error {
	if err := ValidateName(a.Name); err != nil {
		return err
	}
	if len(a.Capsules) > maxCapsules {
		return fmt.Errorf("%w: %d capsules (at most %d)", ErrInvalid, len(a.Capsules), maxCapsules)
	}
	for _, c := range a.Capsules {
		if err := manifest.ValidateID(c); err != nil {
			return fmt.Errorf("%w: capsule %q: %w", ErrInvalid, c, err)
		}
	}
	if a.CPUBudgetMs < 0 || a.CPUBudgetMs > 1000*1024 {
		return fmt.Errorf("%w: cpu budget %d ms per second (0 to %d)", ErrInvalid, a.CPUBudgetMs, 1000*1024)
	}
	if a.TokensPerDay < 0 {
		return fmt.Errorf("%w: tokens per day %d is negative", ErrInvalid, a.TokensPerDay)
	}
	return nil
}

// MayUse reports whether the agent may use capsule's tools.
func (a Agent) MayUse(capsule string) bool {
	return len(a.Capsules) == 0 || slices.Contains(a.Capsules, capsule)
}

// Registry keeps the agents in the kernel's namespace of the default
// principal, "agent/<name>".
type Registry struct{ st *store.Store }

// NewRegistry keeps agents in st.
func NewRegistry(st *store.Store) *Registry { return &Registry{st: st} }

const agentPrefix = "agent/"

func (r *Registry) kv() *store.KV { return r.st.KV(ipc.DefaultPrincipal, ipc.KernelSourceID) }

// Create keeps a new agent; ErrExists if the name is taken.
func (r *Registry) Create(a Agent) error {
	if err := a.Validate(); err != nil {
		return err
	}
	a.Capsules = slices.Compact(slices.Sorted(slices.Values(a.Capsules)))
	if _, ok, err := r.Get(a.Name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s", ErrExists, a.Name)
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("principals: create %s: %w", a.Name, err)
	}
	if err := r.kv().Set(agentPrefix+a.Name, raw); err != nil {
		return fmt.Errorf("principals: create %s: %w", a.Name, err)
	}
	return nil
}

// Get reads the agent name; ok is false when there is none. A record that
// does not decode, or names another agent, is an error.
func (r *Registry) Get(name string) (Agent, bool, error) {
	if err := ipc.ValidatePrincipal(name); err != nil {
		return Agent{}, false, fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	raw, ok, err := r.kv().Get(agentPrefix + name)
	if err != nil || !ok {
		return Agent{}, false, err
	}
	var a Agent
	if err := json.Unmarshal(raw, &a); err != nil {
		return Agent{}, false, fmt.Errorf("principals: agent %s: record does not decode: %w", name, err)
	}
	if a.Name != name {
		return Agent{}, false, fmt.Errorf("principals: agent %s: record names %q", name, a.Name)
	}
	return a, true, nil
}

// List is every agent, by name.
func (r *Registry) List() ([]Agent, error) {
	keys, err := r.kv().List(agentPrefix)
	if err != nil {
		return nil, fmt.Errorf("principals: list: %w", err)
	}
	slices.Sort(keys)
	out := make([]Agent, 0, len(keys))
	for _, k := range keys {
		a, ok, err := r.Get(strings.TrimPrefix(k, agentPrefix))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// Remove deletes the agent name; ErrNotFound when there is none. Its
// data (every capsule's store for it, its tokens, its home) is the
// caller's to purge first (store.PurgePrincipal; astrid agent remove does
// unless --keep-data).
func (r *Registry) Remove(name string) error {
	if _, ok, err := r.Get(name); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err := r.kv().Delete(agentPrefix + name); err != nil {
		return fmt.Errorf("principals: remove %s: %w", name, err)
	}
	return nil
}
