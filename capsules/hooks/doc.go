// Package hooks is the built-in command-hooks capsule (issue 34.3,
// docs/hooks.md): programs the operator names in config.toml [hooks] (and,
// when the operator allows it, a workspace's .astrid/hooks.json in Claude
// Code's settings layout), run at points of an agent turn with Claude
// Code's hook protocol, so hook scripts written for it work here.
//
//   - PreToolUse: it intercepts tool.v1.request.execute at priority 5,
//     ahead of the approval layer (10) and the router (100), holding
//     tool_middleware. The hooks matching the tool run in order; exit 2,
//     permissionDecision "deny", decision "block" or continue: false
//     refuses the call with an is_error result whose text (the hook's
//     reason) the model reads; updatedInput replaces the arguments the
//     next hook, the person and the tool see. The call's session comes
//     from the agent's agent.v1.tool.started, which precedes the call
//     (~session/<call id>). A hook that hangs past its
//     timeout or cannot start refuses the call; one that exits otherwise
//     or prints garbage decides nothing (logged).
//   - UserPromptSubmit and SessionStart: it intercepts user.v1.prompt at
//     priority 5, ahead of the agent loop. SessionStart runs at a
//     session's first prompt in this process; UserPromptSubmit at every
//     prompt, and blocking it answers the prompt itself with a final
//     response (outcome error) naming the reason. Context they add (plain
//     stdout or additionalContext) is kept in volatile KV and given to the
//     prompt builder's before_build as prependContext, once.
//   - PostToolUse: it intercepts tool.v1.hook.after_tool, which the
//     agent loop sends once a call's result is in and before the model
//     reads it, runs the hooks with the call's arguments (as kept since
//     PreToolUse) and result, and answers on
//     agent.v1.hook_response.after_tool with what the model is given
//     after the result: additionalContext, and the reason of a block
//     (decision "block", exit 2). It always answers.
//   - Stop: with Stop hooks configured, a prompt whose hooks let it by is
//     relayed to the agent as this capsule's own request with the
//     frontend's reply address and correlation id, so the turn's final
//     response (a reply) is delivered here too; the Stop hooks run then,
//     told, not asked.
//
// Every hook runs as bash -c <command> through the host's ProcessRun,
// confined by the capsule's grants like any process (docs/sandbox.md),
// with the JSON input on stdin and a per-hook timeout.
//
// It owns running the hooks and reading their answers only: it asks no
// person (the approval layer does), routes no call (the router does),
// starts no goroutines and keeps nothing outside KV.
package hooks
