package capsule

// Starter is an engine with work of its own to start once the capsule is
// registered with the dispatcher (an sdk service: it publishes, so its
// capsule's ACL must exist first). Unload stops it.
type Starter interface {
	Start()
}

// Start starts every engine that is a Starter, in load order. The runtime
// calls it once the capsule is registered.
func (c *Composite) Start() {
	for _, e := range c.engines {
		if s, ok := e.(Starter); ok {
			s.Start()
		}
	}
}
