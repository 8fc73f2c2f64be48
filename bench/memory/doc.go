// Package memory measures the memory capsule's full-text search
// (capsules/memory: its own index in the capsule's KV, recall through the
// kernel) against the two libraries its rationale names, on one corpus of
// MaxNotes notes: bleve (an on-disk scorch index) and SQLite FTS5 through
// modernc.org/sqlite (pure Go, so it would fit the static binary). Each
// indexes the notes one at a time, as remember does, and answers the same
// queries of three words of one note; recall@5 says how often that note is
// among the five results.
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench . -benchtime 1x -timeout 30m ./memory/
package memory
