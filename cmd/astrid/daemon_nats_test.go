package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
)

func TestNATSFlagsOverrideConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		file config.NATS
		args []string
		want config.NATS
	}{
		{"no flag keeps the file", config.NATS{URL: "nats://a:4222", CredsFile: "c"}, nil,
			config.NATS{URL: "nats://a:4222", CredsFile: "c"}},
		{"per-capsule credentials from the command line", config.NATS{URL: "nats://a:4222", CredsFile: "c"},
			[]string{"--nats-creds-dir", "/etc/astrid/creds", "--nats-host-id", "gpu"},
			config.NATS{URL: "nats://a:4222", CredsFile: "c", CredsDir: "/etc/astrid/creds", HostID: "gpu"}},
		{"embedding replaces the file's url", config.NATS{URL: "nats://a:4222", CredsFile: "c", CredsDir: "d", HostID: "h"},
			[]string{"--nats-listen", "0.0.0.0:6222", "--nats-routes", "nats-route://b:6222,nats-route://c:6222"},
			config.NATS{Listen: "0.0.0.0:6222", Routes: []string{"nats-route://b:6222", "nats-route://c:6222"}, HostID: "h"}},
		{"a cluster secret and route TLS from the command line", config.NATS{Listen: "0.0.0.0:6222"},
			[]string{"--nats-cluster-secret-file", "/etc/astrid/cluster.secret", "--nats-cluster-tls-cert", "c.pem", "--nats-cluster-tls-key", "k.pem", "--nats-cluster-tls-ca", "ca.pem"},
			config.NATS{Listen: "0.0.0.0:6222", ClusterSecretFile: "/etc/astrid/cluster.secret", ClusterTLSCert: "c.pem", ClusterTLSKey: "k.pem", ClusterTLSCA: "ca.pem"}},
		{"a url replaces the file's node", config.NATS{Listen: "0.0.0.0:6222", Routes: []string{"nats-route://b:6222"}, ClusterSecretFile: "s", ClusterTLSCA: "ca.pem"},
			[]string{"--nats-url", "tls://n:4222", "--nats-tls-cert", "c.pem", "--nats-tls-key", "k.pem", "--nats-host-id", "gpu"},
			config.NATS{URL: "tls://n:4222", TLSCert: "c.pem", TLSKey: "k.pem", HostID: "gpu"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nf natsFlags
			cmd := &cobra.Command{Use: "daemon", RunE: func(*cobra.Command, []string) error { return nil }}
			nf.register(cmd)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg := config.Config{NATS: tc.file}
			nf.apply(cmd, &cfg)
			got := cfg.NATS
			if !slices.Equal(got.Routes, tc.want.Routes) {
				t.Fatalf("routes %q, want %q", got.Routes, tc.want.Routes)
			}
			got.Routes, tc.want.Routes = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNATSFlagsExcludeEachOther(t *testing.T) {
	for _, embedded := range [][]string{{"--nats-listen", "0.0.0.0:6222"}, {"--nats-cluster-secret-file", "s"}, {"--nats-cluster-tls-ca", "ca.pem"}} {
		var nf natsFlags
		cmd := &cobra.Command{Use: "daemon", RunE: func(*cobra.Command, []string) error { return nil }}
		nf.register(cmd)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs(append([]string{"--nats-url", "nats://a:4222"}, embedded...))
		if err := cmd.Execute(); err == nil {
			t.Fatalf("--nats-url with %s accepted", embedded[0])
		}
	}
}

func TestPrintNATS(t *testing.T) {
	var none strings.Builder
	printNATS(&none, nil)
	if none.Len() != 0 {
		t.Fatalf("printed %q for a bus on one host", none.String())
	}
	var out strings.Builder
	printNATS(&out, &daemon.NATSStatus{
		Host: "laptop",
		Hosts: []natsbus.HostInfo{
			{ID: "gpu-box", Capsules: []string{"anthropic", "openai"}},
			{ID: "laptop", Capsules: []string{"react", "router"}},
		},
		Stats: natsbus.Stats{Forwarded: 5, Received: 7, Drops: map[string]uint64{natsbus.DropPermission: 2}, CredsRenewed: 3, CredsExpired: 1,
			Node: &natsbus.NodeStats{RoutesJoined: 4, RoutesRefused: 2, ClientsRefused: 1, Violations: 6}},
	})
	for _, want := range []string{"hosts (2, this one: laptop)", "gpu-box", "anthropic,openai", "react,router",
		"forwarded 5, received 7", "2  permission_violation", "credentials: renewed 3, connections dropped as expired 1",
		"nats node: routes joined 4, refused 2; clients refused 1; permissions violations 6"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
