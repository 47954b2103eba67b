package corerepo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge"
)

// ioError is an EINTERNAL error naming the operation and the file.
func ioError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: %s %s: %v", op, path, err)
}

// writeFileAtomic replaces path with data (mode 0600) through a temporary
// file in the same directory and a rename, so readers see the old or the
// new content, never a partial one. Nothing is fsynced: the guarantees
// hold across process crashes, not power loss (see the package doc).
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return ioError("create directory for", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return ioError("create temporary file for", path, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return ioError("chmod", name, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return ioError("write", name, err)
	}
	if err := tmp.Close(); err != nil {
		return ioError("close", name, err)
	}
	if err := os.Rename(name, path); err != nil {
		return ioError("rename", path, err)
	}
	ok = true
	return nil
}

// readSmallFile reads a file of the host's own state; a missing file is
// (nil, false, nil).
func readSmallFile(path string) ([]byte, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, ioError("read", path, err)
	}
	return data, true, nil
}
