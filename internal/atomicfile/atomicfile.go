// Package atomicfile replaces small files of the Host's own state so that
// a reader sees the old or the new content, never a partial one. Nothing
// is fsynced: the guarantee holds across process crashes, not power loss.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data (mode 0600, directory created 0700)
// through a temporary file in the same directory and a rename. On error
// the temporary file is removed and path is untouched.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
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
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return nil
}
