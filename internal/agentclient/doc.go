// Package agentclient is the frontend side of one agent turn (docs/agent.md),
// as the frontends share it (`astrid -p`, `astrid chat`, later the uplink):
// publish a prompt on user.v1.prompt for a principal and session, deliver the
// turn's events as they come (text deltas, tool calls started and finished,
// approval questions, the final response), answer an approval question,
// cancel the turn, and return its final response; and read a person's answer
// to an approval question (ParseDecision), so that every frontend reads it alike.
//
// It reaches the kernel only through the publish/subscribe entry a frontend
// is given (Kernel), under the identity ACL names, which may publish prompts
// and approval answers and hear the agent's events and questions, and
// nothing else (no tool calls: the agent makes those). It must not boot or
// reach into a kernel, and the kernel must not import it.
//
// A turn is correlated by session id and by a turn id the client chooses
// (ipc.PromptContext.TurnID), which the agent echoes on every event, so an
// earlier turn of the same session that this one pre-empted is never taken
// for this one.
package agentclient
