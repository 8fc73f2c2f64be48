package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// The identity map: which Astrid principal an external account (a platform
// and that platform's user id) speaks as. It is the kernel's, not a
// capsule's: every capsule granted `identity` reads and writes the same map,
// and it survives restarts like any committed write.
//
//	identity / users / <user id>                      JSON IdentityUser
//	identity / links / <platform> / <platform user id> JSON IdentityLink
//	identity / by_user / <user id> / <platform> NUL <platform user id>
//
// Platform and platform user id are nested bucket names and keys, never
// joined with a separator, except in by_user, where NUL separates them: the
// validation below refuses control characters, NUL among them.

var (
	bucketIdentity = []byte("identity")
	bucketUsers    = []byte("users")
	bucketLinks    = []byte("links")
	bucketByUser   = []byte("by_user")
)

// Identity size limits.
const (
	MaxPlatformBytes       = 64
	MaxPlatformUserIDBytes = 256
	MaxDisplayNameBytes    = 256
	MaxLinkMethodBytes     = 64
)

// Identity errors, besides ErrInvalid.
var (
	// ErrNoUser means the user id names no created user.
	ErrNoUser = errors.New("no such user")
	// ErrUserExists means a user with that id was created before.
	ErrUserExists = errors.New("user already exists")
	// ErrNoLink means the external account is linked to no user.
	ErrNoLink = errors.New("no such link")
	// ErrLinked means the external account is already linked (to the
	// user named in the error): a link is never silently moved.
	ErrLinked = errors.New("already linked")
)

// IdentityUser is one Astrid user; its id is a principal.
type IdentityUser struct {
	UserID      string    `json:"user_id"`
	DisplayName string    `json:"display_name,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	CreatedBy   string    `json:"created_by,omitempty"` // the capsule that created it
}

// IdentityLink maps one external account to a user.
type IdentityLink struct {
	Platform       string    `json:"platform"`
	PlatformUserID string    `json:"platform_user_id"`
	UserID         string    `json:"user_id"`
	Method         string    `json:"method,omitempty"`
	LinkedAt       time.Time `json:"linked_at"`
	LinkedBy       string    `json:"linked_by,omitempty"` // the capsule that linked it
}

// Identities is the kernel's identity map in the store.
type Identities struct{ s *Store }

// Identities returns the identity map.
func (s *Store) Identities() *Identities { return &Identities{s: s} }

// ValidateIdentityText checks one identity field: what names it (for the
// error), its value, whether it may be empty and its byte limit. Values are
// UTF-8 without control characters, and not blank.
func ValidateIdentityText(field, v string, optional bool, limit int) error {
	if v == "" {
		if optional {
			return nil
		}
		return fmt.Errorf("%s must not be empty: %w", field, ErrInvalid)
	}
	if len(v) > limit {
		return fmt.Errorf("%s is %d bytes, over the %d-byte limit: %w", field, len(v), limit, ErrInvalid)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not UTF-8: %w", field, ErrInvalid)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return fmt.Errorf("%s %q holds a control character: %w", field, short(v), ErrInvalid)
	}
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%s is blank: %w", field, ErrInvalid)
	}
	return nil
}

func validateAccount(platform, platformUserID string) error {
	if err := ValidateIdentityText("platform", platform, false, MaxPlatformBytes); err != nil {
		return err
	}
	return ValidateIdentityText("platform user id", platformUserID, false, MaxPlatformUserIDBytes)
}

func identityErr(op string, err error) error {
	return fmt.Errorf("store: identity: %s: %w", op, err)
}

// CreateUser records u. Its id must be a valid principal and not taken.
func (id *Identities) CreateUser(u IdentityUser) error {
	if err := validatePrincipal(u.UserID); err != nil {
		return identityErr("create user", err)
	}
	if err := ValidateIdentityText("display name", u.DisplayName, true, MaxDisplayNameBytes); err != nil {
		return identityErr("create user", err)
	}
	raw, err := json.Marshal(u)
	if err != nil {
		return identityErr("create user", err)
	}
	return id.s.update(func(tx *bolt.Tx) error {
		users, err := identityBucket(tx, bucketUsers)
		if err != nil {
			return identityErr("create user", err)
		}
		if users.Get([]byte(u.UserID)) != nil {
			return identityErr("create user", fmt.Errorf("%q: %w", u.UserID, ErrUserExists))
		}
		return users.Put([]byte(u.UserID), raw)
	})
}

// User returns the user userID, if created.
func (id *Identities) User(userID string) (IdentityUser, bool, error) {
	var u IdentityUser
	var found bool
	if err := validatePrincipal(userID); err != nil {
		return u, false, identityErr("user", err)
	}
	err := id.s.view(func(tx *bolt.Tx) error {
		raw := readBucket(tx, bucketUsers).get(userID)
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, &u)
	})
	if err != nil {
		return IdentityUser{}, false, identityErr("user", err)
	}
	return u, found, nil
}

// Resolve returns the link of an external account, if any.
func (id *Identities) Resolve(platform, platformUserID string) (IdentityLink, bool, error) {
	var l IdentityLink
	var found bool
	if err := validateAccount(platform, platformUserID); err != nil {
		return l, false, identityErr("resolve", err)
	}
	err := id.s.view(func(tx *bolt.Tx) error {
		raw := readBucket(tx, bucketLinks, platform).get(platformUserID)
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, &l)
	})
	if err != nil {
		return IdentityLink{}, false, identityErr("resolve", err)
	}
	return l, found, nil
}

// Link records l: the user must exist and the account must not be linked
// yet (ErrLinked names the user it is linked to; unlink first to move it).
func (id *Identities) Link(l IdentityLink) error {
	if err := validateAccount(l.Platform, l.PlatformUserID); err != nil {
		return identityErr("link", err)
	}
	if err := validatePrincipal(l.UserID); err != nil {
		return identityErr("link", err)
	}
	if err := ValidateIdentityText("method", l.Method, true, MaxLinkMethodBytes); err != nil {
		return identityErr("link", err)
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return identityErr("link", err)
	}
	return id.s.update(func(tx *bolt.Tx) error {
		if readBucket(tx, bucketUsers).get(l.UserID) == nil {
			return identityErr("link", fmt.Errorf("%q: %w", l.UserID, ErrNoUser))
		}
		links, err := identityBucket(tx, bucketLinks, l.Platform)
		if err != nil {
			return identityErr("link", err)
		}
		if old := links.Get([]byte(l.PlatformUserID)); old != nil {
			var prev IdentityLink
			_ = json.Unmarshal(old, &prev)
			return identityErr("link", fmt.Errorf("%s account %q is linked to %q: %w", short(l.Platform), short(l.PlatformUserID), prev.UserID, ErrLinked))
		}
		if err := links.Put([]byte(l.PlatformUserID), raw); err != nil {
			return err
		}
		byUser, err := identityBucket(tx, bucketByUser, l.UserID)
		if err != nil {
			return err
		}
		return byUser.Put(byUserKey(l.Platform, l.PlatformUserID), nil)
	})
}

// Unlink removes the link of an external account and returns it.
func (id *Identities) Unlink(platform, platformUserID string) (IdentityLink, error) {
	var l IdentityLink
	if err := validateAccount(platform, platformUserID); err != nil {
		return l, identityErr("unlink", err)
	}
	err := id.s.update(func(tx *bolt.Tx) error {
		l = IdentityLink{}
		links := readBucket(tx, bucketLinks, platform)
		raw := links.get(platformUserID)
		if raw == nil {
			return identityErr("unlink", fmt.Errorf("%s account %q: %w", short(platform), short(platformUserID), ErrNoLink))
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return identityErr("unlink", err)
		}
		if err := links.b.Delete([]byte(platformUserID)); err != nil {
			return err
		}
		if byUser := readBucket(tx, bucketByUser, l.UserID); byUser.b != nil {
			return byUser.b.Delete(byUserKey(platform, platformUserID))
		}
		return nil
	})
	return l, err
}

// Links lists the links of userID, by platform then platform user id.
func (id *Identities) Links(userID string) ([]IdentityLink, error) {
	if err := validatePrincipal(userID); err != nil {
		return nil, identityErr("list links", err)
	}
	var out []IdentityLink
	err := id.s.view(func(tx *bolt.Tx) error {
		out = nil
		byUser := readBucket(tx, bucketByUser, userID)
		if byUser.b == nil {
			return nil
		}
		return byUser.b.ForEach(func(k, _ []byte) error {
			platform, puid, ok := strings.Cut(string(k), "\x00")
			if !ok {
				return fmt.Errorf("index key %q has no separator", short(string(k)))
			}
			raw := readBucket(tx, bucketLinks, platform).get(puid)
			if raw == nil {
				return fmt.Errorf("index names %s account %q, which has no link", short(platform), short(puid))
			}
			var l IdentityLink
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			out = append(out, l)
			return nil
		})
	})
	if err != nil {
		return nil, identityErr("list links", err)
	}
	return out, nil
}

func byUserKey(platform, platformUserID string) []byte {
	return []byte(platform + "\x00" + platformUserID)
}

// identityBucket creates (if needed) identity/<path...>.
func identityBucket(tx *bolt.Tx, first []byte, rest ...string) (*bolt.Bucket, error) {
	b, err := tx.CreateBucketIfNotExists(bucketIdentity)
	if err != nil {
		return nil, err
	}
	if b, err = b.CreateBucketIfNotExists(first); err != nil {
		return nil, err
	}
	for _, name := range rest {
		if b, err = b.CreateBucketIfNotExists([]byte(name)); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// maybeBucket is a bucket that may not exist yet (b nil): reads find nothing.
type maybeBucket struct{ b *bolt.Bucket }

func (m maybeBucket) get(key string) []byte {
	if m.b == nil {
		return nil
	}
	return m.b.Get([]byte(key))
}

// readBucket walks to identity/<path...> without creating anything.
func readBucket(tx *bolt.Tx, first []byte, rest ...string) maybeBucket {
	b := tx.Bucket(bucketIdentity)
	if b == nil {
		return maybeBucket{}
	}
	b = b.Bucket(first)
	for _, name := range rest {
		if b == nil {
			return maybeBucket{}
		}
		b = b.Bucket([]byte(name))
	}
	return maybeBucket{b: b}
}
