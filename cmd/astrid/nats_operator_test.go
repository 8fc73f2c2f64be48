package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/bus/natsbus/natsbustest"
	"github.com/astrid-go/astrid/internal/testutil"
)

// mintDaemon runs `astrid nats creds --daemon` for host into a fresh
// directory and returns it: host.creds and capsules/<id>.creds.
func mintDaemon(t *testing.T, seedFile, host string, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), host)
	out, errOut, code := runAstrid(t, "", append([]string{"nats", "creds", "--account-seed", seedFile, "--host", host, "--daemon", "--out-dir", dir, "--ttl", "1h"}, extra...)...)
	if code != 0 {
		t.Fatalf("nats creds --daemon: exit %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "--nats-creds-dir "+filepath.Join(dir, "capsules")) {
		t.Fatalf("nats creds --daemon does not say how to start the daemon:\n%s", errOut)
	}
	return dir
}

// The Show line on an external cluster in operator mode, with
// daemon processes: the operator mints with `astrid nats creds --daemon`
// everything each host's daemon connects with (no other key is handed
// out); host A's `astrid -p` has react call tool block, which host B
// serves; then a rogue client holding host B's credentials — the host's
// own, and the tool capsule's — tries to publish a tool result as host A's
// router and outside the tool's grants: the server refuses each.
func TestDaemonsOnAnOperatorClusterWithMintedCredentials(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	seed, _ := acc.Seed()
	seedFile := filepath.Join(t.TempDir(), "account.seed")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	credsA := mintDaemon(t, seedFile, "hostA")
	marker := filepath.Join(t.TempDir(), "started")
	if err := os.WriteFile(marker+".release", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Host B also runs the tool capsule remote-wait: the operator mints it
	// with the daemon's (here a built-in of the test binary, as its
	// environment adds it to host B's daemon).
	saved := testBuiltins
	testBuiltins = append(append(testBuiltins[:0:0], testBuiltins...), remoteWaitBuiltin(marker, "hostB"))
	credsB := mintDaemon(t, seedFile, "hostB")
	testBuiltins = saved

	natsArgs := func(dir string) []string {
		return []string{"--nats-url", ns.ClientURL(), "--nats-creds", filepath.Join(dir, "host.creds"), "--nats-creds-dir", filepath.Join(dir, "capsules")}
	}
	wsA := promptHome(t, blockCallScript)
	homeA := os.Getenv("ASTRID_HOME")
	c := &cluster{homeA: homeA, wsA: wsA, marker: marker, daemons: map[string]*exec.Cmd{}}
	c.daemons["hostA"] = startDaemonWith(t, homeA, wsA, "hostA", natsArgs(credsA))
	c.daemons["hostB"] = startDaemonWith(t, t.TempDir(), t.TempDir(), "hostB", natsArgs(credsB), natsBlockEnv+"="+marker, natsHostEnv+"=hostB")
	testutil.WaitFor(t, daemonPatience, "host A to hear host B serving block", func() bool { return servesBlock(t, homeA, "hostB") })

	finished, final := turnEvents(t, c.prompt(t)())
	if finished.IsError || !strings.Contains(finished.Summary, "served by hostB") || !strings.Contains(final.Text, "The tool answered.") {
		t.Fatalf("the call across hosts: %+v, %+v; want it served by hostB", finished, final)
	}

	// The forgeries name capsules that are there, with their credentials.
	const routerID, reactID = "astrid-capsule-router", "astrid-capsule-react"
	for _, id := range []string{routerID, reactID} {
		if _, err := os.Stat(filepath.Join(credsA, "capsules", id+".creds")); err != nil {
			t.Fatalf("host A has no capsule %s: %v", id, err)
		}
	}
	for _, tc := range []struct {
		creds    string
		subjects []string
	}{
		{filepath.Join(credsB, "host.creds"), []string{
			natsbus.SubjectPrefix + "." + routerID + ".tool.v1.execute.block.result", // as host A's router
			natsbus.SubjectPrefix + ".remote-wait.tool.v1.execute.block.result",      // as host B's own capsule
			natsbus.SubjectPrefix + ".react.agent.v1.response",                       // as react
		}},
		{filepath.Join(credsB, "capsules", "remote-wait.creds"), []string{
			natsbus.SubjectPrefix + "." + routerID + ".tool.v1.execute.block.result", // as host A's router
			natsbus.SubjectPrefix + ".remote-wait.tool.v1.execute.rm.result",         // outside its grants
			natsbus.SubjectPrefix + ".remote-wait.agent.v1.response",                 // outside its grants
		}},
	} {
		var violations atomic.Int32
		rogue, err := nats.Connect(ns.ClientURL(), nats.UserCredentials(tc.creds),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
				if errors.Is(err, nats.ErrPermissionViolation) {
					violations.Add(1)
				}
			}))
		if err != nil {
			t.Fatalf("%s: %v", tc.creds, err)
		}
		for _, subject := range tc.subjects {
			if err := rogue.Publish(subject, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
		if err := rogue.Flush(); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, daemonPatience, "the server to refuse each forgery with "+filepath.Base(tc.creds), func() bool {
			return violations.Load() == int32(len(tc.subjects))
		})
		rogue.Close()
	}
	rep, _ := statusOf(t, homeA)
	if rep.NATS == nil {
		t.Fatal("host A's status shows no NATS transport")
	}
	for _, reason := range []string{natsbus.DropDecode, natsbus.DropDeliver} {
		if n := rep.NATS.Stats.Drops[reason]; n != 0 {
			t.Fatalf("host A received a forgery: %d dropped as %s", n, reason)
		}
	}

	// Host B is killed mid-call: there is no route to watch on an external
	// cluster, but the cluster answers host A's probes of B "no
	// responders" once B's connections are gone, and the call fails at
	// once naming B (not after three presence intervals of silence).
	if err := os.Remove(marker + ".release"); err != nil {
		t.Fatal(err)
	}
	if host := c.killMidCallLost(t, natsbus.LostGone); host != "hostB" {
		t.Fatalf("the call ran on %s", host)
	}
}
