package manifest

import (
	"strings"
	"testing"
)

const head = "[package]\nname = \"t\"\nversion = \"0.1.0\"\n"

// Each case adds lines after a valid [package] (lines 1-3) and expects one
// diagnostic of the given severity at line:col, and no other.
func TestChecks(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		sev       Severity
		line, col int
		contains  string
	}{
		{"library only", "[[component]]\nid = \"lib\"\nfile = \"lib.wasm\"\ntype = \"library\"\n", Error, 4, 3, "needs an executable component"},
		{"library without id", "[[component]]\nfile = \"a.wasm\"\n[[component]]\nfile = \"lib.wasm\"\ntype = \"library\"\n", Error, 8, 8, "has no id"},
		{"duplicate component id", "[[component]]\nid = \"x\"\nfile = \"a.wasm\"\n[[component]]\nid = \"x\"\nfile = \"b.wasm\"\n", Error, 8, 6, `"x" is used twice`},
		{"link to an executable", "[[component]]\nid = \"a\"\nfile = \"a.wasm\"\nlink = [\"b\"]\n[[component]]\nid = \"b\"\nfile = \"b.wasm\"\n", Error, 7, 9, "no library component"},
		{"link to itself", "[[component]]\nid = \"a\"\nfile = \"a.wasm\"\nlink = [\"a\"]\n", Error, 7, 9, "links itself"},
		{"unknown component type", "[[component]]\nfile = \"a.wasm\"\ntype = \"plugin\"\n", Error, 6, 8, `unknown component type "plugin"`},
		{"bad hash", "[[component]]\nfile = \"a.wasm\"\nhash = \"md5:abc\"\n", Error, 6, 8, "sha256:"},
		{"component file outside", "[[component]]\nfile = \"../other/a.wasm\"\n", Error, 5, 8, "leaves the capsule directory"},
		{"cwd note", "[capabilities]\nfs_read = [\"cwd://data\"]\n", Note, 5, 12, "install directory"},
		{"relative grant", "[capabilities]\nfs_write = [\"data\"]\n", Warning, 5, 13, "matches nothing"},
		{"url net grant", "[capabilities]\nnet = [\"https://api.example.com/*\"]\n", Warning, 5, 8, "not a host name"},
		{"net_connect wildcard host", "[capabilities]\nnet_connect = [\"*.example.com:443\"]\n", Warning, 5, 16, "wildcard hosts"},
		{"net_bind no port", "[capabilities]\nnet_bind = [\"localhost\"]\n", Warning, 5, 13, "unix:*"},
		{"identity unknown", "[capabilities]\nidentity = [\"root\"]\n", Warning, 5, 13, "grants nothing"},
		{"persistent without host_process", "[capabilities]\nallow_persistent = true\n", Warning, 5, 20, "no effect without host_process"},
		{"ipc_subscribe legacy", "[capabilities]\nipc_subscribe = [\"a.b\"]\n", Warning, 5, 1, "[subscribe]"},
		{"unknown capability", "[capabilities]\nnetwork = [\"*\"]\n", Warning, 5, 1, `unknown key network in [capabilities]`},
		{"uplink with imports", "[capabilities]\nuplink = true\n[imports]\n\"astrid:llm\" = \"^1\"\n", Error, 6, 2, "not allowed on an uplink capsule"},
		{"tool result wildcard", "[publish]\n\"tool.v1.execute.*.result\" = \"opaque\"\n", Error, 5, 1, "needs [capabilities] tool_middleware = true"},
		{"bad wit reference", "[publish]\n\"a.b\" = \"@scope/repo\"\n", Warning, 5, 9, "@scope/repo/<iface>/<record>"},
		{"empty wit", "[publish]\n\"a.b\" = { wit = \"\" }\n", Error, 5, 17, "empty wit"},
		{"missing wit", "[subscribe]\n\"a.b\" = { handler = \"h\" }\n", Error, 5, 9, "has no wit"},
		{"handler on publish", "[publish]\n\"a.b\" = { wit = \"opaque\", handler = \"h\" }\n", Warning, 5, 27, "move it there"},
		{"priority out of range", "[subscribe]\n\"a.b\" = { wit = \"opaque\", handler = \"h\", priority = -1 }\n", Error, 5, 53, "out of range"},
		{"wildcard inside topic segment", "[subscribe]\n\"a.b*\" = \"opaque\"\n", Error, 5, 1, "not a valid topic pattern"},
		{"env scope", "[env.k]\ntype = \"text\"\nscope = \"shared\"\n", Warning, 6, 1, "operator-only"},
		{"env missing type", "[env.k]\nrequest = \"?\"\n", Error, 4, 2, "has no type"},
		{"secret with enum", "[env.k]\ntype = \"secret\"\nenum_values = [\"a\"]\n", Warning, 6, 16, "no effect on a secret"},
		{"cli reserved verb", "[[command]]\nname = \"install\"\nkind = \"cli\"\n", Error, 5, 8, "reserved built-in"},
		{"cli uppercase", "[[command]]\nname = \"Deploy\"\nkind = \"cli\"\n", Error, 5, 8, "must start with a lowercase"},
		{"slash names unchecked but kind checked", "[[command]]\nname = \"Deploy\"\nkind = \"menu\"\n", Error, 6, 8, `unknown kind "menu"`},
		{"mcp not granted", "[[mcp_server]]\nid = \"fs\"\ntype = \"stdio\"\ncommand = \"npx\"\n", Error, 7, 11, "host_process does not grant"},
		{"mcp other type", "[[mcp_server]]\nid = \"fs\"\ntype = \"wasm-ipc\"\n", Warning, 6, 8, "\"stdio\" runs a server"},
		{"mcp http no url", "[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\n", Error, 4, 3, "has no url"},
		{"mcp http bad url", "[capabilities]\nnet = [\"*\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"sse\"\nurl = \"ftp://x.example/mcp\"\n", Error, 9, 7, "http:// or https://"},
		{"mcp http userinfo", "[capabilities]\nnet = [\"*\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://u:p@x.example/mcp\"\n", Error, 9, 7, "carries credentials"},
		{"mcp http net not granted", "[capabilities]\nnet = [\"*.example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://example.com/mcp\"\n", Error, 9, 7, "capabilities.net does not grant"},
		{"mcp http undeclared secret", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\nheaders = { Authorization = \"Bearer ${secret:TOKEN}\" }\n", Error, 10, 29, "[env] does not declare"},
		{"mcp http env not secret", "[capabilities]\nnet = [\"example.com\"]\n[env.TOKEN]\ntype = \"text\"\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\nheaders = { Authorization = \"Bearer ${secret:TOKEN}\" }\n", Error, 12, 29, "is not type = \"secret\""},
		{"mcp http bad template", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\nheaders = { X-Key = \"${vault:K}\" }\n", Error, 10, 21, "${secret:KEY} or ${env:KEY}"},
		{"mcp http reserved header", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\nheaders = { Mcp-Session-Id = \"x\" }\n", Error, 10, 13, "set by the MCP transport"},
		{"mcp http command ignored", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\ncommand = \"npx\"\n", Warning, 10, 11, "command has no effect"},
		{"mcp http secret literal", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_client_secret = \"hunter2\"\n", Error, 11, 23, "must name a secret"},
		{"mcp grant unknown", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_grant = \"password\"\n", Error, 10, 15, "is not \"authorization_code\""},
		{"mcp client credentials without id", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_grant = \"client_credentials\"\n", Error, 10, 15, "add oauth_client_id"},
		{"mcp client credentials without a way to authenticate", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_grant = \"client_credentials\"\n", Error, 11, 15, "needs oauth_client_secret or oauth_client_key"},
		{"mcp client key literal", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_grant = \"client_credentials\"\noauth_client_key = \"-----BEGIN PRIVATE KEY-----\"\n", Error, 12, 20, "must name a secret"},
		{"mcp client key without the grant", "[capabilities]\nnet = [\"example.com\"]\n[env.K]\ntype = \"secret\"\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_client_key = \"${secret:K}\"\n", Error, 13, 20, "add oauth_grant"},
		{"mcp client key and secret", "[capabilities]\nnet = [\"example.com\"]\n[env.K]\ntype = \"secret\"\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_grant = \"client_credentials\"\noauth_client_secret = \"${secret:K}\"\noauth_client_key = \"${secret:K}\"\n", Error, 15, 20, "both set"},
		{"mcp cimd http", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"http://example.com/client.json\"\n", Error, 10, 29, "https://"},
		{"mcp cimd loopback", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://127.0.0.1/client.json\"\n", Error, 10, 29, "loopback, private or link-local"},
		{"mcp cimd metadata ip", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://169.254.169.254/latest/client.json\"\n", Error, 10, 29, "loopback, private or link-local"},
		{"mcp cimd mapped loopback", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://[::ffff:127.0.0.1]/c.json\"\n", Error, 10, 29, "loopback, private or link-local"},
		{"mcp cimd localhost", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://app.localhost/c.json\"\n", Error, 10, 29, "names loopback"},
		{"mcp cimd private", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://10.0.0.8/c.json\"\n", Error, 10, 29, "loopback, private or link-local"},
		{"mcp cimd no path", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://example.com\"\n", Error, 10, 29, "needs a path"},
		{"mcp cimd fragment", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_metadata_url = \"https://example.com/c.json#x\"\n", Error, 10, 29, "fragment"},
		{"mcp cimd and client id", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_client_metadata_url = \"https://example.com/c.json\"\n", Error, 11, 29, "keep one"},
		{"mcp idp key without the grant", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\nidp_client_id = \"x\"\n", Error, 10, 17, "is for the enterprise grant"},
		{"mcp enterprise without an id token", "[capabilities]\nnet = [\"example.com\"]\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_grant = \"enterprise\"\nidp_issuer = \"https://idp.example.com\"\nidp_client_id = \"x\"\n", Error, 11, 15, "needs idp_id_token"},
		{"mcp enterprise id token literal", "[capabilities]\nnet = [\"example.com\"]\n[env.K]\ntype = \"secret\"\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_grant = \"enterprise\"\nidp_issuer = \"https://idp.example.com\"\nidp_client_id = \"x\"\nidp_id_token = \"eyJhbGciOi\"\n", Error, 16, 16, "must name a secret"},
		{"mcp enterprise idp not granted", "[capabilities]\nnet = [\"example.com\"]\n[env.K]\ntype = \"secret\"\n[[mcp_server]]\nid = \"gh\"\ntype = \"http\"\nurl = \"https://mcp.example.com/\"\noauth_client_id = \"abc\"\noauth_grant = \"enterprise\"\nidp_issuer = \"https://idp.other.org\"\nidp_client_id = \"x\"\nidp_id_token = \"${secret:K}\"\n", Error, 14, 14, "not granted by capabilities.net"},
		{"uplink profile", "[capabilities]\nuplink = true\n[[uplink]]\nname = \"u\"\nplatform = \"cli\"\nprofile = \"human\"\n", Error, 9, 11, `unknown profile "human"`},
		{"uplink entry without the grant", "[[uplink]]\nname = \"u\"\nplatform = \"telegram\"\nprofile = \"chat\"\n", Warning, 4, 3, "capabilities.uplink is false"},
		{"tool name", "[[tool]]\nname = \"fs:read\"\ndescription_for_llm = \"x\"\n", Error, 5, 8, "ASCII letters"},
		{"legacy topic", "[[topic]]\nname = \"a.b\"\ndirection = \"publish\"\n", Warning, 4, 3, "[[topic]]"},
		{"unknown section", "[extras]\nx = 1\n", Warning, 4, 2, "unknown key extras"},
		{"wrong type", "[capabilities]\nuplink = \"yes\"\n", Error, 5, 10, "must be a boolean, not a string"},
		{"astrid-version unparsable", "", Error, 4, 18, "invalid astrid-version"},
		{"reserved id", "", Error, 2, 8, "reserved for the kernel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := head + tt.body
			switch tt.name {
			case "astrid-version unparsable":
				src = head + "astrid-version = \"1.0 - 2.0\"\n"
			case "reserved id":
				src = strings.Replace(head, `"t"`, `"kernel"`, 1)
			}
			_, diags := Parse([]byte(src), "Capsule.toml", "")
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got:\n%s", render(diags))
			}
			d := diags[0]
			if d.Severity != tt.sev || d.Line != tt.line || d.Col != tt.col || !strings.Contains(d.Message, tt.contains) {
				t.Errorf("got  %s\nwant Capsule.toml:%d:%d: %s: …%s…", d, tt.line, tt.col, tt.sev, tt.contains)
			}
		})
	}
}

func TestErrStrict(t *testing.T) {
	diags := Diagnostics{
		{Severity: Note, File: "f", Line: 1, Col: 1, Message: "n"},
		{Severity: Warning, File: "f", Line: 2, Col: 3, Message: "w"},
	}
	if err := diags.Err(false); err != nil {
		t.Errorf("Err(false) = %v, want nil (warnings and notes load)", err)
	}
	err := diags.Err(true)
	if err == nil || err.Error() != "f:2:3: warning: w" {
		t.Errorf("Err(true) = %v, want the warning alone", err)
	}
	if (Diagnostics{{Severity: Note}}).Err(true) != nil {
		t.Error("a note fails strict mode")
	}
}
