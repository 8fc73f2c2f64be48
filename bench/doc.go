// Package bench holds the benchmarks that compare Astrid with a peer (an
// embedded NATS, the Extism Go SDK, a direct MCP client, `astrid -p` for
// `astrid acp`), driven by the same
// loops as our side, per DESIGN §7. It is a module of its own so that the
// peers stay out of the product's go.mod; it may import the product's
// internal packages because its path is below the product's.
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench . -count 10 -p 1 ./...
package bench
