// Package sdktest is what capsule authors test with: an in-memory kernel
// (the real bus, dispatcher, gate, store and router, in a temporary
// $ASTRID_HOME and workspace) that runs their sdk capsule natively under its
// Capsule.toml (with [env] values set as an operator would, and with
// NewWithNetwork the operator's egress allowlist, request timeout and a
// test resolver), a Generate
// that drives an LLM provider as an orchestrator does, agent turns driven
// as a frontend does (NewAgent, RunPrompt, StartTurn, Collect), the
// frontends' identities (Agent() reaches the kernel as internal/agentclient
// and internal/registryclient do), and a check that the capsule's
// registrations match that manifest exactly.
//
// It is test support: it may import internal packages, and nothing outside
// tests should import it.
package sdktest
