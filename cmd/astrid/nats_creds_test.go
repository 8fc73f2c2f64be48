package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// TestNATSCredsMintsTheManifestsGrants: astrid nats creds reads a capsule's
// manifest and an account seed and writes credentials whose JWT, signed by
// that account, grants exactly the manifest's keys as the capsule.
func TestNATSCredsMintsTheManifestsGrants(t *testing.T) {
	dir := t.TempDir()
	acc, _ := nkeys.CreateAccount()
	seed, _ := acc.Seed()
	accPub, _ := acc.PublicKey()
	seedFile := filepath.Join(dir, "account.nk")
	if err := os.WriteFile(seedFile, append(seed, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(dir, "Capsule.toml")
	if err := os.WriteFile(manifestPath, []byte(`
[package]
name = "echo-tool"
version = "0.1.0"
[subscribe]
"tool.v1.execute.echo" = { wit = "opaque", handler = "tool_execute_echo" }
[publish]
"tool.v1.execute.echo.result" = "opaque"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "echo.creds")
	root := newRootCmd()
	var stderr bytes.Buffer
	root.SetOut(&stderr)
	root.SetErr(&stderr)
	root.SetArgs([]string{"nats", "creds", "--account-seed", seedFile, "--host", "gpu-box", "--out", out, manifestPath})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode %v", fi.Mode().Perm())
	}
	token, err := jwt.ParseDecoratedJWT(file)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	id := "echo-tool"
	if claims.Issuer != accPub || !strings.HasSuffix(claims.Name, ":gpu-box:"+id) ||
		!slices.Equal(claims.Pub.Allow, jwt.StringList{"astrid." + id + ".tool.v1.execute.echo.result"}) ||
		!slices.Equal(claims.Sub.Allow, jwt.StringList{"astrid.*.tool.v1.execute.echo"}) {
		t.Fatalf("claims: issuer %s name %s pub %v sub %v", claims.Issuer, claims.Name, claims.Pub, claims.Sub)
	}

	// The host's own credentials publish only its presence. Written over an
	// old file others could read, the renewed one is the owner's alone.
	hostOut := filepath.Join(dir, "host.creds")
	if err := os.WriteFile(hostOut, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	root = newRootCmd()
	root.SetOut(&stderr)
	root.SetErr(&stderr)
	root.SetArgs([]string{"nats", "creds", "--account-seed", seedFile, "--host", "gpu-box", "--host-only", "--out", hostOut})
	if err := root.Execute(); err != nil {
		t.Fatalf("--host-only: %v: %s", err, stderr.String())
	}
	file, err = os.ReadFile(hostOut)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(hostOut); fi.Mode().Perm() != 0o600 {
		t.Fatalf("renewed credentials file mode %v", fi.Mode().Perm())
	}
	if token, err = jwt.ParseDecoratedJWT(file); err != nil {
		t.Fatal(err)
	}
	if claims, err = jwt.DecodeUserClaims(token); err != nil {
		t.Fatal(err)
	}
	if claims.Issuer != accPub || !slices.Equal(claims.Pub.Allow, jwt.StringList{"astrid_hosts.gpu-box", "astrid_hosts.*.alive"}) {
		t.Fatalf("host claims: issuer %s pub %v", claims.Issuer, claims.Pub)
	}

	// Refused: a capsule and --host-only together, neither, and a seed
	// file others may read.
	for _, tc := range []struct {
		name      string
		mode      os.FileMode
		args      []string
		wantInErr string
	}{
		{"both", 0o600, []string{"--host-only", manifestPath}, "either a capsule"},
		{"neither", 0o600, nil, "either a capsule"},
		{"a seed file others may read", 0o640, []string{manifestPath}, "chmod 600"},
		{"--daemon without --out-dir", 0o600, []string{"--daemon"}, "needs --out-dir"},
		{"--daemon with --host-only", 0o600, []string{"--daemon", "--host-only", "--out-dir", dir}, "neither --host-only nor --out"},
		{"two capsules to one file", 0o600, []string{"--out", out, manifestPath, manifestPath}, "need --out-dir"},
		{"--out and --out-dir", 0o600, []string{"--out", out, "--out-dir", dir, manifestPath}, "not both"},
		{"one capsule twice", 0o600, []string{"--out-dir", dir, manifestPath, manifestPath}, "given twice"},
	} {
		if err := os.Chmod(seedFile, tc.mode); err != nil {
			t.Fatal(err)
		}
		root = newRootCmd()
		root.SetOut(&stderr)
		root.SetErr(&stderr)
		root.SetArgs(append([]string{"nats", "creds", "--account-seed", seedFile, "--host", "gpu-box"}, tc.args...))
		if err := root.Execute(); err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
			t.Fatalf("%s: %v, want an error containing %q", tc.name, err, tc.wantInErr)
		}
	}
	if err := os.Chmod(seedFile, 0o600); err != nil {
		t.Fatal(err)
	}

	// A key that is not an account's is refused.
	op, _ := nkeys.CreateOperator()
	opSeed, _ := op.Seed()
	if err := os.WriteFile(seedFile, opSeed, 0o600); err != nil {
		t.Fatal(err)
	}
	root = newRootCmd()
	root.SetOut(&stderr)
	root.SetErr(&stderr)
	root.SetArgs([]string{"nats", "creds", "--account-seed", seedFile, "--host", "gpu-box", manifestPath})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "not an account key") {
		t.Fatalf("minted with an operator key: %v", err)
	}
}
