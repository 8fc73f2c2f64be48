// Package archtest holds no code: its test holds the module's layering
// against the code (DESIGN §3). It reads the package tables of README.md,
// so the README and the code cannot drift, and checks every import that
// `go list` reports: the public packages import only each other and leaf
// helpers, sdk only hostapi, ipc and leaf helpers, capsules only sdk, ipc,
// hostapi, leaf helpers and an allowlist of standard packages, and an
// internal package only the packages listed below it. A leaf helper is
// recognised by what it is (an internal package that imports nothing of
// ours and builds for wasip1), not by a list.
//
// It also holds the documents a newcomer reads to them (docs_test.go, issue
// 30): docs/ARCHITECTURE.md stays within 2,500 words and every file path
// and pkg.Identifier it names exists; every question heading of
// docs/rationale/*.md is listed in docs/rationale/README.md, every entry
// there resolves to a heading, and each decision's body stays within 150
// words.
//
// And it holds the kernel ignorant of the agent stack (conventions_test.go,
// DESIGN §4b): no non-test file of internal/kernel, runtime, dispatch, bus
// (its transports included) or host names a topic of the tool, llm,
// prompt_builder, session or registry conventions, by a string or through
// an ipc identifier that stands for one, but the files of an allowlist that
// only shrinks.
//
// It must not be imported: it is a test.
package archtest
