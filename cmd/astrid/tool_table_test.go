package main

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/internal/toolclient"
)

// `tool list` adds a HOST column only when another host serves a tool
// (docs/nats.md), naming this host's own tools "local".
func TestToolTableNamesTheHostOfRemoteTools(t *testing.T) {
	local := []toolclient.ToolInfo{{Name: "read_file", Capsule: "astrid-capsule-fs", Description: "reads"}}
	header, rows := toolTable(local)
	if !slices.Equal(header, []string{"TOOL", "CAPSULE", "MUTABLE", "DESCRIPTION"}) || !slices.Equal(rows[0], []string{"read_file", "astrid-capsule-fs", "no", "reads"}) {
		t.Fatalf("all local: %q %q", header, rows)
	}
	header, rows = toolTable(append(local, toolclient.ToolInfo{Name: "block", Capsule: "remote-wait", Host: "gpu-box", Mutable: true, Description: "waits"}))
	if !slices.Equal(header, []string{"TOOL", "CAPSULE", "HOST", "MUTABLE", "DESCRIPTION"}) ||
		!slices.Equal(rows[0], []string{"read_file", "astrid-capsule-fs", "local", "no", "reads"}) ||
		!slices.Equal(rows[1], []string{"block", "remote-wait", "gpu-box", "yes", "waits"}) {
		t.Fatalf("one remote: %q %q", header, rows)
	}
}
