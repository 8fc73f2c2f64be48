package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/bus/natsbus/natsbustest"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/manifest"
)

// mintHost writes what the operator hands host: its own credentials and a
// directory of one credentials file per capsule, as astrid nats creds
// mints them. It returns the [nats] settings of a daemon started with
// --nats-url, --nats-creds and --nats-creds-dir.
func mintHost(t *testing.T, ns *server.Server, acc nkeys.KeyPair, host string, capsules []dispatch.CapsuleACL) config.NATS {
	t.Helper()
	dir := t.TempDir()
	write := func(path string, c natsbus.CapsuleCreds, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, c.File, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hostFile := filepath.Join(t.TempDir(), "host.creds")
	c, err := natsbus.MintHostCreds(acc, host, time.Hour)
	write(hostFile, c, err)
	for _, a := range capsules {
		c, err := natsbus.MintCapsuleCreds(acc, host, a.ID, a.Publish, a.Subscribe, time.Hour)
		write(filepath.Join(dir, a.ID+".creds"), c, err)
	}
	return config.NATS{HostID: host, URL: ns.ClientURL(), CredsFile: hostFile, CredsDir: dir}
}

// builtinACL is a builtin's grants, read from its manifest.
func builtinACL(t *testing.T, b Builtin) dispatch.CapsuleACL {
	t.Helper()
	m, diags := manifest.Parse(b.Manifest, "Capsule.toml", "")
	if err := diags.Err(false); err != nil || m == nil {
		t.Fatalf("manifest: %v", err)
	}
	return dispatch.CapsuleACL{ID: m.ID(), Publish: m.PublishPatterns(), Subscribe: m.SubscribePatterns()}
}

// TestToolAcrossHostsWithPerCapsuleCredentials: two kernels on an external
// cluster in operator mode, each capsule connected with its own minted
// credentials: a tool call made on host A is served on host B; a client
// holding the tool's credentials cannot publish as the router, nor
// outside the tool's grants: the server refuses both.
func TestToolAcrossHostsWithPerCapsuleCredentials(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	routerB := Builtin{Manifest: router.Manifest, New: router.New}
	echo := remoteEchoBuiltin()
	a := bootWith(t, mintHost(t, ns, acc, "hostA", append(testFrontends(), builtinACL(t, routerB))), []Builtin{routerB})
	natsB := mintHost(t, ns, acc, "hostB", append(testFrontends(), builtinACL(t, echo)))
	bootWith(t, natsB, []Builtin{echo})
	expectRemoteEcho(t, a)

	// A thief on host B takes the tool's credentials file.
	var violations atomic.Int32
	rogue, err := nats.Connect(ns.ClientURL(), nats.UserCredentials(filepath.Join(natsB.CredsDir, "remote-echo.creds")),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				violations.Add(1)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()
	forgeries := []string{
		natsbus.SubjectPrefix + "." + builtinACL(t, routerB).ID + ".tool.v1.execute.result", // as the router, on host A
		natsbus.SubjectPrefix + ".remote-echo.tool.v1.execute.rm.result",                    // outside its grants
	}
	for _, subject := range forgeries {
		if err := rogue.Publish(subject, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rogue.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitForValue(t, testTimeout, "the server to refuse every forgery", func() (int32, bool) {
		n := violations.Load()
		return n, n >= int32(len(forgeries))
	})
	if n := a.NATSTransport().Stats().Drops; n[natsbus.DropDecode] != 0 || n[natsbus.DropDeliver] != 0 {
		t.Fatalf("host A received a forgery: drops %v", n)
	}
}
