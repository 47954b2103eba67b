//go:build !unix

package process

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// candidates lists the file names tried for a PATH entry: the name itself
// when it has an extension, else the name with each PATHEXT extension.
func candidates(path string, env []string) []string {
	if filepath.Ext(path) != "" {
		return []string{path}
	}
	exts := cmp.Or(envValue(env, "PATHEXT"), ".com;.exe;.bat;.cmd")
	var out []string
	for _, e := range strings.Split(strings.ToLower(exts), ";") {
		if e != "" {
			out = append(out, path+e)
		}
	}
	return out
}

// checkExecutable reports, as an error, why path cannot be executed.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "exec", Path: path, Err: errors.New("not a regular file")}
	}
	return nil
}
