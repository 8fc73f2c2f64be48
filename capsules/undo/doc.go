// Package undo is the built-in undo capsule (issue 34.6, docs/undo.md):
// before the fs tools change a file in an agent turn, it keeps the file's
// prior content, and on session.v1.request.undo it restores the files a
// turn changed.
//
//   - agent.v1.tool.started (from the agent loop) ties a call of
//     write_file, replace_in_file, delete_file or move_file to its session
//     and turn (~call/<call id>, volatile), and marks a turn that runs a
//     shell command, whose changes it cannot see.
//   - tool.v1.request.execute, intercepted at priority 50 (after the
//     approval layer, so only calls that will run are kept; before the
//     router) with tool_middleware: for each path the call may change that
//     its turn has not touched yet, what is there now (no file, a
//     directory, or a content's SHA-256) goes into the turn's record
//     (turn/<session>/<seq>, durable) and the content into
//     blob/<session>/<sha-256> once (content-addressed). At most
//     MaxFileBytes a file and MaxSessionBytes a session are kept, and
//     MaxTurns turns; past that the oldest turn's record goes.
//   - agent.v1.tool.finished records what the call left at each path, so
//     an undo tells a file changed since.
//   - session.v1.request.undo {session_id, turn, correlation_id} restores
//     a turn's files (turn 0: the latest not undone) in reverse order, each
//     only if it is what the turn left (one deleted since is put back; one
//     replaced by a directory or changed otherwise is refused, saying why),
//     and answers on session.v1.response.undo.<correlation id>.
//
// It owns keeping and restoring prior contents only: it never holds up or
// changes a tool call, starts no goroutines and keeps nothing outside KV.
package undo
