package webview

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
)

// patience bounds the waits for what takes milliseconds.
const patience = time.Minute

// serveView starts a view of src that never samples by itself (the test
// calls sample) behind an httptest server.
func serveView(t *testing.T, src Source, opts Options) (*View, *httptest.Server) {
	t.Helper()
	opts.Source = src
	if opts.Interval == 0 {
		opts.Interval = time.Hour
	}
	v, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(v)
	t.Cleanup(func() {
		v.Close()
		srv.CloseClientConnections()
		srv.Close()
	})
	return v, srv
}

func getBody(t *testing.T, url string) (string, http.Header) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
	return string(body), res.Header
}

// Names holding markup reach the page only as escaped JSON strings, and
// the page's script never parses server text as HTML: it has no
// innerHTML, outerHTML, insertAdjacentHTML, document.write or eval, and
// the page has no inline script (the admin server's CSP forbids one).
func TestServerTextIsNeverMarkup(t *testing.T) {
	src := newFakeSource(syntheticNodes(3))
	_, srv := serveView(t, src, Options{})
	body, h := getBody(t, srv.URL+"/api/graph")
	if h.Get("Content-Type") != "application/json" {
		t.Fatalf("graph content type %q", h.Get("Content-Type"))
	}
	if strings.Contains(body, "<img") || strings.Contains(body, "<b ") || !strings.Contains(body, `\u003cimg src=x`) {
		t.Fatalf("markup not escaped in the graph: %s", body)
	}
	var g Graph
	if err := json.Unmarshal([]byte(body), &g); err != nil || g.Nodes[0].ID != htmlCapsule {
		t.Fatalf("the escaped name does not decode to itself: %v %q", err, g.Nodes[0].ID)
	}
	script, err := fs.ReadFile(assets, "assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	if bad := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`).FindString(string(script)); bad != "" {
		t.Fatalf("app.js uses %s: server text could become markup", bad)
	}
	page, _ := getBody(t, srv.URL+"/")
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(page) || strings.Contains(page, " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
		t.Fatal("index.html has inline script or an event handler attribute")
	}
	for _, path := range []string{"/static/app.js", "/static/style.css"} {
		if _, h := getBody(t, srv.URL+path); h.Get("Content-Type") == "" {
			t.Errorf("%s has no content type", path)
		}
	}
}

// readEvent reads one server-sent event's data.
func readEvent(t *testing.T, r *bufio.Reader) Tick {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var tick Tick
			if err := json.Unmarshal([]byte(data), &tick); err != nil {
				t.Fatal(err)
			}
			return tick
		}
	}
}

func openStream(t *testing.T, url string) (*bufio.Reader, func()) {
	t.Helper()
	res, err := http.Get(url + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	return bufio.NewReader(res.Body), func() { res.Body.Close() }
}

// The observer ring is open only while a stream is: the kernel pays
// nothing for the rates while nobody watches. While one is open, ticks
// carry the rates of 1000 topics and each publisher, the counters and the
// turns.
func TestRatesOnlyWhileWatched(t *testing.T) {
	src := newFakeSource(syntheticNodes(5))
	src.counters = Counters{Published: 7, Drops: []Drop{{Where: "bus", Reason: "evicted", Count: 2}}}
	v, srv := serveView(t, src, Options{})
	v.sample()
	if src.observed.Load() != 0 {
		t.Fatal("an observer was opened with nobody watching")
	}
	r, closeStream := openStream(t, srv.URL)
	first := readEvent(t, r)
	if first.Counters.Published != 7 || len(first.Counters.Drops) != 1 || first.Graph == "" || first.Streams != 1 {
		t.Fatalf("first tick %+v", first)
	}
	if src.openRings() != 1 {
		t.Fatalf("%d observers open while one stream is", src.openRings())
	}
	topics := syntheticTopics(1000)
	src.ring().publish("syn-capsule-001", topics...)
	src.ring().publish("syn-capsule-002", topics[:10]...)
	var tick Tick
	testutil.WaitFor(t, patience, "the rates of 1000 topics", func() bool {
		v.sample()
		tick = readEvent(t, r)
		var total uint64
		for _, rt := range tick.Topics {
			total += rt.Total
		}
		return total == 1010
	})
	if len(tick.Topics) != 1000 || tick.Topics[0].Total != 2 {
		t.Fatalf("%d topic rows, busiest %+v", len(tick.Topics), tick.Topics[0])
	}
	if len(tick.Sources) != 2 || tick.Sources[0].Name != "syn-capsule-001" || tick.Sources[0].Total != 1000 {
		t.Fatalf("sources %+v", tick.Sources)
	}
	closeStream()
	testutil.WaitFor(t, patience, "the stream to end", func() bool { return v.hub.count() == 0 })
	v.sample()
	if src.openRings() != 0 {
		t.Fatal("the observer stays open after the last stream ended")
	}
}

// A client that never reads its stream is dropped once its buffer is
// full, while the view goes on sampling (sample never blocks: every call
// here returns) and a client that reads keeps getting every tick.
func TestSlowStreamIsDropped(t *testing.T) {
	src := newFakeSource(syntheticNodes(200))
	// A write to the stalled client waits (up to WriteTimeout) once its
	// socket is full: the hub drops it for its full queue meanwhile.
	v, srv := serveView(t, src, Options{ClientBuffer: 4, WriteTimeout: patience})
	// The stalled client: it connects and never reads a byte.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, patience, "the stalled stream to join", func() bool { return v.hub.count() == 1 })
	// The reader.
	r, closeStream := openStream(t, srv.URL)
	defer closeStream()
	var read atomic.Int64
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "data: ") {
				read.Add(1)
			}
		}
	}()
	// The reader has the first tick; each tick sampled is read before the
	// next, so only the stalled client falls behind.
	sampleAndRead := func() {
		want := read.Load() + 1
		v.sample()
		testutil.WaitFor(t, patience, "the reader to get the tick", func() bool { return read.Load() >= want })
	}
	testutil.WaitFor(t, patience, "the reader's first tick", func() bool { return read.Load() == 1 })
	// Big ticks (1000 topics of long names) fill the stalled client's
	// socket buffers, then its queue.
	topics := syntheticTopics(1000)
	for i := range topics {
		topics[i] += "." + strings.Repeat("x", 200)
	}
	src.ring().publish("syn-capsule-001", topics...)
	for sent := 0; v.hub.dropped.Load() == 0; sent++ {
		if sent > 10000 {
			t.Fatal("the stalled stream was never dropped")
		}
		sampleAndRead()
	}
	if v.hub.count() != 1 {
		t.Fatalf("%d streams after the drop, want the reader's only", v.hub.count())
	}
	// The reader still gets every tick after the drop.
	for range 3 {
		sampleAndRead()
	}
	if tick := v.tick(false); tick.StreamsDropped != 1 {
		t.Fatalf("the tick says %d streams dropped", tick.StreamsDropped)
	}
}

// MaxClients bounds the streams; one more is refused, not queued.
func TestStreamsAreBounded(t *testing.T) {
	_, srv := serveView(t, newFakeSource(nil), Options{MaxClients: 1})
	_, closeStream := openStream(t, srv.URL)
	defer closeStream()
	res, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a stream past MaxClients: %d", res.StatusCode)
	}
}
