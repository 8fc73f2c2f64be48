package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

func TestHostProcess(t *testing.T) {
	cases := []struct {
		name     string
		declared []string
		command  string
		allow    bool
	}{
		{name: "declared", declared: []string{"npx"}, command: "npx", allow: true},
		{name: "declared path", declared: []string{"./bin/tool"}, command: "./bin/tool", allow: true},
		{name: "one of several", declared: []string{"uvx", "npx"}, command: "npx", allow: true},
		{name: "nothing declared", command: "npx"},
		{name: "suffix", declared: []string{"npx"}, command: "npx-evil"},
		{name: "absolute elsewhere", declared: []string{"npx"}, command: "/tmp/npx"},
		{name: "system path", declared: []string{"npx"}, command: "/usr/bin/npx"},
		{name: "relative", declared: []string{"npx"}, command: "./npx"},
		{name: "trailing space", declared: []string{"npx"}, command: "npx "},
		{name: "leading space", declared: []string{"npx"}, command: " npx"},
		{name: "with arguments", declared: []string{"npx"}, command: "npx -y evil"},
		{name: "upper case", declared: []string{"npx"}, command: "NPX"},
		{name: "mixed case", declared: []string{"npx"}, command: "Npx"},
		{name: "NUL suffix", declared: []string{"npx"}, command: "npx\x00"},
		{name: "tab", declared: []string{"npx"}, command: "npx\t"},
		{name: "basename of declared path", declared: []string{"./bin/tool"}, command: "bin/tool"},
		{name: "bash is not /bin/bash", declared: []string{"bash"}, command: "/bin/bash"},
		{name: "empty command", declared: []string{""}, command: ""},
		{name: "malicious directory", declared: []string{"npx"}, command: "./bin/npx-malicious"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mustGate(t, manifest.Capabilities{HostProcess: tc.declared}).HostProcess(tc.command)
			if tc.allow {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			wantDenied(t, err, "host_process")
		})
	}
}

func TestPersistent(t *testing.T) {
	cases := []struct {
		name       string
		declared   []string
		persistent bool
		command    string
		deniedBy   string // "" = allowed
	}{
		{name: "both grants", declared: []string{"npx"}, persistent: true, command: "npx"},
		{name: "host_process alone", declared: []string{"npx"}, command: "npx", deniedBy: "allow_persistent"},
		{name: "allow_persistent alone", persistent: true, command: "npx", deniedBy: "host_process"},
		{name: "undeclared command", declared: []string{"npx"}, persistent: true, command: "npx-evil", deniedBy: "host_process"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mustGate(t, manifest.Capabilities{HostProcess: tc.declared, AllowPersistent: tc.persistent})
			err := g.Persistent(tc.command)
			if tc.deniedBy == "" {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			wantDenied(t, err, tc.deniedBy)
		})
	}
}
