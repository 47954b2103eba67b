package corerepo

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/gitrepo"
)

// The run directory's files are replaced atomically through the storage's
// own writer (gitrepo.WriteFile), with its error shape.

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return demiurge.WrapError(demiurge.EINTERNAL, err, "encode %s", path)
	}
	return gitrepo.WriteFile(path, append(data, '\n'))
}

// readSmallFile reads a file of a run directory; a missing file is (nil,
// false, nil).
func readSmallFile(path string) ([]byte, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, gitrepo.IOError("read", path, err)
	}
	return data, true, nil
}
