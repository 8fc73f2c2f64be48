// Package promptbuilder is the built-in prompt builder capsule
// (spec/capsules-cli.md §4, DESIGN §5 and §5a): it answers
// prompt_builder.v1.assemble {request_id, session_id, messages,
// system_prompt, model, provider} on prompt_builder.v1.response.assemble
// with {request_id, session_id, system_prompt, user_context_prefix, tools,
// messages}, or {request_id, session_id, error} so that the orchestrator
// ends the turn at once (a failure reply is registered first, so a trap or
// timeout answers too).
//
// One assembly:
//   - history: the request's messages, or, when it has none and names a
//     session, the session store's (session.v1.request.get_messages);
//   - hooks: prompt_builder.v1.hook.before_build fanned out with a
//     response_topic scoped by request id; done when every capsule
//     intercepting it has answered, hook_timeout_ms at most. A response
//     counts only from such a capsule (by the source_id the kernel stamps),
//     once; {} is an answer with nothing to add. Without
//     allow_prompt_injection (asked of the kernel with HoldsGrant) only
//     prependContext survives;
//   - context: AGENTS.md, else ASTRID.md, at the workspace root (cut to a
//     size cap, saying so), and what static capsules serve on
//     static.v1.request.context (into the system prompt for holders of
//     allow_prompt_injection, into the user context prefix otherwise);
//   - tools: sdk.DescribeTools, cached in KV __tool_schema_cache for the
//     set of capsules that answered it (a JSON line saying what it is
//     valid for, then the tools as the answer carries them, spliced in
//     unparsed: cache.go), dropped on astrid.v1.capsules_loaded, never
//     cached when one was silent; names spelled for LLM APIs (':' as
//     "__").
//
// Then prompt_builder.v1.hook.after_build {request_id, session_id,
// system_prompt, user_context_prefix} is published as a notice.
//
// It owns assembling one prompt: it never stores history (the session
// store does), never calls a model or a tool, starts no goroutines and
// keeps nothing outside KV.
package promptbuilder
