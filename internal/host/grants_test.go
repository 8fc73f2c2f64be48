package host

import (
	"context"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/manifest"
)

// HoldsGrant answers yes only for a loaded capsule holding exactly the grant
// asked about; it refuses to answer about anything but the two trust
// grants, so a capsule cannot probe another's file roots or hosts through
// it; and a host without a registry says so instead of answering no.
func TestHoldsGrant(t *testing.T) {
	f := newFixture(t)
	loaded := map[string]manifest.Capabilities{
		"memory": {AllowPromptInjection: true},
		"router": {ToolMiddleware: true},
		"plain":  {FSRead: []string{"*"}},
	}
	f.deps.Grants = func(id string) (manifest.Capabilities, bool) {
		c, ok := loaded[id]
		return c, ok
	}
	call, _ := f.capsule(t, homeCapsule).Begin(context.Background(), "default")
	defer call.End()
	cases := []struct {
		capsule, grant string
		want           bool
		code           hostapi.Code
	}{
		{"memory", hostapi.GrantPromptInjection, true, hostapi.CodeOK},
		{"memory", hostapi.GrantToolMiddleware, false, hostapi.CodeOK},
		{"router", hostapi.GrantToolMiddleware, true, hostapi.CodeOK},
		{"router", hostapi.GrantPromptInjection, false, hostapi.CodeOK},
		{"plain", hostapi.GrantPromptInjection, false, hostapi.CodeOK},
		{"not-loaded", hostapi.GrantPromptInjection, false, hostapi.CodeOK},
		{"", hostapi.GrantToolMiddleware, false, hostapi.CodeOK},
		// Other capabilities are not this call's to reveal.
		{"plain", "fs_read", false, hostapi.CodeInvalid},
		{"memory", "net", false, hostapi.CodeInvalid},
		{"memory", "", false, hostapi.CodeInvalid},
		{"memory", "ALLOW_PROMPT_INJECTION", false, hostapi.CodeInvalid},
	}
	for _, tc := range cases {
		got, err := call.HoldsGrant(tc.capsule, tc.grant)
		if got != tc.want || hostapi.CodeOf(err) != tc.code {
			t.Errorf("HoldsGrant(%q, %q) = %v, %v; want %v, code %v", tc.capsule, tc.grant, got, err, tc.want, tc.code)
		}
	}

	bare := newFixture(t)
	call2, _ := bare.capsule(t, homeCapsule).Begin(context.Background(), "default")
	defer call2.End()
	if held, err := call2.HoldsGrant("memory", hostapi.GrantPromptInjection); held || hostapi.CodeOf(err) != hostapi.CodeNotSupported {
		t.Fatalf("without a registry: %v, %v; want not supported", held, err)
	}
}
