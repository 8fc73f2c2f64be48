// Package mcp is the MCP engine: it runs one [[mcp_server]] of type "stdio"
// as a child process, speaks MCP to it over stdin/stdout with the official
// go-sdk client, and puts the server's tools on the tool convention as
// "<server id>:<tool>" (DESIGN §4, "Tool names"), and its resources,
// resource templates and prompts on the resource and prompt conventions
// (served.go; docs/mcp.md).
//
// A server runs in the workspace it serves (DESIGN §4a): the one started at
// load in the kernel's workspace lists the tools, and a call from a request
// in another workspace (or for another principal) reaches a server started
// for that workspace on its first call, in it and confined to the grants
// resolved for it, never the load-time one (workspace.go).
//
// It owns the server process: the host_process check on the command exactly
// as declared, the resolution of that command inside the capsule directory
// (a "fat binary" directory holds one file per target triple; a symlink
// leaving the capsule is refused), the process group the server runs in, its
// stderr (logged, tagged with capsule and server id), its restart with
// backoff after it dies (Options.MaxRestarts in a row at most, the health
// monitor's policy; then the engine fails with capsule.ErrGaveUp), and its
// teardown (the whole group is killed).
//
// What outlives astrid: on Unload, on Close of the kernel and on KillAll the
// whole process group is killed. On Linux the direct child also carries a
// parent-death signal (SIGKILL), so it dies with astrid even when astrid is
// killed with SIGKILL; grandchildren the server started in its group then
// see stdin close but are not signalled, and on other systems nothing is
// signalled when astrid dies without unloading. A process that leaves the
// group (setsid) is out of reach in every case.
//
// A remote server (type "http") may need OAuth: the engine sends the token
// `astrid mcp login` sealed (login.go, oauth.go), records a scope step-up
// for the next login (scope.go), and gets its own tokens only where no
// person is asked — the client credentials grant (clientcred.go) and the
// enterprise IdP's ID token exchange (enterprise.go). It never prompts.
//
// It must not re-implement a check (the gate decides host_process, the
// dispatcher decides every publish), must not let the server choose a topic
// (the engine derives every topic from a validated tool name), and must never
// leave a caller waiting: every call that does not complete gets its failure
// reply, an error result on the tool's result topic.
package mcp
