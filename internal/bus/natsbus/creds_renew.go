package natsbus

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/jwt/v2"
)

// A credsFile is a credentials file a connection authenticates with, as
// this host last read it. Operator-minted credentials may expire (astrid
// nats creds --ttl): the operator writes fresh ones over the file, and
// the host notices the change at its next presence tick and reconnects
// the connections that use it, which read the file again (renewCreds).
// It is read and written by the announcing goroutine only, after Attach
// or New made it.
type credsFile struct {
	path string
	mod  time.Time
	size int64
	// expires is when its JWT expires (zero: never); life is how long it
	// was issued for.
	expires time.Time
	life    time.Duration
	warned  credsWarning
	// refused is the modification time of a changed file found unusable,
	// so that it is reported once.
	refused time.Time
}

type credsWarning int

const (
	warnedNothing credsWarning = iota
	warnedSoon
	warnedExpired
)

// readCredsFile checks that path is a credentials file only its owner may
// read, holding a user JWT and seed, and reads when it expires.
func readCredsFile(path string) (*credsFile, error) {
	data, info, err := readPrivateFile(path, "credentials", "the key")
	if err != nil {
		return nil, err
	}
	token, err := jwt.ParseDecoratedJWT(data)
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return nil, fmt.Errorf("credentials %s: not a user JWT: %w", path, err)
	}
	if _, err := jwt.ParseDecoratedNKey(data); err != nil {
		return nil, fmt.Errorf("credentials %s: no user seed: %w", path, err)
	}
	cf := &credsFile{path: path, mod: info.ModTime(), size: info.Size()}
	if claims.Expires > 0 {
		cf.expires = time.Unix(claims.Expires, 0)
		if claims.IssuedAt > 0 {
			cf.life = cf.expires.Sub(time.Unix(claims.IssuedAt, 0))
		}
	}
	return cf, nil
}

// expiredAt reports whether the credentials have expired at now.
func (cf *credsFile) expiredAt(now time.Time) bool {
	return !cf.expires.IsZero() && !now.Before(cf.expires)
}

// soonAt reports whether the credentials expire within a quarter of their
// life, or an hour, whichever is shorter, of now: time enough to mint fresh
// ones.
func (cf *credsFile) soonAt(now time.Time) bool {
	if cf.expires.IsZero() {
		return false
	}
	margin := time.Hour
	if q := cf.life / 4; q > 0 && q < margin {
		margin = q
	}
	return cf.expires.Sub(now) <= margin
}

// renewCreds reconnects the connections whose credentials file was
// replaced by a usable one, and warns of credentials about to expire. A
// capsule's connection only publishes: nats.go keeps what it publishes
// while it reconnects. The host's receiver is replaced as when its grants
// grow, both in the host's queue group meanwhile, so nothing it should
// receive is lost; its presence connection is replaced too. Called by the
// announcing goroutine.
func (t *Transport) renewCreds(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	for id, a := range t.capsules {
		if a.creds == nil {
			continue
		}
		who := "capsule " + id
		if t.credsReplaced(a.creds, who, now) {
			if err := a.conn.ForceReconnect(); err != nil {
				t.log.Warn("natsbus: renewed credentials not taken up", "connection", who, "error", err)
			} else {
				t.renewed(who, a.creds)
			}
		}
		t.warnExpiry(a.creds, who, now)
	}
	if t.hostCreds != nil {
		if t.credsReplaced(t.hostCreds, "host", now) {
			if err := t.renewHostConnsLocked(); err != nil {
				t.log.Warn("natsbus: renewed host credentials not taken up", "error", err)
			} else {
				t.renewed("host", t.hostCreds)
			}
		}
		t.warnExpiry(t.hostCreds, "host", now)
	}
}

func (t *Transport) renewed(who string, cf *credsFile) {
	t.stats.credsRenewed.Add(1)
	expires := "never"
	if !cf.expires.IsZero() {
		expires = cf.expires.UTC().Format(time.RFC3339)
	}
	t.log.Info("natsbus: credentials renewed", "connection", who, "file", cf.path, "expires", expires)
}

// credsReplaced reports whether cf's file changed into usable credentials,
// which it then describes. A changed file that is unusable (unreadable,
// readable by others, not credentials, already expired) is reported once
// and the connection keeps what it has.
func (t *Transport) credsReplaced(cf *credsFile, who string, now time.Time) bool {
	info, err := os.Stat(cf.path)
	if err != nil || info.ModTime().Equal(cf.mod) && info.Size() == cf.size {
		return false // a missing file is reported when the credentials expire
	}
	fresh, err := readCredsFile(cf.path)
	if err == nil && fresh.expiredAt(now) {
		err = fmt.Errorf("credentials %s expired at %s", cf.path, fresh.expires.UTC().Format(time.RFC3339))
	}
	if err != nil {
		if !info.ModTime().Equal(cf.refused) {
			cf.refused = info.ModTime()
			t.log.Warn("natsbus: credentials file changed but is not usable; the connection keeps its current credentials", "connection", who, "error", err)
		}
		return false
	}
	*cf = *fresh
	return true
}

// warnExpiry logs, once each, that cf's credentials expire soon and that
// they expired.
func (t *Transport) warnExpiry(cf *credsFile, who string, now time.Time) {
	switch {
	case cf.expiredAt(now) && cf.warned < warnedExpired:
		cf.warned = warnedExpired
		t.log.Error("natsbus: credentials expired: the broker disconnects the connection until fresh ones are written to the file",
			"connection", who, "file", cf.path, "expired", cf.expires.UTC().Format(time.RFC3339))
	case cf.soonAt(now) && cf.warned < warnedSoon:
		cf.warned = warnedSoon
		t.log.Warn("natsbus: credentials expire soon: mint fresh ones (astrid nats creds) over the file; the host takes them up without a reload",
			"connection", who, "file", cf.path, "expires", cf.expires.UTC().Format(time.RFC3339))
	}
}

// renewHostConnsLocked replaces the host's receiver and presence
// connections, which dial with the host's credentials file again. t.mu
// must be held; called by the announcing goroutine, the only one that
// publishes on the presence connection.
func (t *Transport) renewHostConnsLocked() error {
	var errs []error
	if t.recv != nil {
		if err := t.replaceReceiverLocked(t.wantedLocked()); err != nil {
			errs = append(errs, err)
		}
	}
	nc, err := t.dialPresence()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	old := t.presenceConn
	t.presenceConn = nc
	t.retiredPresence.Store(old)
	closeConn(old)
	return errors.Join(errs...)
}

// hostCredsFile reads the host's own credentials file, if Options names
// one, to renew it; a file it cannot read is not watched (connecting with
// it reports why).
func hostCredsFile(opts Options) *credsFile {
	if opts.HostCredsFile == "" || opts.Server != nil {
		return nil
	}
	cf, err := readCredsFile(opts.HostCredsFile)
	if err != nil {
		opts.Logger.Warn("natsbus: host credentials not watched for renewal", "error", err)
		return nil
	}
	return cf
}
