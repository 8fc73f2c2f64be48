package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// waitLimit bounds every wait so that a bug fails instead of hanging; it is
// never a speed assertion.
const waitLimit = 30 * time.Second

// loadID is a frontend identity that publishes and hears load.v1.* events.
const loadID = "metrics-load"

func bootKernel(t *testing.T) *kernel.Kernel {
	t.Helper()
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# metrics\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Limits.RateBytesPerSec = 1 << 40
	cfg.WatchdogInterval = config.Duration{} // no ticks: the counters settle when the load stops
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: home, Workspace: ws, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Builtins: []kernel.Builtin{{Manifest: router.Manifest, New: router.New}, {Manifest: fs.Manifest, New: fs.New}},
		Frontends: []dispatch.CapsuleACL{toolclient.ACL(),
			{ID: loadID, Publish: []string{"load.v1.*"}, Subscribe: []string{"load.v1.*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// scrape fetches and parses the exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

// value is the value of the series of family name whose labels include
// every pair in labels; -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// histogramTotal sums the sample counts of every series of a histogram.
func histogramTotal(fams map[string]*dto.MetricFamily, name string) uint64 {
	var n uint64
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			n += m.Histogram.GetSampleCount()
		}
	}
	return n
}

// settle waits until the kernel's counters stop moving: every call the
// load caused has run, and answered.
func settle(t *testing.T, k *kernel.Kernel) (bus.Stats, dispatch.Stats) {
	t.Helper()
	type counts struct {
		b bus.Stats
		d dispatch.Stats
	}
	var prev counts
	c := testutil.WaitForValue(t, waitLimit, "the kernel's counters to settle", func() (counts, bool) {
		now := counts{k.Bus.Stats(), k.Dispatcher.Stats()}
		b, d := now.b, now.d
		still := b.Published == prev.b.Published && b.Delivered == prev.b.Delivered && d.Invocations == prev.d.Invocations
		prev = now
		// Unchanged across a poll, and every invocation made has its
		// verdict: not a quiet moment in calls still running.
		return now, still && d.Invocations == d.Continued+d.Finals+d.Denials+d.Skipped
	})
	return c.b, c.d
}

// The Show test of issue 21: /metrics, served by httptest on loopback, is
// scraped while many publishes and tool calls run on a real kernel; every
// scrape is consistent (counters never go back, never run ahead of the
// kernel's own Stats), and once the load stops the scraped counters equal
// bus.Stats and dispatch.Stats exactly, and the histograms hold every call.
func TestScrapeDuringLoadMatchesStats(t *testing.T) {
	k := bootKernel(t)
	beforeBus, before := settle(t, k)
	srv := httptest.NewServer(New(k))
	defer srv.Close()
	url := srv.URL + "/metrics"

	const (
		callers        = 4
		callsPerCaller = 50
		publishes      = 3000
	)
	// A receiver for the load events, drained as they come.
	sub, err := k.Frontend().Subscribe(dispatch.Caller{Capsule: loadID, Principal: ipc.DefaultPrincipal}, "load.v1.event", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var received sync.WaitGroup
	received.Add(1)
	got := 0
	go func() {
		defer received.Done()
		for got < publishes {
			if _, err := sub.Recv(ctx); err != nil {
				return
			}
			got++
		}
	}()

	var load sync.WaitGroup
	errs := make(chan error, callers+1)
	for c := range callers {
		load.Add(1)
		go func() {
			defer load.Done()
			principal := fmt.Sprintf("p%d", c)
			for range callsPerCaller {
				res, err := toolclient.CallTool(ctx, k.Frontend(), principal, "read_file", json.RawMessage(`{"file_path":"README.md"}`), waitLimit)
				if err == nil && res.IsError {
					err = fmt.Errorf("read_file: %s", res.Content)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	load.Add(1)
	go func() {
		defer load.Done()
		from := dispatch.Caller{Capsule: loadID, Principal: ipc.DefaultPrincipal}
		for i := range publishes {
			if _, err := k.Frontend().Publish(from, "load.v1.event", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
				errs <- err
				return
			}
			if _, err := k.Frontend().Publish(from, "load.v1.nobody", json.RawMessage(`{}`)); err != nil {
				errs <- err
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { load.Wait(); close(done) }()

	// Scrape while the load runs.
	scrapes := 0
	var last map[string]*dto.MetricFamily
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		fams := scrape(t, url)
		after := k.Bus.Stats()
		scrapes++
		for _, name := range []string{"astrid_bus_published_total", "astrid_bus_delivered_total", "astrid_dispatch_invocations_total"} {
			if last != nil && value(fams, name) < value(last, name) {
				t.Fatalf("%s went back: %v after %v", name, value(fams, name), value(last, name))
			}
		}
		if v := value(fams, "astrid_bus_published_total"); v > float64(after.Published) || v < float64(beforeBus.Published) {
			t.Fatalf("scraped published %v outside [%d, %d]", v, beforeBus.Published, after.Published)
		}
		last = fams
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	received.Wait()
	cancel()
	sub.Close()
	if got != publishes {
		t.Fatalf("received %d load events, want %d", got, publishes)
	}

	b, d := settle(t, k)
	fams := scrape(t, url)
	for _, c := range []struct {
		name   string
		labels []string
		want   uint64
	}{
		{"astrid_bus_published_total", nil, b.Published},
		{"astrid_bus_delivered_total", nil, b.Delivered},
		{"astrid_bus_dropped_total", []string{"reason", "unrouted"}, b.Unrouted},
		{"astrid_bus_dropped_total", []string{"reason", "evicted"}, b.Evicted},
		{"astrid_bus_dropped_total", []string{"reason", "too_large"}, b.Rejected},
		{"astrid_bus_dropped_total", []string{"reason", "lagged"}, b.Lagged},
		{"astrid_bus_dropped_total", []string{"reason", "route_closed"}, b.DroppedOnClose},
		{"astrid_dispatch_invocations_total", nil, d.Invocations},
		{"astrid_dispatch_verdicts_total", []string{"verdict", "continue"}, d.Continued},
		{"astrid_dispatch_verdicts_total", []string{"verdict", "final"}, d.Finals},
		{"astrid_dispatch_dropped_total", []string{"reason", "queue_full"}, d.QueueDrops},
		{"astrid_dispatch_refused_total", []string{"reason", "rate_limited"}, d.RateLimited},
		{"astrid_tool_call_duration_seconds", []string{"tool", "read_file"}, callers * callsPerCaller},
	} {
		if got := value(fams, c.name, c.labels...); got != float64(c.want) {
			t.Errorf("%s%v = %v, want %d (the kernel's Stats)", c.name, c.labels, got, c.want)
		}
	}
	// The load was real: it published, it was delivered, nothing was lost.
	if b.Published-beforeBus.Published < 2*publishes+callers*callsPerCaller || b.Unrouted-beforeBus.Unrouted < publishes {
		t.Errorf("published %d, unrouted %d: less than the load", b.Published-beforeBus.Published, b.Unrouted-beforeBus.Unrouted)
	}
	if b.Evicted != 0 || d.QueueDrops != 0 {
		t.Errorf("the load lost events: %d evicted, %d dropped", b.Evicted, d.QueueDrops)
	}
	// Every call made after New is in the per-capsule histogram.
	if h := histogramTotal(fams, "astrid_capsule_call_duration_seconds"); h != d.Invocations-before.Invocations {
		t.Errorf("call histograms hold %d calls, the dispatcher made %d since New", h, d.Invocations-before.Invocations)
	}
	if v := value(fams, "astrid_capsule_call_duration_seconds", "capsule", "astrid-capsule-fs"); v < callers*callsPerCaller {
		t.Errorf("fs capsule calls in the histogram: %v", v)
	}
	for c := range callers {
		if v := value(fams, "astrid_principal_published_bytes_total", "principal", fmt.Sprintf("p%d", c)); v <= 0 {
			t.Errorf("principal p%d published bytes %v", c, v)
		}
		if v := value(fams, "astrid_principal_calls_total", "principal", fmt.Sprintf("p%d", c)); v < callsPerCaller {
			t.Errorf("principal p%d charged calls %v, want at least %d", c, v, callsPerCaller)
		}
	}
	if v := value(fams, "astrid_dispatch_queued_calls", "capsule", "astrid-capsule-fs"); v != 0 {
		t.Errorf("fs queue depth after the load: %v", v)
	}
	if scrapes < 2 {
		t.Logf("only %d scrapes during the load", scrapes)
	}
}
