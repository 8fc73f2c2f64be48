// Package audit owns the host's signed audit chain (DESIGN §13,
// docs/audit.md): one append-only, hash-linked file of entries per
// principal (and one for system events) under $ASTRID_HOME/audit. An
// append writes its entry, linked to the previous entry's hash, with one
// write(2) before it returns (it survives the process being killed); a
// sealer signs a seal entry with the host's ed25519 key and fsyncs each
// chain 10 ms after its first unsealed entry (group commit), the seal's
// signature vouching for every entry before it; a signed checkpoint per
// chain, so that cutting a chain short is detected; and the reader and
// verifier behind `astrid audit show|verify`.
//
// Several processes on one $ASTRID_HOME (a daemon and an `astrid` command)
// may append to the same chain: a writer takes the chain file's flock at
// its first write after a seal, re-reading the tail when another process
// wrote since, and keeps it until its next seal, so the chain never forks.
//
// It must not decide what is worth recording (its callers do, at their one
// choke point each), must not create or store the key (internal/hostkey
// does), and must not name agent-stack topics: a tool call is recorded by
// whoever knows it is one.
package audit
