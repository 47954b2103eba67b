package corerepo

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/atomicfile"
)

// The run directory's files are replaced atomically (atomicfile), like
// the storage's own.

// ioError is an EINTERNAL error naming the operation and the file; the
// cause is kept as the wrapped error.
func ioError(op, path string, err error) error {
	return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: %s %s", op, path)
}

func writeRunFile(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return ioError("write", path, err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "encode %s", path)
	}
	return writeRunFile(path, append(data, '\n'))
}

// readSmallFile reads a file of a run directory; a missing file is (nil,
// false, nil).
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
