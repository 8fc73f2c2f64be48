package manifest

import (
	"strings"
	"testing"
)

// Every grant is ranked with a reason; what reaches beyond the capsule's
// own workspace, install directory and home is high risk.
func TestRisksRankEveryGrant(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps Capabilities
		want []string // "level grant" of each risk, in order
	}{
		{"nothing", Capabilities{}, nil},
		{"the issue's capsule", Capabilities{FSWrite: []string{"/"}, HostProcess: []string{"*"}, Net: []string{"*"}, Uplink: true, AllowPromptInjection: true},
			[]string{`high uplink = true`, `high allow_prompt_injection = true`, `high host_process = ["*"]`, `high fs_write = ["/"]`, `high net = ["*"]`}},
		{"tool plumbing", Capabilities{ToolMiddleware: true}, []string{"high tool_middleware = true"}},
		{"any host on a port", Capabilities{Net: []string{"*:443"}}, []string{`high net = ["*:443"]`}},
		{"named hosts", Capabilities{Net: []string{"api.example.com"}}, []string{`low net = ["api.example.com"]`}},
		{"workspace files", Capabilities{FSRead: []string{"*"}, FSWrite: []string{"*", "home://notes"}},
			[]string{`low fs_write = ["*", "home://notes"]`, `low fs_read = ["*"]`}},
		{"outside files", Capabilities{FSRead: []string{"/etc", "*"}, FSWrite: []string{"/tmp/x", "*"}},
			[]string{`high fs_write = ["/tmp/x"]`, `medium fs_read = ["/etc"]`, `low fs_write = ["*"]`, `low fs_read = ["*"]`}},
		{"local reach", Capabilities{NetBind: []string{"127.0.0.1:8080"}, NetConnect: []string{"unix:///run/x.sock"}, AllowPersistent: true, Identity: []string{"read"}, Kv: []string{"*"}},
			[]string{`medium net_bind = ["127.0.0.1:8080"]`, `medium net_connect = ["unix:///run/x.sock"]`, `medium allow_persistent = true`, `medium identity = ["read"]`, `low kv = ["*"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range tc.caps.Risks() {
				if r.Reason == "" {
					t.Errorf("%s has no reason", r.Grant)
				}
				got = append(got, string(r.Level)+" "+r.Grant)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("risks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			high := 0
			for _, w := range tc.want {
				if strings.HasPrefix(w, "high ") {
					high++
				}
			}
			if len(tc.caps.HighRisks()) != high {
				t.Errorf("HighRisks = %d, want %d", len(tc.caps.HighRisks()), high)
			}
		})
	}
}
