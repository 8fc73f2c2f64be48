package mcp

import (
	"sync"

	"github.com/astrid-go/astrid/internal/host"
)

// A capsule may declare several MCP servers, each its own engine, but it
// answers a describe request once, with all their tools: the Composite asks
// its engines in turn and stops at the first answer, and the dispatcher
// would deliver a request once per describe interceptor. So the loaded MCP
// engines of one capsule (one host) know each other, the first one loaded
// binds the describe handler and answers for all.
var siblings struct {
	mu     sync.Mutex
	byHost map[*host.Capsule][]*Engine
}

func join(e *Engine) {
	siblings.mu.Lock()
	defer siblings.mu.Unlock()
	if siblings.byHost == nil {
		siblings.byHost = map[*host.Capsule][]*Engine{}
	}
	siblings.byHost[e.host] = append(siblings.byHost[e.host], e)
}

func leave(e *Engine) {
	siblings.mu.Lock()
	defer siblings.mu.Unlock()
	list := siblings.byHost[e.host]
	for i, o := range list {
		if o == e {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(siblings.byHost, e.host)
	} else {
		siblings.byHost[e.host] = list
	}
}

// describer is the engine that answers describe requests for e's capsule;
// nil when none is loaded.
func describer(e *Engine) *Engine {
	siblings.mu.Lock()
	defer siblings.mu.Unlock()
	if list := siblings.byHost[e.host]; len(list) > 0 {
		return list[0]
	}
	return nil
}

// loadedSiblings lists the loaded MCP engines of e's capsule in load order.
func loadedSiblings(e *Engine) []*Engine {
	siblings.mu.Lock()
	defer siblings.mu.Unlock()
	return append([]*Engine(nil), siblings.byHost[e.host]...)
}
