package gitrepo

import (
	"errors"
	"io/fs"
	"os"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/atomicfile"
)

// IOError is an EINTERNAL error naming the operation and the file; the
// cause is kept as the wrapped error.
func IOError(op, path string, err error) error {
	return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: %s %s", op, path)
}

// WriteFile replaces a file of the storage's own state atomically (see
// atomicfile).
func WriteFile(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return IOError("write", path, err)
	}
	return nil
}

// readSmallFile reads a file of the storage's own state; a missing file
// is (nil, false, nil).
func readSmallFile(path string) ([]byte, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, IOError("read", path, err)
	}
	return data, true, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
