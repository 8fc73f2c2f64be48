package natsbus

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// maxPrivateFile bounds what is read of a key or credentials file: a
// decorated JWT and seed fit in a few KiB.
const maxPrivateFile = 64 << 10

// checkPrivateFile refuses a key file (what, at path, holding whose key)
// that is not a regular file or that group or others may read or write:
// a key others can read is no longer the operator's.
func checkPrivateFile(info fs.FileInfo, what, path, whose string) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file", what, path)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s %s: mode %04o lets others read %s; chmod 600 it", what, path, info.Mode().Perm(), whose)
	}
	return nil
}

// readPrivateFile reads a key file that checkPrivateFile accepts, checked
// on the open file so that what is read is what was checked. info is the
// file as read.
func readPrivateFile(path, what, whose string) (data []byte, info fs.FileInfo, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := checkPrivateFile(info, what, path, whose); err != nil {
		return nil, nil, err
	}
	if info.Size() > maxPrivateFile {
		return nil, nil, fmt.Errorf("%s %s: %d bytes, more than a key file holds", what, path, info.Size())
	}
	if data, err = io.ReadAll(io.LimitReader(f, maxPrivateFile)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, info, nil
}

// PrivateCredentials is nats.UserCredentials(path) that reads the file at
// every connect and reconnect only if its owner alone may read it.
// nats.UserCredentials reads whatever is there when it reconnects: a file
// the host refused as a renewal (others may read it) would be used anyway
// after the next network blip.
func PrivateCredentials(path string) nats.Option {
	read := func() ([]byte, error) {
		data, _, err := readPrivateFile(path, "credentials", "the key")
		return data, err
	}
	return nats.UserJWT(func() (string, error) {
		data, err := read()
		if err != nil {
			return "", err
		}
		return jwt.ParseDecoratedJWT(data)
	}, func(nonce []byte) ([]byte, error) {
		data, err := read()
		if err != nil {
			return nil, err
		}
		kp, err := jwt.ParseDecoratedNKey(data)
		if err != nil {
			return nil, fmt.Errorf("credentials %s: no user seed: %w", path, err)
		}
		defer kp.Wipe()
		return kp.Sign(nonce)
	})
}
