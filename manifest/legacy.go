package manifest

import "fmt"

// readLegacySections reports the top-level sections upstream's older schema
// used and this runtime does not act on, each with what to write instead.
// Unknown sections fall through to the caller's unknown-key warning.
func (c *checker) readLegacySections(top *table) {
	if v := top.get("interceptor"); v != nil {
		for i, it := range v.items {
			at := it.at
			hint := "declare the topic in [subscribe] with handler = \"<action>\" (and priority)"
			if it.kind == kindTable {
				event, action := it.fields["event"], it.fields["action"]
				if event != nil && action != nil && event.kind == kindString && action.kind == kindString {
					hint = fmt.Sprintf("write [subscribe] %q = { wit = \"…\", handler = %q }", event.scalar, action.scalar)
				}
			}
			c.warnf(at, fmt.Sprintf("interceptor[%d]", i), "legacy [[interceptor]] has no effect here (no interceptor is bound, and its topic is not in the ACL): %s", hint)
		}
		if v.kind != kindArray {
			c.warnf(v.at, "interceptor", "legacy [interceptor] has no effect here: declare the topic in [subscribe] with handler = \"<action>\"")
		}
	}
	if v := top.get("topic"); v != nil {
		at := v.at
		if v.kind == kindArray && len(v.items) > 0 {
			for i, it := range v.items {
				c.warnf(it.at, fmt.Sprintf("topic[%d]", i), "legacy [[topic]] has no effect here: declare the topic as a [publish] or [subscribe] key with its wit type")
			}
		} else {
			c.warnf(at, "topic", "legacy [[topic]] has no effect here: declare topics as [publish]/[subscribe] keys with their wit types")
		}
	}
	for _, key := range []string{"dependencies", "llm_provider"} {
		if v := top.get(key); v != nil {
			at := v.keyAt
			if v.kind == kindArray && len(v.items) > 0 {
				at = v.items[0].at
			}
			what := "[" + key + "]"
			if v.kind == kindArray {
				what = "[[" + key + "]]"
			}
			c.warnf(at, key, "%s is not part of Capsule.toml and has no effect here; remove it (interfaces a capsule provides or needs go in [exports]/[imports])", what)
		}
	}
}
