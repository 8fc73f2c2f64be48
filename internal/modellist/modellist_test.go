package modellist

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDecodeRefusesAnotherServersList(t *testing.T) {
	src := Source("https://api.example", "key-1")
	if src == Source("https://api.example", "key-2") || src == Source("https://api.example/", "key-1") {
		t.Fatal("two servers or keys share a source")
	}
	good := `{"source":"` + src + `","models":["m1"],"fetched_unix_ms":1}`
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"its own", good, true},
		{"another key", strings.Replace(good, src, Source("https://api.example", "key-2"), 1), false},
		{"empty list", `{"source":"` + src + `","models":[]}`, false},
		{"not JSON", `{"source":`, false},
	} {
		if _, ok := Decode([]byte(tt.body), src); ok != tt.ok {
			t.Errorf("%s: Decode ok = %v, want %v", tt.name, ok, tt.ok)
		}
	}
	c, _ := Decode([]byte(good), src)
	if !c.Stale(time.UnixMilli(1).Add(MaxAge)) || c.Stale(time.UnixMilli(1).Add(MaxAge-time.Millisecond)) {
		t.Fatal("Stale does not turn at MaxAge")
	}
}

func TestLimitedTransportCapsTheBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/plain" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, `{"data":[]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.Repeat(" ", MaxBody+1)))
	}))
	defer srv.Close()
	c := Client(srv.Client())
	resp, err := c.Get(srv.URL + "/flood")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("reading past MaxBody: %v, want ErrTooLarge", err)
	}
	resp, err = c.Get(srv.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("a 2xx text/plain answer is handed on as %q", ct)
	}
	if _, err := (&http.Client{Transport: LimitedTransport{}}).Get(srv.URL); err == nil {
		t.Fatal("a transport with no base reached the network")
	}
}

func TestDedupKeepsTheFirst(t *testing.T) {
	if got := strings.Join(Dedup([]string{"a", "b", "a", "c", "b"}), ","); got != "a,b,c" {
		t.Fatalf("Dedup = %s", got)
	}
}
