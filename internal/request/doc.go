// Package request is how a frontend (the CLI's clients, the daemon's)
// asks the bus and waits for the answer: one id generator, one request
// sent with its reply address and correlation id (DESIGN §4b), one wait
// that takes the first answer from an accepted source or the kernel's
// failure, read as an error.
//
// It owns the request/reply mechanics every client package shares; what a
// request means (its topics and payloads) stays with the client that makes
// it (registryclient, sessionclient, toolclient, agentclient). It must not
// know any convention's topic.
package request
