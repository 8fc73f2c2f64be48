package principals

import (
	"sync"
	"time"
)

// Cache is a cheap view of the registry for the paths that consult it on
// every call (the CPU ledger's admissions, the host's AgentPolicy): it
// re-reads the registry at most once per refresh, so an agent created,
// changed or removed while the kernel runs counts within that time. A
// registry that cannot be read keeps the agents read last; one never read
// is an error. It is safe for concurrent use.
type Cache struct {
	r       *Registry
	refresh time.Duration
	now     func() time.Time

	mu     sync.Mutex
	read   time.Time
	loaded bool
	agents map[string]Agent
	err    error
}

// Cache returns a view of r re-read at most once per refresh (now: the
// clock, nil for time.Now).
func (r *Registry) Cache(refresh time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{r: r, refresh: refresh, now: now}
}

// current refreshes the view if it is due; c.mu must be held.
func (c *Cache) current() {
	t := c.now()
	if c.loaded && t.Sub(c.read) < c.refresh && !t.Before(c.read) {
		return
	}
	c.read = t
	list, err := c.r.List()
	if err != nil {
		c.err = err
		return
	}
	c.agents = make(map[string]Agent, len(list))
	for _, a := range list {
		c.agents[a.Name] = a
	}
	c.loaded, c.err = true, nil
}

// Get is the agent name; ok is false for a principal that is no agent.
func (c *Cache) Get(name string) (Agent, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current()
	if !c.loaded {
		return Agent{}, false, c.err
	}
	a, ok := c.agents[name]
	return a, ok, nil
}

// CPUBudget is the agent name's own CPU budget per second, for
// ledger.SetOwnBudgets: ok is false for a principal without one.
func (c *Cache) CPUBudget(name string) (time.Duration, bool) {
	a, ok, err := c.Get(name)
	if err != nil || !ok || a.CPUBudgetMs <= 0 {
		return 0, false
	}
	return time.Duration(a.CPUBudgetMs) * time.Millisecond, true
}
