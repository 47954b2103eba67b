//go:build unix

package process

import (
	"errors"
	"os"
)

// candidates lists the file names tried for a PATH entry.
func candidates(path string, _ []string) []string { return []string{path} }

// checkExecutable reports, as an error, why path cannot be executed.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "exec", Path: path, Err: errors.New("not a regular file")}
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return &os.PathError{Op: "exec", Path: path, Err: os.ErrPermission}
	}
	return nil
}
