package ipc

// The kernel's notices about an elicit question that holds up a tool call:
// ElicitPendingTopic once the question reached a frontend, ElicitSettledTopic
// when the host call stopped waiting (answered, declined, timed out or
// cancelled). They carry no answer: whoever times a tool call (the agent
// loop) can stop its clock while a person types, without being able to read
// what they typed (the answers' topics stay the host's). Only notices from
// KernelSourceID count. Not upstream.
const (
	ElicitPendingTopic = "astrid.v1.elicit.pending"
	ElicitSettledTopic = "astrid.v1.elicit.settled"
)

// ElicitNotice is the payload of both notices (plain JSON, not a tagged
// Payload variant).
type ElicitNotice struct {
	RequestID string `json:"request_id"`
	CallID    string `json:"call_id"`
}
