package manifest

// ID is the capsule id: the package name.
func (m *Manifest) ID() string { return m.Package.Name }

// PublishPatterns is the publish ACL: the [publish] keys, in manifest order.
// Empty means the capsule may publish nothing.
func (m *Manifest) PublishPatterns() []string { return patterns(m.Publish) }

// SubscribePatterns is the subscribe ACL: every [subscribe] key, handler or
// not, in manifest order.
func (m *Manifest) SubscribePatterns() []string { return patterns(m.Subscribe) }

func patterns(es []TopicEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Pattern)
	}
	return out
}

// Interceptors are the [subscribe] entries with a handler, in manifest order.
func (m *Manifest) Interceptors() []Interceptor {
	var out []Interceptor
	for _, e := range m.Subscribe {
		if e.Handler != "" {
			out = append(out, Interceptor{Pattern: e.Pattern, Handler: e.Handler, Priority: e.Priority})
		}
	}
	return out
}

// ExecutableComponent is the component the wasm engine runs, or nil. Library
// components are never run.
func (m *Manifest) ExecutableComponent() *Component {
	for i := range m.Components {
		if m.Components[i].Type == ComponentExecutable {
			return &m.Components[i]
		}
	}
	return nil
}

// Engines names the engines the capsule gets, in load order: "wasm" when it
// has an executable component, "mcp:<id>" per MCP server that runs (stdio,
// http or sse), and "static" always.
func (m *Manifest) Engines() []string {
	var out []string
	if m.ExecutableComponent() != nil {
		out = append(out, "wasm")
	}
	for _, s := range m.MCPServers {
		if s.Runs() {
			out = append(out, "mcp:"+s.ID)
		}
	}
	return append(out, "static")
}
