package natsbus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
func (t *Transport) capsuleCredsOption(id string) (nats.Option, error) {
	if t.opts.CredsDir == "" || t.opts.Server != nil {
		return nil, nil
	}
	path := filepath.Join(t.opts.CredsDir, id+".creds")
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no credentials file %s: mint it with `astrid nats creds --host %s --out %s <capsule dir>` on the operator's machine", path, t.opts.HostID, path)
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if err := checkPrivateFile(info, "credentials", path, "the capsule's key"); err != nil {
		return nil, err
	}
	return nats.UserCredentials(path), nil
}
