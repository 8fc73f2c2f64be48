package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Users and links survive closing and reopening the file; an unlink is as
// durable as a link.
func TestIdentitiesSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := s.Identities()
	now := time.Unix(1700000000, 0).UTC()
	for _, u := range []string{"alice", "bob"} {
		if err := ids.CreateUser(IdentityUser{UserID: u, DisplayName: strings.ToUpper(u), CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []IdentityLink{
		{Platform: "discord", PlatformUserID: "123", UserID: "alice", Method: "code", LinkedAt: now},
		{Platform: "telegram", PlatformUserID: "@alice", UserID: "alice"},
		{Platform: "discord", PlatformUserID: "456", UserID: "bob"},
	} {
		if err := ids.Link(l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ids.Unlink("discord", "456"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids = s.Identities()
	l, ok, err := ids.Resolve("discord", "123")
	if err != nil || !ok || l.UserID != "alice" || l.Method != "code" || !l.LinkedAt.Equal(now) {
		t.Fatalf("resolve after reopen: %+v %v %v", l, ok, err)
	}
	if _, ok, err := ids.Resolve("discord", "456"); err != nil || ok {
		t.Fatalf("unlinked account resolves after reopen: %v %v", ok, err)
	}
	u, ok, err := ids.User("bob")
	if err != nil || !ok || u.DisplayName != "BOB" {
		t.Fatalf("user after reopen: %+v %v %v", u, ok, err)
	}
	links, err := ids.Links("alice")
	if err != nil || len(links) != 2 || links[0].Platform != "discord" || links[1].PlatformUserID != "@alice" {
		t.Fatalf("links after reopen: %+v %v", links, err)
	}
	if links, err := ids.Links("bob"); err != nil || len(links) != 0 {
		t.Fatalf("bob's links after unlink: %+v %v", links, err)
	}
}

// Every refusal names its reason and wraps its sentinel; none changes the map.
func TestIdentityRefusals(t *testing.T) {
	ids := openTemp(t).Identities()
	if err := ids.CreateUser(IdentityUser{UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := ids.Link(IdentityLink{Platform: "discord", PlatformUserID: "1", UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 300)
	cases := []struct {
		name string
		do   func() error
		want error
		text string
	}{
		{"user twice", func() error { return ids.CreateUser(IdentityUser{UserID: "alice"}) }, ErrUserExists, "alice"},
		{"user id not a principal", func() error { return ids.CreateUser(IdentityUser{UserID: "a b"}) }, ErrInvalid, ""},
		{"user id too long", func() error { return ids.CreateUser(IdentityUser{UserID: long}) }, ErrInvalid, ""},
		{"display name control", func() error { return ids.CreateUser(IdentityUser{UserID: "carol", DisplayName: "x\x1b[2J"}) }, ErrInvalid, "control"},
		{"display name long", func() error { return ids.CreateUser(IdentityUser{UserID: "carol", DisplayName: long}) }, ErrInvalid, "limit"},
		{"link to nobody", func() error {
			return ids.Link(IdentityLink{Platform: "discord", PlatformUserID: "2", UserID: "mallory"})
		}, ErrNoUser, "mallory"},
		{"link twice", func() error {
			return ids.Link(IdentityLink{Platform: "discord", PlatformUserID: "1", UserID: "alice"})
		}, ErrLinked, `linked to "alice"`},
		{"empty platform", func() error { return ids.Link(IdentityLink{PlatformUserID: "2", UserID: "alice"}) }, ErrInvalid, "platform"},
		{"NUL in platform", func() error {
			return ids.Link(IdentityLink{Platform: "dis\x00cord", PlatformUserID: "2", UserID: "alice"})
		}, ErrInvalid, "control"},
		{"newline in account", func() error {
			return ids.Link(IdentityLink{Platform: "discord", PlatformUserID: "2\n", UserID: "alice"})
		}, ErrInvalid, "control"},
		{"blank account", func() error {
			return ids.Link(IdentityLink{Platform: "discord", PlatformUserID: "  ", UserID: "alice"})
		}, ErrInvalid, "blank"},
		{"long account", func() error {
			return ids.Link(IdentityLink{Platform: "discord", PlatformUserID: long, UserID: "alice"})
		}, ErrInvalid, "limit"},
		{"long platform", func() error { return ids.Link(IdentityLink{Platform: long[:65], PlatformUserID: "2", UserID: "alice"}) }, ErrInvalid, "limit"},
		{"bad UTF-8", func() error {
			return ids.Link(IdentityLink{Platform: "discord", PlatformUserID: "\xff", UserID: "alice"})
		}, ErrInvalid, "UTF-8"},
		{"unlink absent", func() error { _, err := ids.Unlink("discord", "9"); return err }, ErrNoLink, ""},
		{"unlink absent platform", func() error { _, err := ids.Unlink("slack", "1"); return err }, ErrNoLink, ""},
		{"resolve invalid", func() error { _, _, err := ids.Resolve("", "1"); return err }, ErrInvalid, ""},
		{"links of invalid", func() error { _, err := ids.Links("../alice"); return err }, ErrInvalid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("got %v, want %v containing %q", err, tc.want, tc.text)
			}
		})
	}
	links, err := ids.Links("alice")
	if err != nil || len(links) != 1 || links[0].PlatformUserID != "1" {
		t.Fatalf("refusals changed the map: %+v %v", links, err)
	}
	if _, ok, _ := ids.User("carol"); ok {
		t.Fatal("a refused user was created")
	}
}
