package core

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
)

// Read limits for files that are not YAML (YAML files use yamlx.MaxBytes).
const (
	maxTextBytes   = 1 << 20 // SOUL.md, skills
	maxModuleBytes = 1 << 20 // Starlark modules
)

// loader carries what every step of Load needs: where the core is, and how
// messages name its files.
type loader struct {
	dir   string // absolute, cleaned core directory
	real  string // dir with symlinks resolved, for containment checks
	shown string // how messages name dir: "agents/<id>" under an agents dir, else dir
	id    string // the directory name
	saved bool   // a saved revision: schemas are not compiled again (LoadSaved)
}

func newLoader(dir string) (*loader, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "invalid core directory %q", dir)
	}
	l := &loader{dir: abs, real: abs, shown: filepath.ToSlash(abs), id: filepath.Base(abs)}
	if filepath.Base(filepath.Dir(abs)) == "agents" {
		l.shown = "agents/" + l.id
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		l.real = real
	}
	return l, nil
}

// show names a file under the core for messages.
func (l *loader) show(abs string) string { return l.shown + "/" + l.rel(abs) }

// rel returns the core-relative slash path of abs.
func (l *loader) rel(abs string) string {
	r, err := filepath.Rel(l.dir, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// resolve turns a configured core-relative path into an absolute one, or
// says why it is not acceptable: absolute, escaping the core, or a symlink
// leading out of it.
func (l *loader) resolve(p string) (string, string) {
	if strings.TrimSpace(p) == "" {
		return "", "must not be empty"
	}
	slash := filepath.ToSlash(p)
	if filepath.IsAbs(p) || strings.HasPrefix(slash, "/") {
		return "", "must be relative to the core directory"
	}
	clean := path.Clean(slash)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", "must stay inside the core directory"
	}
	abs := filepath.Join(l.dir, filepath.FromSlash(clean))
	if problem := l.contained(abs); problem != "" {
		return "", problem
	}
	return abs, ""
}

// contained checks that abs, once symlinks are resolved, is still inside
// the core. A path that does not exist passes: there is nothing to read.
func (l *loader) contained(abs string) string {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	if real != l.real && !strings.HasPrefix(real, l.real+string(filepath.Separator)) {
		return "leads outside the core directory through a symbolic link"
	}
	return ""
}

// read reads a regular file inside the core, at most limit bytes (one more
// is read so that callers can report the overflow).
func (l *loader) read(abs string, limit int64) ([]byte, error) {
	if problem := l.contained(abs); problem != "" {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: %s", l.show(abs), problem)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: not a regular file", l.show(abs))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: file is larger than %d bytes", l.show(abs), limit)
	}
	return data, nil
}

// readErr renders an error of read that is not already coded.
func (l *loader) readErr(abs string, err error) error {
	var de *demiurge.Error
	if errors.As(err, &de) {
		return err
	}
	return demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", l.show(abs), demiurge.IOReason(err))
}

// isDir reports whether abs is a directory; a missing path is not an error.
func isDir(abs string) (bool, error) {
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !info.IsDir() {
		return false, fmt.Errorf("not a directory")
	}
	return true, nil
}
