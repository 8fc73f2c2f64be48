// Package session is the built-in session store capsule
// (spec/capsules-cli.md §7.1, DESIGN §5): "dumb, trustworthy,
// append-only" history of clean messages (user text, assistant text and
// tool calls, tool results) per session id.
//
// A session is one KV record, session.data.<session id>, holding
// schema_version (2), parent_session_id, messages, created_at and
// updated_at (unix seconds), title, archived and meta (a client's opaque
// string ≤ 8 KiB). The host namespaces the
// capsule's KV per principal, so two principals' sessions of the same id
// never meet; the capsule adds no principal to its keys.
//
// Protocol (all replies on session.v1.response.<op>.<correlation_id>):
//   - session.v1.append {session_id, messages}: appends; no reply; an
//     empty list is ignored.
//   - session.v1.request.get_messages {session_id, correlation_id,
//     append_before_read?, messages?, compaction?}: appends messages
//     first when append_before_read is set, records compaction {summary,
//     upto} (the agent's summary of the first upto messages, which stay)
//     when set, then replies {correlation_id, messages, compaction?}.
//   - session.v1.request.clear {session_id, correlation_id}: creates a new
//     empty session whose parent_session_id is the old one (the old is
//     kept) and replies {correlation_id, new_session_id, old_session_id}.
//   - session.v1.request.list {correlation_id, cursor?, limit?}: replies a
//     page of summaries (id, parent, message count, preview ≤ 80 runes,
//     title, times, archived, meta) in
//     id order {correlation_id, sessions, next_cursor, total}.
//   - session.v1.request.get_meta {session_id, correlation_id}: replies
//     {correlation_id, session: summary or null}.
//   - session.v1.request.delete {session_id, correlation_id}: removes the
//     record and replies {correlation_id, deleted}.
//   - session.v1.request.update {session_id, correlation_id, title?,
//     archived?, meta?}: sets what is present (an empty string clears) and
//     replies {correlation_id, session: summary}. list and search leave
//     archived sessions out unless include_archived is set.
//   - session.v1.request.search {query, correlation_id, cursor?, limit?}:
//     case-insensitive search of text messages, at most 200 records read
//     per call; replies {correlation_id, hits, next_cursor}, a hit being
//     {session_id, match_count, snippet ≤ 120 runes}.
//
// It also provides the agent's read-only tools list_threads, get_thread
// and search_conversations over the calling principal's history.
//
// Every write is then announced on session.v1.event.created|updated|
// deleted as {kind, session_id, summary} (summary null for deleted).
//
// A request that fails after its correlation id is known is answered
// {correlation_id, error}; a request whose correlation id is missing or
// cannot name a topic has nowhere to be answered and is logged and
// dropped.
//
// It owns the session records only (with the totals of tokens and cost
// that an append may carry, summed): it never stores system prompts or
// hook injections (it stores what it is given; keeping those out is the
// caller's job), and it starts no goroutines and keeps no state outside
// KV.
package session
