package chatui

// Elicitation — a capsule asking the person a question mid-turn (a value,
// a choice, a secret that must be typed masked) — lands here once the ipc
// elicit types and the host call exist (another branch builds them now).
// The plan, so the pieces fit when they arrive:
//
//   - agentclient delivers the question as a new EventKind next to
//     EventApproval; handleEvent (update.go) queues it like an approval
//     (m.approvals), and a turn's end drops unanswered ones the same way.
//   - While one is pending, keys go to an editor of its own (editor.go),
//     which for a secret renders every rune as "•" and never enters the
//     prompt history or the scrollback; Enter answers through the turn,
//     Esc declines.
//   - Its view is drawn where approvalView (view.go) draws a question.
//
// Nothing here yet: the UI must not invent the wire types.
