// Package sizecost holds three programs that differ only in the full-text
// search they link, so that their sizes give what linking bleve or
// modernc.org/sqlite (FTS5) would add to a static astrid (BENCHMARKS.md,
// "Memory"):
//
//	cd bench && for p in base bleve sqlite; do CGO_ENABLED=0 go build -ldflags='-s -w' -o /tmp/size-$p ./memory/sizecost/$p; done; ls -l /tmp/size-*
package sizecost
