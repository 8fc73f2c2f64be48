package main

import (
	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/hooks"
	fetch "github.com/astrid-go/astrid/capsules/http"
	"github.com/astrid-go/astrid/capsules/memory"
	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/capsules/shell"
	"github.com/astrid-go/astrid/capsules/skills"
	"github.com/astrid-go/astrid/capsules/undo"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/mcpserve"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/toolclient"
)

// builtins are the capsules linked into astrid, in load order; the kernel
// loads what it is given and imports none of them.
func builtins() []kernel.Builtin {
	return append([]kernel.Builtin{
		{Manifest: router.Manifest, New: router.New},
		{Manifest: hooks.Manifest, New: hooks.New},
		{Manifest: approval.Manifest, New: approval.New},
		{Manifest: undo.Manifest, New: undo.New},
		{Manifest: fs.Manifest, New: fs.New},
		{Manifest: fetch.Manifest, New: fetch.New},
		{Manifest: shell.Manifest, New: shell.New},
		{Manifest: session.Manifest, New: session.New},
		{Manifest: replay.Manifest, New: replay.New},
		{Manifest: anthropic.Manifest, New: anthropic.New},
		{Manifest: openai.Manifest, New: openai.New},
		{Manifest: registry.Manifest, New: registry.New},
		{Manifest: memory.Manifest, New: memory.New},
		{Manifest: skills.Manifest, New: skills.New},
		{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		{Manifest: react.Manifest, New: react.New},
	}, testBuiltins...)
}

// wasmCache, when set (by this package's tests: one directory for all the
// processes a test run starts, each with its own home), is where kernels
// keep compiled wasm code instead of the home's cache.
var wasmCache string

// testBuiltins are appended to builtins by this package's tests.
var testBuiltins []kernel.Builtin

// frontends are the identities astrid's commands act under on the bus.
func frontends() []dispatch.CapsuleACL {
	return []dispatch.CapsuleACL{toolclient.ACL(), sessionclient.ACL(), agentclient.ACL(), registryclient.ACL(), commandclient.ACL(), mcpserve.ACL()}
}
