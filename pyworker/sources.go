package pyworker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// sources answers the worker's "source" requests: the worker cannot see the
// core's files (the runtime home is hidden from it), so the Host reads the
// modules it imports, and only beneath the search roots of the call (the
// component directory and agent/lib), inside the core.
type sources struct {
	coreDir  string
	roots    []string // core-relative, slash-separated
	maxBytes int
}

type sourceRequest struct {
	Dirs []string `json:"dirs"`
	Name string   `json:"name"`
}

// found is a located module: a file, a package with __init__.py, or a
// namespace package (a directory, source "").
type found struct {
	Path    string `json:"path"`
	Source  string `json:"source"`
	Package bool   `json:"package"`
	Dir     string `json:"dir,omitempty"`
}

var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// find returns the first match of name in the requested directories, or nil.
func (s *sources) find(raw json.RawMessage) (any, error) {
	var req sourceRequest
	if err := decodeParams(raw, &req); err != nil {
		return nil, fmt.Errorf("source request: %v", err)
	}
	if !identifier().MatchString(req.Name) {
		return nil, nil
	}
	for _, dir := range req.Dirs {
		if !s.allowed(dir) {
			continue
		}
		file := path.Join(dir, req.Name+".py")
		if src, ok, err := s.read(file); err != nil {
			return nil, err
		} else if ok {
			return found{Path: file, Source: src}, nil
		}
		pkg := path.Join(dir, req.Name)
		if !s.isDir(pkg) {
			continue
		}
		init := path.Join(pkg, "__init__.py")
		src, ok, err := s.read(init)
		if err != nil {
			return nil, err
		}
		if ok {
			return found{Path: init, Source: src, Package: true, Dir: pkg}, nil
		}
		return found{Path: pkg, Package: true, Dir: pkg}, nil
	}
	return nil, nil
}

// allowed reports whether dir is one of the roots or beneath one.
func (s *sources) allowed(dir string) bool {
	if dir != path.Clean(dir) || path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") {
		return false
	}
	for _, r := range s.roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

// resolve maps a core-relative path to a file that really lies inside the
// core (symbolic links resolved).
func (s *sources) resolve(rel string) (string, bool) {
	abs := filepath.Join(s.coreDir, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false
	}
	root, err := filepath.EvalSymlinks(s.coreDir)
	if err != nil {
		return "", false
	}
	r, err := filepath.Rel(root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return real, true
}

func (s *sources) isDir(rel string) bool {
	real, ok := s.resolve(rel)
	if !ok {
		return false
	}
	info, err := os.Stat(real)
	return err == nil && info.IsDir()
}

// read returns a module's source; ok false when there is no such regular
// file inside the core.
func (s *sources) read(rel string) (string, bool, error) {
	real, ok := s.resolve(rel)
	if !ok {
		return "", false, nil
	}
	f, err := os.Open(real)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return "", false, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(s.maxBytes)+1))
	if err != nil {
		return "", false, fmt.Errorf("cannot read %s: %v", rel, err)
	}
	if len(b) > s.maxBytes {
		return "", false, fmt.Errorf("%s is larger than the limit of %d bytes", rel, s.maxBytes)
	}
	return string(b), true, nil
}
