package daemonclient_test

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// echoReporter answers every query with who asked and what the socket
// counted, and keeps the queries it saw.
type echoReporter struct {
	mu   sync.Mutex
	seen []uplink.Query
}

type echoed struct {
	Name      string
	Principal string
	Owner     bool
	Socket    map[string]uplink.Traffic
	Args      json.RawMessage
}

func (e *echoReporter) report(q uplink.Query) (json.RawMessage, error) {
	e.mu.Lock()
	e.seen = append(e.seen, q)
	e.mu.Unlock()
	if q.Principal == "broken" {
		return nil, errors.New("the reporter failed")
	}
	return json.Marshal(echoed(q))
}

// The query op hands the reporter the query, the connection's principal,
// whether its uid is the owner's (never what the client claims), and the
// socket's counts, and returns its answer as the payload.
func TestQueryNamesTheAsker(t *testing.T) {
	me := os.Getuid()
	for _, tc := range []struct {
		name      string
		settings  uplink.Settings
		principal string
		owner     bool
	}{
		{"the owner", uplink.Settings{OwnerUID: me}, "default", true},
		{"the owner mapped to another principal", uplink.Settings{OwnerUID: me, Principals: map[int]string{me: "ops"}}, "ops", true},
		{"another uid mapped to alice", uplink.Settings{OwnerUID: me + 1, Principals: map[int]string{me: "alice"}}, "alice", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &echoReporter{}
			tc.settings.Report = rep.report
			d := boot(t, tc.settings)
			c := d.dial(t)
			other := d.dial(t) // a second client of the same principal
			for _, q := range uplinkwire.Queries {
				var got echoed
				if err := c.Query(q, &got); err != nil {
					t.Fatal(err)
				}
				if got.Name != q || got.Principal != tc.principal || got.Owner != tc.owner {
					t.Fatalf("query %s reached the reporter as %+v", q, got)
				}
				tr := got.Socket[tc.principal]
				if tr.Clients != 2 || tr.BytesIn == 0 || tr.BytesOut == 0 || len(got.Socket) != 1 {
					t.Fatalf("socket traffic = %+v, want %s's two clients and their bytes", got.Socket, tc.principal)
				}
			}
			// A query's arguments reach the reporter as the client
			// sent them.
			var got echoed
			if err := c.QueryWith(uplinkwire.QueryRevokeApprovals, uplinkwire.RevokeArgs{IDs: []string{"0123abcd"}}, &got); err != nil {
				t.Fatal(err)
			}
			if got.Name != uplinkwire.QueryRevokeApprovals || got.Principal != tc.principal || string(got.Args) != `{"ids":["0123abcd"]}` {
				t.Fatalf("a query with arguments reached the reporter as %+v (args %s)", got, got.Args)
			}
			other.Close()
		})
	}
}

// Bad queries: an unknown query, a query before the hello, a reporter that
// fails, an uplink with no reporter. Each is answered; only the one before
// the hello closes the connection.
func TestBadQueries(t *testing.T) {
	rep := &echoReporter{}
	d := boot(t, uplink.Settings{OwnerUID: os.Getuid(), Report: rep.report})
	t.Run("unknown query", func(t *testing.T) {
		c := d.dial(t)
		for _, q := range []string{"", "secrets", "status.json", "capsules "} {
			var de *daemonclient.Error
			if err := c.Query(q, new(any)); !errors.As(err, &de) || de.Code != uplinkwire.CodeUnknownQuery {
				t.Fatalf("query %q: %v, want %s", q, err, uplinkwire.CodeUnknownQuery)
			}
		}
		var got echoed
		if err := c.Query(uplinkwire.QueryStatus, &got); err != nil || got.Principal != "default" {
			t.Fatalf("after unknown queries, a good one: %+v, %v", got, err)
		}
	})
	t.Run("query before the hello", func(t *testing.T) {
		r := d.raw(t)
		r.send(uplinkwire.Frame{Op: uplinkwire.OpQuery, ID: 1, Query: uplinkwire.QueryStatus})
		wantCode(t, r.next(), uplinkwire.CodeHandshake)
		r.closed()
	})
	t.Run("a query field on another op is not a query", func(t *testing.T) {
		r := d.raw(t)
		r.hello()
		r.send(uplinkwire.Frame{Op: uplinkwire.OpInterceptors, ID: 2, Topic: "tool.v1.request.execute", Query: uplinkwire.QueryStatus})
		if f := r.next(); f.Op != uplinkwire.OpOK || len(f.Payload) != 0 {
			t.Fatalf("interceptors with a query field answered %+v", f)
		}
	})
	rep.mu.Lock()
	before := len(rep.seen)
	for _, q := range rep.seen {
		if !slices.Contains(uplinkwire.Queries, q.Name) {
			t.Errorf("the reporter was asked %q", q.Name)
		}
	}
	rep.mu.Unlock()
	if before != 1 {
		t.Errorf("the reporter was asked %d times, want once (the good query)", before)
	}
	d.works(t)

	t.Run("the reporter fails", func(t *testing.T) {
		me := os.Getuid()
		d := boot(t, uplink.Settings{OwnerUID: me, Principals: map[int]string{me: "broken"}, Report: rep.report})
		var de *daemonclient.Error
		if err := d.dial(t).Query(uplinkwire.QueryCapsules, new(any)); !errors.As(err, &de) || de.Code != uplinkwire.CodeFailed || de.Message != "capsules: the reporter failed" {
			t.Fatalf("a failing reporter: %v", err)
		}
	})
	t.Run("no reporter", func(t *testing.T) {
		d := boot(t, owner())
		c := d.dial(t)
		var de *daemonclient.Error
		if err := c.Query(uplinkwire.QueryStatus, new(any)); !errors.As(err, &de) || de.Code != uplinkwire.CodeFailed {
			t.Fatalf("no reporter: %v", err)
		}
		if len(c.Interceptors("tool.v1.request.execute")) == 0 {
			t.Fatal("the connection did not survive")
		}
	})
}
