// Package memory is the built-in memory capsule (seed 003's
// astrid-capsule-memory): durable notes per principal that the agent saves
// (remember), searches (recall) and deletes (forget), and, on every prompt
// the prompt builder assembles, the few notes most relevant to the
// person's latest message offered as context (prompt_builder.v1.hook.
// before_build, prependContext: text the person could see, so no
// allow_prompt_injection is needed).
//
// Notes are JSON under memory.note.<id> in the capsule's KV (durable, per
// principal by the host), with a full-text index beside them: one key per
// term of a note, memory.t.<term>.<id>.<count>, so a query reads a term's
// postings with one KV list and ranks notes by the sum over its terms of
// idf·tf/(tf+1). Bounds: a note is at most MaxNoteBytes and indexes at most
// 128 distinct terms; a principal keeps at most MaxNotes.
//
// It owns a principal's notes only: it never reads the conversation store,
// calls a model or keeps anything outside KV.
package memory
