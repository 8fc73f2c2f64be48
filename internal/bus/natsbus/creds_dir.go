package natsbus

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
)

// capsuleCredsOption is the client option that authenticates capsule id's
// connection to an external cluster with its own credentials file,
// <Options.CredsDir>/<id>.creds, minted by the operator (astrid nats creds):
// the broker then holds the capsule to the grants the operator signed, not
// to the host's. nil when no directory is set (the host's credentials,
// Options.Connect, serve every connection). A missing file, or one that
// others than its owner may read, refuses the capsule: running it under
// the host's wider credentials would silently lose the broker's check.
//
// The file is also what the host watches for renewal (creds_renew.go);
// credentials already expired are refused.
func (t *Transport) capsuleCredsOption(id string) (nats.Option, *credsFile, error) {
	if t.opts.CredsDir == "" || t.opts.Server != nil {
		return nil, nil, nil
	}
	path := filepath.Join(t.opts.CredsDir, id+".creds")
	mint := fmt.Sprintf("mint it with `astrid nats creds --host %s --out %s <capsule dir>` on the operator's machine", t.opts.HostID, path)
	cf, err := readCredsFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no credentials file %s: %s", path, mint)
	}
	if err != nil {
		return nil, nil, err
	}
	if now := time.Now(); cf.expiredAt(now) {
		return nil, nil, fmt.Errorf("credentials %s expired at %s: %s", path, cf.expires.UTC().Format(time.RFC3339), mint)
	}
	return PrivateCredentials(path), cf, nil
}
