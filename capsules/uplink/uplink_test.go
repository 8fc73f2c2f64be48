package uplink

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// The allowlists the uplink checks are its manifest's [publish] and
// [subscribe], which the kernel enforces again: the two must not drift.
func TestAllowlistsAreTheManifest(t *testing.T) {
	m, diags := manifest.Parse(Manifest, "Capsule.toml", "")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if m.ID() != ID || !m.Capabilities.Uplink || !slices.Equal(m.Capabilities.NetBind, []string{Socket}) {
		t.Fatalf("manifest: id %s, uplink %v, net_bind %v", m.ID(), m.Capabilities.Uplink, m.Capabilities.NetBind)
	}
	pub, sub := allowlists()
	for _, l := range []struct {
		name       string
		code, toml []string
	}{{"publish", pub, m.PublishPatterns()}, {"subscribe", sub, m.SubscribePatterns()}} {
		slices.Sort(l.code)
		toml := slices.Sorted(slices.Values(l.toml))
		if !slices.Equal(l.code, toml) {
			t.Errorf("%s: code %v, manifest %v", l.name, l.code, toml)
		}
	}
}

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		subject string
		list    []string
		want    bool
	}{
		{"user.v1.prompt", ingress, true},
		{"astrid.v1.approval.response.appr-default-1", ingress, true},
		{"session.v1.request.list", ingress, true},
		{"tool.v1.execute.result", ingress, false},
		{"user.v1.*", ingress, false},
		{"", ingress, false},
		{"user..prompt", ingress, false},
		{"agent.v1.*", egress, true},
		{"agent.v1.stream.delta", egress, true},
		{"registry.v1.response.get_providers.c1", egress, true},
		{"*", egress, false},
		{"astrid.v1.*", egress, false},
		{"llm.v1.stream.replay", egress, false},
	} {
		if got := allowed(tc.list, tc.subject); got != tc.want {
			t.Errorf("allowed(%q) = %v, want %v", tc.subject, got, tc.want)
		}
	}
}

func TestPrincipalOf(t *testing.T) {
	s := Settings{OwnerUID: 1000, Principals: map[int]string{1001: "alice", 1000: "owner"}}
	for uid, want := range map[int]string{1000: "owner", 1001: "alice", 1002: "", -1: ""} {
		got, ok := s.principalOf(uid)
		if got != want || ok != (want != "") {
			t.Errorf("principalOf(%d) = %q, %v; want %q", uid, got, ok, want)
		}
	}
	if p, ok := (Settings{OwnerUID: 1000}).principalOf(1000); !ok || p != defaultPrincipal {
		t.Errorf("the owner is %q, %v; want %s", p, ok, defaultPrincipal)
	}
	if _, ok := (Settings{OwnerUID: -1}).principalOf(-1); ok {
		t.Error("an unknown uid (-1) was let in as the owner")
	}
}

// A principal's ingress list may narrow the allowlist, never widen it: an
// entry outside it is refused at configuration, and a client's publish must
// pass its own list and the uplink's.
func TestIngressPerPrincipal(t *testing.T) {
	if err := CheckIngress(map[string][]string{"guest": {ipc.UserPromptTopic, ipc.ApprovalResponseTopic("*")}, "ci": {"session.v1.request.list"}}); err != nil {
		t.Fatalf("a narrowing was refused: %v", err)
	}
	for _, wider := range [][]string{
		{"tool.v1.execute.write_file"}, // a provider's topic: bypasses approval
		{"tool.v1.execute.*"},
		{"*"},
		{"user.v1.*"}, // wider than user.v1.prompt
		{"astrid.v1.approval"},
		{"llm.v1.request.generate.replay"},
		{ipc.UserPromptTopic, "registry.v1.*"},
		{"user..prompt"},
		{},
	} {
		if err := CheckIngress(map[string][]string{"guest": wider}); err == nil {
			t.Errorf("guest = %q was accepted", wider)
		}
	}

	s := Settings{Ingress: map[string][]string{"guest": {ipc.UserPromptTopic, ipc.ApprovalResponseTopic("*")}}}
	guest := &client{ingress: s.ingressOf("guest")}
	owner := &client{ingress: s.ingressOf("default")}
	for _, tc := range []struct {
		topic        string
		guest, owner bool
	}{
		{ipc.UserPromptTopic, true, true},
		{ipc.ApprovalResponseTopic("appr-1"), true, true},
		{ipc.ToolRequestExecuteTopic, false, true},
		{ipc.RegistrySetActiveModelTopic, false, true},
		{"session.v1.request.delete", false, true},
		{"tool.v1.execute.write_file", false, false},
	} {
		if got := guest.mayPublish(tc.topic); got != tc.guest {
			t.Errorf("guest may publish %s: %v, want %v", tc.topic, got, tc.guest)
		}
		if got := owner.mayPublish(tc.topic); got != tc.owner {
			t.Errorf("default may publish %s: %v, want %v", tc.topic, got, tc.owner)
		}
	}
	// Settings not checked by CheckIngress still cannot widen: the
	// uplink's own list is checked too.
	loose := &client{ingress: []string{"*", "tool.v1.execute.write_file"}}
	if loose.mayPublish("tool.v1.execute.write_file") || loose.mayPublish("llm.v1.request.generate.replay") {
		t.Error("an unchecked wide list widened the allowlist")
	}
}

// allowlists returns the ingress (publish) and egress (subscribe) lists,
// for the test that holds them equal to the manifest.
func allowlists() (publish, subscribe []string) {
	return append([]string(nil), ingress...), append([]string(nil), egress...)
}
