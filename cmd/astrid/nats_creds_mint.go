package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/manifest"
)

// readAccountSeed reads the operator's account key, which only its owner
// may read.
func readAccountSeed(path string) (nkeys.KeyPair, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("nats creds: %s: mode %04o lets others read the account key; chmod 600 it", path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("nats creds: %w", err)
	}
	account, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(raw))))
	if err != nil {
		return nil, fmt.Errorf("nats creds: %s: %w", path, err)
	}
	return account, nil
}

// capsuleACLs reads the grants of the capsules in dirs (a directory or its
// Capsule.toml each).
func capsuleACLs(dirs []string) ([]dispatch.CapsuleACL, error) {
	acls := make([]dispatch.CapsuleACL, 0, len(dirs))
	for _, dir := range dirs {
		m, diags := manifest.Load(dir)
		if err := diags.Err(false); err != nil || m == nil {
			return nil, fmt.Errorf("nats creds: %s does not load: %w", dir, err)
		}
		acls = append(acls, mintedACL(m))
	}
	return acls, nil
}

// mintedACL is what credentials for m grant: its manifest's own keys (an
// engine's added surface is not minted, docs/nats.md).
func mintedACL(m *manifest.Manifest) dispatch.CapsuleACL {
	return dispatch.CapsuleACL{ID: m.ID(), Publish: m.PublishPatterns(), Subscribe: m.SubscribePatterns()}
}

// daemonACLs are the grants of every identity `astrid daemon` attaches to
// the bus whatever is installed: the uplink, the built-ins, the identities
// astrid's commands act under and the daemon's own. They are read from the
// same lists the daemon boots with, so a built-in added later is minted
// too.
func daemonACLs() ([]dispatch.CapsuleACL, error) {
	manifests := [][]byte{uplink.Manifest}
	for _, b := range builtins() {
		manifests = append(manifests, b.Manifest)
	}
	acls := make([]dispatch.CapsuleACL, 0, len(manifests)+5)
	for _, raw := range manifests {
		m, diags := manifest.Parse(raw, "Capsule.toml", "")
		if err := diags.Err(false); err != nil || m == nil {
			return nil, fmt.Errorf("nats creds: a built-in's manifest: %w", err)
		}
		acls = append(acls, mintedACL(m))
	}
	acls = append(acls, frontends()...)
	return append(acls, daemon.ACL()), nil
}

// A minter mints credentials of one host with the account key.
type minter struct {
	account nkeys.KeyPair
	host    string
	ttl     time.Duration
	log     io.Writer
}

func (m minter) mint(a dispatch.CapsuleACL) (natsbus.CapsuleCreds, error) {
	c, err := natsbus.MintCapsuleCreds(m.account, m.host, a.ID, a.Publish, a.Subscribe, m.ttl)
	if err != nil {
		return c, fmt.Errorf("nats creds: capsule %s: %w", a.ID, err)
	}
	return c, nil
}

// write writes creds to path by rename, mode 0600, and says so.
func (m minter) write(path, what string, creds natsbus.CapsuleCreds) error {
	if err := atomicfile.Write(path, creds.File, 0o600); err != nil {
		return fmt.Errorf("nats creds: %w", err)
	}
	fmt.Fprintf(m.log, "wrote %s: %s on host %s, user %s\n", path, what, m.host, creds.User)
	return nil
}

// capsules writes each capsule's credentials to dir/<id>.creds.
func (m minter) capsules(dir string, acls []dispatch.CapsuleACL) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("nats creds: %w", err)
	}
	seen := make(map[string]bool, len(acls))
	for _, a := range acls {
		if seen[a.ID] {
			return fmt.Errorf("nats creds: capsule %s given twice", a.ID)
		}
		seen[a.ID] = true
		c, err := m.mint(a)
		if err != nil {
			return err
		}
		if err := m.write(filepath.Join(dir, a.ID+".creds"), "capsule "+a.ID, c); err != nil {
			return err
		}
	}
	return nil
}

// daemon writes what astrid daemon on the host needs: dir/host.creds and
// dir/capsules/<id>.creds for the daemon's own identities and the
// capsules in extra.
func (m minter) daemon(dir string, extra []string) error {
	acls, err := daemonACLs()
	if err != nil {
		return err
	}
	installed, err := capsuleACLs(extra)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("nats creds: %w", err)
	}
	hostCreds, err := natsbus.MintHostCreds(m.account, m.host, m.ttl)
	if err != nil {
		return fmt.Errorf("nats creds: %w", err)
	}
	hostFile := filepath.Join(dir, "host.creds")
	if err := m.write(hostFile, "the host's own connections", hostCreds); err != nil {
		return err
	}
	capsDir := filepath.Join(dir, "capsules")
	if err := m.capsules(capsDir, append(acls, installed...)); err != nil {
		return err
	}
	fmt.Fprintf(m.log, "start the daemon on %s with: astrid daemon --nats-url <url> --nats-host-id %s --nats-creds %s --nats-creds-dir %s\n",
		m.host, m.host, hostFile, capsDir)
	return nil
}
