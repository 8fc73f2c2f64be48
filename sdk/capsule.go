package sdk

import (
	"fmt"
	"sort"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// Handler handles one event delivered to an interceptor. It answers through
// c.Final, c.Deny or c.Continue (the default); a returned error counts as Deny
// inside a chain.
type Handler func(c *Call) error

// Capsule is a capsule's code: its handlers and tools, and what they publish
// and subscribe to. Build it once (a constructor function in the capsule's
// package); it is read-only afterwards and safe to share between calls.
type Capsule struct {
	description string
	handlers    map[string]binding
	tools       []*tool
	publishes   []string
	subscribes  []string
	service     Service
	// resources, prompts and completions mark a capsule serving those
	// conventions (Resources, Prompts, Completions).
	resources, prompts, completions bool
}

type binding struct {
	pattern string
	handler Handler
}

// Handler names the sdk binds for the tool convention (upstream's SDK uses the
// same names).
const (
	DescribeHandler   = "tool_describe"
	toolHandlerPrefix = "tool_execute_"
)

// New starts a capsule; description is what the describe answer carries.
func New(description string) *Capsule {
	return &Capsule{description: description, handlers: map[string]binding{}}
}

// Handle binds handler name (the manifest's `handler = "name"`) to h for
// events on pattern. Registering the same name twice panics: it is a
// programming error found by the capsule's first test.
func (c *Capsule) Handle(pattern, name string, h Handler) {
	if _, dup := c.handlers[name]; dup {
		panic(fmt.Sprintf("sdk: handler %q registered twice", name))
	}
	if err := ipc.ValidatePattern(pattern); err != nil {
		panic(fmt.Sprintf("sdk: handler %q: %v", name, err))
	}
	c.handlers[name] = binding{pattern: pattern, handler: h}
}

// Publishes declares a topic pattern the capsule's handlers publish on, so
// the registrations can be checked against the manifest's [publish].
func (c *Capsule) Publishes(pattern string) { c.publishes = append(c.publishes, pattern) }

// Subscribes declares a pattern the capsule subscribes to from inside a
// handler (request/reply), to be checked against [subscribe].
func (c *Capsule) Subscribes(pattern string) { c.subscribes = append(c.subscribes, pattern) }

// Binding is one interceptor registration: a pattern and its handler name.
type Binding struct {
	Pattern string
	Handler string
}

// Registrations is everything the capsule's code needs from its manifest.
type Registrations struct {
	Interceptors []Binding // [subscribe] entries with a handler
	Subscribe    []string  // [subscribe] entries without a handler
	Publish      []string  // [publish] keys
}

// Registrations lists what the capsule needs, sorted; capsuleID fills in the
// describe response topics and the resource read and prompt get topics.
func (c *Capsule) Registrations(capsuleID string) Registrations {
	var r Registrations
	for name, b := range c.handlers {
		r.Interceptors = append(r.Interceptors, Binding{Pattern: b.pattern, Handler: name})
	}
	r.Subscribe = append(r.Subscribe, c.subscribes...)
	r.Publish = append(r.Publish, c.publishes...)
	if len(c.tools) > 0 {
		r.Publish = append(r.Publish, ipc.ToolDescribeResponseTopic(capsuleID))
		for _, t := range c.tools {
			r.Publish = append(r.Publish, ipc.ToolResultTopic(t.name))
		}
	}
	c.ownRegistrations(capsuleID, &r)
	sort.Slice(r.Interceptors, func(i, j int) bool { return r.Interceptors[i].Pattern < r.Interceptors[j].Pattern })
	sort.Strings(r.Subscribe)
	sort.Strings(r.Publish)
	r.Subscribe = dedupe(r.Subscribe)
	r.Publish = dedupe(r.Publish)
	return r
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Invoke runs the handler the invocation names. It is what engines call; a
// capsule author's tests use sdktest instead.
func (c *Capsule) Invoke(h hostapi.Host, inv hostapi.Invocation) (hostapi.Verdict, error) {
	b, ok := c.handlers[inv.Handler]
	if !ok {
		return hostapi.Verdict{}, hostapi.Errorf(hostapi.CodeNotSupported, "invoke", "capsule has no handler %q", inv.Handler)
	}
	call := &Call{Host: h, inv: inv}
	if err := b.handler(call); err != nil {
		return hostapi.Verdict{Action: hostapi.Deny, Reason: err.Error()}, err
	}
	return call.verdict, nil
}

// HasHandler reports whether name is bound.
func (c *Capsule) HasHandler(name string) bool {
	_, ok := c.handlers[name]
	return ok
}
