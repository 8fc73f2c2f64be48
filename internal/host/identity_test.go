package host

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/store"
)

func identityCapsule(t *testing.T, f fixture, name string, levels ...string) *Capsule {
	t.Helper()
	var quoted []string
	for _, l := range levels {
		quoted = append(quoted, `"`+l+`"`)
	}
	return f.capsule(t, `
[package]
name = "`+name+`"
version = "0.1.0"
[capabilities]
identity = [`+strings.Join(quoted, ", ")+`]
`)
}

// Each identity call needs its level: admin > link > resolve; an empty list
// and unrecognised strings grant nothing.
func TestIdentityLevels(t *testing.T) {
	f := newFixture(t)
	// The map the calls work on: alice exists and discord/1 is hers.
	ids := f.deps.Store.Identities()
	if err := ids.CreateUser(store.IdentityUser{UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := ids.Link(store.IdentityLink{Platform: "discord", PlatformUserID: "1", UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name string
		need int // 1 resolve, 2 link, 3 admin
		do   func(c *Call) error
	}{
		{"resolve", 1, func(c *Call) error { _, _, err := c.IdentityResolve("discord", "1"); return err }},
		{"list links", 2, func(c *Call) error { _, err := c.IdentityListLinks("alice"); return err }},
		{"link", 2, func(c *Call) error {
			return c.IdentityLink(hostapi.IdentityLinkRequest{Platform: "slack", PlatformUserID: "U1", UserID: "alice"})
		}},
		{"unlink", 2, func(c *Call) error { return c.IdentityUnlink("slack", "U1") }},
		{"create user", 3, func(c *Call) error { _, err := c.IdentityCreateUser(hostapi.IdentityNewUser{}); return err }},
	}
	grants := []struct {
		levels []string
		has    int
	}{
		{nil, 0},
		{[]string{"root"}, 0},
		{[]string{"Resolve"}, 0},
		{[]string{"resolve"}, 1},
		{[]string{"link"}, 2},
		{[]string{"resolve", "link"}, 2},
		{[]string{"admin"}, 3},
		{[]string{"admin", "bogus"}, 3},
	}
	for i, g := range grants {
		c := identityCapsule(t, f, "id"+string(rune('a'+i)), g.levels...)
		call, _ := c.Begin(context.Background(), "default")
		for _, o := range ops {
			err := o.do(call)
			if allowed := o.need <= g.has; allowed != (err == nil) {
				t.Errorf("identity %v, %s: %v (allowed %v)", g.levels, o.name, err, allowed)
			}
			if err != nil && hostapi.CodeOf(err) != hostapi.CodeDenied {
				t.Errorf("identity %v, %s: %v, want denied", g.levels, o.name, err)
			}
		}
		call.End()
	}
}

// The calls do what they say, refuse bad input with invalid, and name who
// linked what.
func TestIdentityCalls(t *testing.T) {
	f := newFixture(t)
	c := identityCapsule(t, f, "admin", "admin")
	call, _ := c.Begin(context.Background(), "default")
	defer call.End()

	u, err := call.IdentityCreateUser(hostapi.IdentityNewUser{UserID: "alice", DisplayName: "Alice"})
	if err != nil || u.UserID != "alice" {
		t.Fatalf("create: %+v %v", u, err)
	}
	gen, err := call.IdentityCreateUser(hostapi.IdentityNewUser{DisplayName: "Someone"})
	if err != nil || !strings.HasPrefix(gen.UserID, "user-") || len(gen.UserID) != len("user-")+16 {
		t.Fatalf("create with a chosen id: %+v %v", gen, err)
	}
	if _, err := call.IdentityCreateUser(hostapi.IdentityNewUser{UserID: "alice"}); hostapi.CodeOf(err) != hostapi.CodeExists {
		t.Fatalf("create twice: %v", err)
	}
	if _, found, err := call.IdentityResolve("discord", "42"); err != nil || found {
		t.Fatalf("resolve before link: %v %v", found, err)
	}
	if err := call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "discord", PlatformUserID: "42", UserID: "alice", Method: "code"}); err != nil {
		t.Fatal(err)
	}
	got, found, err := call.IdentityResolve("discord", "42")
	if err != nil || !found || got.UserID != "alice" || got.DisplayName != "Alice" {
		t.Fatalf("resolve: %+v %v %v", got, found, err)
	}
	links, err := call.IdentityListLinks("alice")
	if err != nil || len(links) != 1 || links[0].LinkedBy != "admin" || links[0].Method != "code" || links[0].LinkedAt.IsZero() {
		t.Fatalf("links: %+v %v", links, err)
	}
	for _, tc := range []struct {
		name string
		err  error
		code hostapi.Code
	}{
		{"link again", call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "discord", PlatformUserID: "42", UserID: gen.UserID}), hostapi.CodeExists},
		{"link to nobody", call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "discord", PlatformUserID: "43", UserID: "mallory"}), hostapi.CodeNotFound},
		{"unlink absent", call.IdentityUnlink("discord", "43"), hostapi.CodeNotFound},
		{"control in platform", call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "dis\ncord", PlatformUserID: "43", UserID: "alice"}), hostapi.CodeInvalid},
		{"long account", call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "discord", PlatformUserID: strings.Repeat("9", 257), UserID: "alice"}), hostapi.CodeInvalid},
		{"user id not a principal", call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "discord", PlatformUserID: "43", UserID: "al ice"}), hostapi.CodeInvalid},
		{"resolve empty", func() error { _, _, err := call.IdentityResolve("", "1"); return err }(), hostapi.CodeInvalid},
		{"create bad id", func() error { _, err := call.IdentityCreateUser(hostapi.IdentityNewUser{UserID: "a/b"}); return err }(), hostapi.CodeInvalid},
	} {
		if hostapi.CodeOf(tc.err) != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.code)
		}
	}
	if err := call.IdentityUnlink("discord", "42"); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := call.IdentityResolve("discord", "42"); found {
		t.Fatal("resolves after unlink")
	}
}

// What one kernel linked, the next one (a restart on the same state.db)
// resolves.
func TestIdentitySurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	boot := func() (*store.Store, *Call) {
		st, err := store.Open(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t)
		f.deps.Store = st
		c := identityCapsule(t, f, "admin", "admin")
		call, _ := c.Begin(context.Background(), "default")
		return st, call
	}
	st, call := boot()
	if _, err := call.IdentityCreateUser(hostapi.IdentityNewUser{UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := call.IdentityLink(hostapi.IdentityLinkRequest{Platform: "telegram", PlatformUserID: "@al", UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	call.End()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, call = boot()
	defer st.Close()
	defer call.End()
	if u, found, err := call.IdentityResolve("telegram", "@al"); err != nil || !found || u.UserID != "alice" {
		t.Fatalf("after restart: %+v %v %v", u, found, err)
	}
}
