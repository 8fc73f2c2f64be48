package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to a temporary file beside path, gives it perm, syncs
// it and renames it over path. A daemon watching path (renewed
// credentials, status files) therefore never reads a half-written file,
// nor the new secret while the file still has an old, wider mode.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
