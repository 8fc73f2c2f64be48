package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/admin"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/webview"
	"github.com/astrid-go/astrid/ipc"
)

// get fetches url with the bearer token and returns the status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// A daemon serves its web view on loopback by default: the run file (0600)
// names its URL and token and this daemon's pid, the graph lists the
// capsules and frontends it runs, a handler mounted through AdminHandlers
// answers behind the same token, and a shutdown closes the server and
// removes the file.
func TestDaemonServesTheWebView(t *testing.T) {
	d := startDaemon(t, "")
	p := PathsOf(d.home)
	fi, err := os.Stat(p.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin run file mode %v, want 0600", fi.Mode().Perm())
	}
	info, err := ReadAdmin(d.home)
	if err != nil || info.Pid != os.Getpid() || !strings.HasPrefix(info.BaseURL, "http://127.0.0.1:") || len(info.Token) < 40 {
		t.Fatalf("admin run file: %+v, %v", info, err)
	}
	if code, _ := get(t, info.BaseURL+"api/graph", ""); code != http.StatusUnauthorized {
		t.Fatalf("graph without the token: %d", code)
	}
	code, body := get(t, info.BaseURL+"api/graph", info.Token)
	if code != http.StatusOK {
		t.Fatalf("graph: %d %s", code, body)
	}
	var g struct {
		Nodes []struct{ ID, Kind string }
		Edges []struct{ From, To int }
	}
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range g.Nodes {
		ids = append(ids, n.Kind+":"+n.ID)
	}
	for _, want := range []string{"capsule:astrid-capsule-react", "capsule:astrid-capsule-router", "frontend:" + agentclient.ACL().ID, "frontend:" + ClientID} {
		if !slices.Contains(ids, want) {
			t.Errorf("graph nodes %v lack %s", ids, want)
		}
	}
	if len(g.Edges) == 0 {
		t.Error("the agent's capsules have no edge between them")
	}
	// The kernel's counters, read live: the boot published events.
	code, body = get(t, info.BaseURL+"api/state", info.Token)
	var st struct {
		Counters struct{ Published uint64 }
		Turns    struct{ Running, Recent []any }
	}
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil || st.Counters.Published == 0 || st.Turns.Running == nil {
		t.Fatalf("state: %d %v %s", code, err, body)
	}
	d.shutdown(t)
	if _, err := os.Stat(p.Admin); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin run file after shutdown: %v", err)
	}
	if _, err := http.Get(info.BaseURL); err == nil {
		t.Error("the admin server still answers after shutdown")
	}
}

// Handlers mounted through AdminHandlers answer behind the same checks.
func TestAdminHandlersAreMounted(t *testing.T) {
	ready := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	home := t.TempDir()
	go func() {
		done <- Run(ctx, Options{
			Home: home, Workspace: t.TempDir(), Config: config.Default(),
			AdminHandlers: map[string]http.Handler{"/metrics": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				io.WriteString(w, "metric 1\n")
			})},
			Ready: func(*kernel.Kernel) { close(ready) },
		})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("daemon did not start: %v", err)
	}
	info, err := ReadAdmin(home)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, info.BaseURL+"metrics", info.Token); code != http.StatusOK || body != "metric 1\n" {
		t.Fatalf("mounted handler: %d %q", code, body)
	}
	if code, _ := get(t, info.BaseURL+"metrics", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("mounted handler with a wrong token: %d", code)
	}
}

// With [admin] enabled = false no server runs and no run file is written.
func TestAdminDisabled(t *testing.T) {
	ready := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	home := t.TempDir()
	cfg := config.Default()
	cfg.Admin.Enabled = false
	go func() {
		done <- Run(ctx, Options{Home: home, Workspace: t.TempDir(), Config: cfg, Ready: func(*kernel.Kernel) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("daemon did not start: %v", err)
	}
	_, err := os.Stat(PathsOf(home).Admin)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("admin run file with the server disabled: %v", err)
	}
}

// state fetches /api/state.
func state(t *testing.T, info admin.RunInfo) webview.Tick {
	t.Helper()
	code, body := get(t, info.BaseURL+"api/state", info.Token)
	var tick webview.Tick
	if err := json.Unmarshal([]byte(body), &tick); code != http.StatusOK || err != nil {
		t.Fatalf("state: %d %v %s", code, err, body)
	}
	return tick
}

// The web view follows a daemon's turns from the bus: a turn shows as
// running with its pending tool call, then, cancelled, among the recent
// ones with its outcome and its call (which the agent reports no end of:
// the page says it did not finish).
func TestWebViewFollowsTurns(t *testing.T) {
	d, turn := startBlockedTurn(t)
	info, err := ReadAdmin(d.home)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, patience, "the running turn with its pending call", func() bool {
		run := state(t, info).Turns.Running
		return len(run) == 1 && run[0].Principal == "alice" && run[0].Prompt == "block" &&
			len(run[0].Tools) == 1 && run[0].Tools[0].Name == "block" && !run[0].Tools[0].Finished
	})
	if err := turn.Cancel(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, patience, "the cancelled turn among the recent ones", func() bool {
		s := state(t, info).Turns
		return len(s.Running) == 0 && len(s.Recent) == 1 && s.Recent[0].Outcome == ipc.OutcomeCancelled &&
			s.Recent[0].TurnID == turn.TurnID() && len(s.Recent[0].Tools) == 1 && s.Recent[0].Tools[0].Name == "block"
	})
}

// With [telemetry] metrics on, the admin server serves Prometheus metrics
// at /metrics behind the same token, read live from the daemon's kernel;
// off (the default), there is no /metrics.
func TestMetricsMountedWhenConfigured(t *testing.T) {
	for _, on := range []bool{true, false} {
		cfg := config.Default()
		cfg.Telemetry.Metrics = on
		ready := make(chan struct{})
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		home := t.TempDir()
		go func() {
			done <- Run(ctx, Options{Home: home, Workspace: t.TempDir(), Config: cfg, Ready: func(*kernel.Kernel) { close(ready) }})
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("daemon did not start: %v", err)
		}
		info, err := ReadAdmin(home)
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, info.BaseURL+"metrics", info.Token)
		switch {
		case on && (code != http.StatusOK || !strings.Contains(body, "astrid_bus_published_total")):
			t.Errorf("metrics on: %d %.300s", code, body)
		case !on && code == http.StatusOK && strings.Contains(body, "astrid_bus_published_total"):
			t.Errorf("metrics off, yet /metrics answers: %.300s", body)
		}
		if code, _ := get(t, info.BaseURL+"metrics", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("metrics (on=%v) with a wrong token: %d", on, code)
		}
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
