package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

func TestRunSchemeNetBind(t *testing.T) {
	const run = "/home/u/.astrid/run"
	cases := []struct {
		name   string
		runDir string
		grant  string
		addr   string
		allow  bool
	}{
		{"scheme grant, scheme address", run, "unix:run://astrid.sock", "unix:run://astrid.sock", true},
		{"scheme grant, absolute address", run, "unix:run://astrid.sock", "unix:" + run + "/astrid.sock", true},
		{"scheme grant, other socket", run, "unix:run://astrid.sock", "unix:run://other.sock", false},
		{"scheme grant, other directory", run, "unix:run://astrid.sock", "unix:/tmp/astrid.sock", false},
		{"dotdot in the address", run, "unix:run://astrid.sock", "unix:run://../run/astrid.sock", false},
		{"dotdot in the grant", run, "unix:run://../state.db", "unix:" + run + "/../state.db", false},
		{"absolute after the scheme", run, "unix:run:///etc/x", "unix:/etc/x", false},
		{"no run directory set", "", "unix:run://astrid.sock", "unix:run://astrid.sock", false},
		{"scheme address without a scheme grant", run, "unix:/tmp/*", "unix:run://astrid.sock", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(manifest.Capabilities{NetBind: []string{tc.grant}}, Env{RunDir: tc.runDir})
			if err != nil {
				t.Fatal(err)
			}
			err = g.NetBind(tc.addr)
			if tc.allow && err != nil {
				t.Fatalf("denied: %v", err)
			}
			if !tc.allow && err == nil {
				t.Fatalf("%s allowed under %s", tc.addr, tc.grant)
			}
		})
	}
	g, _ := New(manifest.Capabilities{}, Env{RunDir: run})
	if got := g.ResolveBind("unix:run://astrid.sock"); got != "unix:"+run+"/astrid.sock" {
		t.Errorf("ResolveBind = %q", got)
	}
	if got := g.ResolveBind("127.0.0.1:0"); got != "127.0.0.1:0" {
		t.Errorf("ResolveBind changed a TCP address: %q", got)
	}
}
