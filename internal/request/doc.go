// Package request is how a frontend (the CLI's clients, the daemon's, mcp
// serve) asks the bus and waits for the answer: one id generator (NewID),
// one send of a request with its reply address, correlation id and
// deadline (Send), one wait that takes the first answer the caller accepts
// or the kernel's failure, read as a *Failed error (Await), and the two
// joined for a one-shot question (Ask). KernelFailure tells the kernel's
// failure from a capsule repeating its words, for a client that reads a
// stream rather than waits for one answer (agentclient's turn).
//
// It owns the request/reply mechanics every client package shares; what a
// request means (its topics and payloads) and what counts as its answer
// stay with the client that makes it (registryclient, sessionclient,
// toolclient, agentclient, mcpserve). It must not know any convention's
// topic.
package request
