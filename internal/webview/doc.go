// Package webview owns the daemon's web view (DESIGN §10): the page (plain
// HTML, JavaScript and CSS embedded in the binary, no build step, nothing
// fetched from elsewhere) and the JSON and server-sent events it reads:
// the capsule graph (an edge A→B when a [publish] pattern of A matches a
// topic a [subscribe] pattern of B takes), each capsule's grants, the
// message rates per topic and per publisher, the running and recent agent
// turns with their tool calls and timings and their answers (markdown as
// a fixed set of node kinds the page builds as elements: raw HTML as
// text, links only to http, https and mailto, answer.go), and the drops
// with their reasons.
//
// It reads the kernel through Source (KernelSource is the kernel's) and
// never slows it: the rates come from a bus observer ring, open only while
// someone watches, which overwrites rather than waits; the turns from
// routes on the four turn topics; each event stream has a bounded buffer
// and a client that lets it fill is dropped. It must not check who asks
// (internal/admin's server does, before any handler here runs), publish
// anything, or change the kernel's state: it is read-only.
package webview
