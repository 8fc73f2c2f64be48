// Package react is the built-in agent loop, capsule astrid-capsule-react
// (spec/capsules-cli.md §2 without the identity phase; DESIGN §5a;
// docs/agent.md is the contract a frontend sees).
//
// A turn is Idle → AwaitingPromptBuild → Streaming → (AwaitingTools →
// Streaming)* → Idle:
//   - user.v1.prompt (user_input {text, session_id, context}) appends the
//     user message to the session store and reads the history back in one
//     round trip, then asks prompt_builder.v1.assemble;
//   - prompt_builder.v1.response.assemble gives the system prompt, the
//     tools and the messages; the request goes to
//     llm.v1.request.generate.<provider>, where provider and model are the
//     prompt context's, else the principal's choice in the provider
//     registry (one bounded round trip on registry.v1.get_active_model per
//     turn), else [env] provider and model, else the registry's default,
//     else replay (docs/agent.md);
//   - llm.v1.stream.<provider> events are followed by request_id: text
//     and reasoning deltas (marked reasoning) go out at once on
//     agent.v1.stream.delta, tool calls are
//     collected until Done;
//   - each tool call goes out on tool.v1.request.execute (all at once) and
//     is announced on agent.v1.tool.started; results come back on
//     tool.v1.execute.result by call id (agent.v1.tool.finished); each is
//     put to the tool plumbing's after-tool hook when one intercepts
//     tool.v1.hook.after_tool (after_tool.go: the hooks capsule's
//     PostToolUse), its answer kept after the result; once all are in, the
//     round is appended to the session and the model is asked again;
//   - text alone ends the turn: it is appended to the session and sent as
//     the final agent.v1.response;
//   - a request estimated past [env] compact_threshold_pct of the model's
//     context window first has the session's older messages summarized
//     by the model (phase compacting, compact.go); the summary is stored
//     with the session and sent in their place, announced on
//     agent.v1.compacted (docs/agent.md, "Context window").
//
// Every end of a turn — answer, empty model output, error, phase timeout,
// iteration cap, cancel, pre-emption by a newer prompt — publishes exactly
// one final agent.v1.response carrying an outcome (ipc.Outcome*) and the
// tokens the provider reported for the turn, priced when the model is in
// [env] prices or the built-in table under it, prices.txt (docs/agent.md,
// "Usage and cost").
//
// State lives in volatile KV (keys starting "~react."), which the host keeps
// per principal, so two principals' turns never meet; within a principal it
// is keyed by session id, and events are routed by request id (stream) and
// call id (tools, approvals). The dispatcher runs one principal's calls of
// this capsule one at a time, so a handler's read-modify-write of that
// state is never interleaved with another's. An event that no longer
// matches the state (an old request id, a finished call) is dropped.
//
// It owns the control flow of a turn, and its usage and cost; it calls no
// model API, runs no tool, builds no prompt text and keeps no history of
// its own (the session store does). It starts no goroutines and holds
// nothing outside KV.
package react
