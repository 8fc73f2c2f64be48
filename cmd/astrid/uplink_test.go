package main

import (
	"context"
	"errors"
	"testing"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/manifest"
)

func TestUplinkBuiltin(t *testing.T) {
	cfg := config.Default()
	b, err := uplinkBuiltin(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, diags := manifest.Parse(b.Manifest, "Capsule.toml", "")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if m.ID() != uplink.ID || !m.Capabilities.Uplink {
		t.Fatalf("the uplink built-in is %s (uplink %v)", m.ID(), m.Capabilities.Uplink)
	}
	if b.New().Service() == nil {
		t.Fatal("the uplink built-in has no service")
	}
	cfg.Uplink.Principals = []string{"not-a-mapping"}
	if _, err := uplinkBuiltin(cfg, nil); err == nil {
		t.Fatal("a bad [uplink] principals entry was accepted")
	}
	cfg = config.Default()
	cfg.Uplink.Ingress = []string{"guest=user.v1.prompt"}
	if _, err := uplinkBuiltin(cfg, nil); err != nil {
		t.Fatalf("a narrowing [uplink] ingress: %v", err)
	}
	for _, wider := range []string{"guest=tool.v1.execute.write_file", "guest=*", "guest"} {
		cfg.Uplink.Ingress = []string{wider}
		if _, err := uplinkBuiltin(cfg, nil); err == nil {
			t.Errorf("[uplink] ingress %q was accepted", wider)
		}
	}
}

func TestDialDaemonWithoutOne(t *testing.T) {
	if _, err := dialDaemon(context.Background(), t.TempDir()); !errors.Is(err, daemonclient.ErrNoDaemon) {
		t.Fatalf("err = %v, want ErrNoDaemon", err)
	}
}
