package manifest

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

var sourcePins = []string{"version", "tag", "rev", "branch", "path"}

// readTopics reads [publish] and [subscribe]; their keys are the ACL.
func (c *checker) readTopics(top *table, m *Manifest) {
	if t := top.sub("publish"); t != nil {
		for _, key := range t.v.keys {
			if e, ok := c.readTopicEntry(t, key, false); ok {
				m.Publish = append(m.Publish, e)
			}
		}
	}
	if t := top.sub("subscribe"); t != nil {
		for _, key := range t.v.keys {
			if e, ok := c.readTopicEntry(t, key, true); ok {
				m.Subscribe = append(m.Subscribe, e)
			}
		}
	}
}

func (c *checker) readTopicEntry(section *table, key string, subscribe bool) (TopicEntry, bool) {
	v := section.get(key)
	path := section.keyPath(key)
	name := section.path
	e := TopicEntry{Pattern: key}
	ok := true
	if err := ipc.ValidatePattern(key); err != nil {
		c.errorf(v.keyAt, path, "[%s] key %q is not a valid topic pattern: %s", name, key, strings.TrimPrefix(err.Error(), ipc.ErrInvalidTopic.Error()+": "))
		ok = false
	}
	wit, witAt, t, found := c.shortOrLong(v, path, "wit",
		fmt.Sprintf("[%s] %q has no wit: name its payload type (a local record, \"@scope/repo/<iface>/<record>\") or write wit = \"opaque\"", name, key),
		fmt.Sprintf("[%s] %q must be a wit string or an inline table, not ", name, key))
	e.WIT = wit
	if !found {
		ok = false
		if t == nil {
			return e, false
		}
	}
	if t != nil {
		var pins []string
		for _, pin := range sourcePins {
			var s string
			var pv *value
			if s, pv = t.str(pin); pv == nil {
				continue
			}
			pins = append(pins, pin)
			switch pin {
			case "version":
				e.Version = s
			case "tag":
				e.Tag = s
			case "rev":
				e.Rev = s
			case "branch":
				e.Branch = s
			case "path":
				e.Path = s
			}
		}
		if len(pins) > 1 {
			c.errorf(v.at, path, "[%s] %q sets %s: at most one of version / tag / rev / branch / path may be set", name, key, strings.Join(pins, " and "))
			ok = false
		}
		if subscribe {
			var hv, pv *value
			e.Handler, hv = t.str("handler")
			if hv != nil && strings.TrimSpace(e.Handler) == "" {
				c.errorf(hv.at, t.keyPath("handler"), "[%s] %q has an empty handler; name the interceptor export or remove handler", name, key)
				ok = false
			}
			if e.Priority, pv = t.u32("priority"); pv != nil && hv == nil {
				c.errorf(pv.keyAt, t.keyPath("priority"), "[%s] %q sets priority without a handler: a handler-less subscribe is ACL only and has no dispatch order; add handler or remove priority", name, key)
				ok = false
			}
			if hv != nil && pv == nil {
				e.Priority = DefaultPriority
			}
		} else {
			e.Fanout, _ = t.boolean("fanout")
		}
		t.rest(func(k string, _ *value) string {
			switch {
			case k == "handler" && !subscribe:
				return "handler has no effect on a [publish] entry: interceptors are bound by [subscribe] entries; move it there"
			case k == "priority" && !subscribe:
				return "priority has no effect on a [publish] entry; it orders [subscribe] handlers"
			case k == "fanout" && subscribe:
				return "fanout has no effect on a [subscribe] entry; it documents [publish] wildcards"
			}
			return ""
		})
	}
	if witAt != nil {
		c.checkWIT(name, key, e.WIT, witAt, path)
		if strings.TrimSpace(e.WIT) == "" {
			ok = false
		}
	}
	// A [publish] wildcard over other tools' results is refused unless the
	// capsule holds tool_middleware: checkToolPlumbing, once the
	// capabilities and tools are read.
	return e, ok
}

func (c *checker) checkWIT(section, key, wit string, v *value, path string) {
	switch {
	case strings.TrimSpace(wit) == "":
		c.errorf(v.at, path, "[%s] %q has an empty wit: name the payload type or write \"opaque\"", section, key)
	case strings.HasPrefix(wit, "@"):
		parts := strings.Split(wit[1:], "/")
		valid := len(parts) == 4
		for _, p := range parts {
			valid = valid && p != ""
		}
		if !valid {
			c.warnf(v.at, path, "[%s] %q: wit reference %q is not of the form \"@scope/repo/<iface>/<record>\", so it names no type", section, key, wit)
		}
	}
}
