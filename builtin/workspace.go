package builtin

import (
	"errors"
	"fmt"
	"github.com/demiurge/demiurge/cmdguard"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/demiurge/demiurge/effect"
)

// Workspace operations. Reads and writes differ in what they may touch:
// writes are refused for protected names and for a few more sensitive ones.
const (
	opRead  = "read"
	opWrite = "write"
)

const (
	// maxSymlinks bounds the links followed while resolving one path, as
	// the kernel's ELOOP limit does.
	maxSymlinks = 40
	// maxPathBytes bounds a path argument (PATH_MAX).
	maxPathBytes = 4096
)

var (
	errSymlinkLoop = errors.New("too many levels of symbolic links")
	errNoWorkspace = errors.New("no workspace is configured for this turn")
)

// workspace is the scope of one tool call: the turn's workspace directory,
// its real path, and the names writes may not touch.
type workspace struct {
	root      string          // absolute, every symbolic link resolved
	protected map[string]bool // lowercased file names writes refuse
}

// target is a path resolved inside the workspace.
type target struct {
	abs  string // absolute real path (symbolic links resolved as far as it exists)
	rel  string // relative to the root in OS form, "." for the root; the name for os.Root
	show string // rel in slash form: how results and messages name the path
}

// newWorkspace returns the scope rooted at dir, which must be an existing
// directory.
func newWorkspace(dir string, protected []string) (*workspace, error) {
	if strings.TrimSpace(dir) == "" {
		return nil, errNoWorkspace
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("invalid workspace %q", dir)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace does not exist: %s", abs)
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("workspace is not a directory: %s", abs)
	}
	w := &workspace{root: real, protected: make(map[string]bool, len(protected))}
	for _, name := range protected {
		if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
			w.protected[name] = true
		}
	}
	return w, nil
}

// openWorkspace is newWorkspace for a tool call: a problem is the outcome
// the model sees.
func openWorkspace(inv effect.Invocation, d Deps) (*workspace, effect.Outcome, bool) {
	w, err := newWorkspace(inv.Turn.Workspace, append(slices.Clip(d.ProtectedNames), inv.Turn.ProtectedNames...))
	if err != nil {
		return nil, invalid("%s: %v", inv.Entry.Name, err), false
	}
	return w, effect.Outcome{}, true
}

// openRoot opens the workspace for I/O. Every read and write goes through
// the returned os.Root, so a symbolic link swapped in after resolution can
// still not lead outside the workspace.
func (w *workspace) openRoot() (*os.Root, error) { return os.OpenRoot(w.root) }

// resolve maps a path argument to a target inside the workspace, or to the
// outcome that refuses it. Relative paths are taken from the root and "~"
// is the user's home; symbolic links are followed as far as the path
// exists, and the result must still lie inside the root. Writes are also
// refused for protected names; reads and writes for sensitive paths. A
// refusal changes nothing.
func (w *workspace) resolve(value, op string) (target, effect.Outcome, bool) {
	if strings.IndexByte(value, 0) >= 0 {
		return target{}, invalid("invalid path: contains a NUL byte"), false
	}
	if len(value) > maxPathBytes {
		return target{}, invalid("invalid path: %d bytes, limit %d", len(value), maxPathBytes), false
	}
	real, err := w.realPath(value)
	if errors.Is(err, errSymlinkLoop) {
		return target{}, denied("symlink_loop", "path cannot be resolved: too many levels of symbolic links: %s", value), false
	}
	if err != nil || !within(w.root, real) {
		return target{}, denied("workspace_escape", "path escapes workspace: %s", value), false
	}
	rel, err := filepath.Rel(w.root, real)
	if err != nil {
		return target{}, denied("workspace_escape", "path escapes workspace: %s", value), false
	}
	t := target{abs: real, rel: rel, show: filepath.ToSlash(rel)}
	if op == opWrite {
		if name := filepath.Base(real); w.protected[strings.ToLower(name)] {
			return target{}, denied("protected_file", "write blocked for protected file: %s", name), false
		}
	}
	if isSensitive(t.show, op == opWrite) {
		return target{}, denied("sensitive_path", "sensitive path denied: %s", t.show), false
	}
	return t, effect.Outcome{}, true
}

// realPath returns the absolute real path value names, relative paths
// taken from the root. It does not clean the path lexically first: ".."
// after a symbolic link leaves the link's target, as the kernel would.
func (w *workspace) realPath(value string) (string, error) {
	p := value
	if p == "" {
		p = "."
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	if !filepath.IsAbs(p) {
		p = w.root + string(filepath.Separator) + p
	}
	return realPath(p)
}

// realPath resolves every symbolic link of the absolute path abs, like
// POSIX realpath, except that the path need not exist: a component that is
// missing (or cannot be inspected) is kept as written and resolution goes
// on below it, so ".." can still climb back out of it. More than
// maxSymlinks links is errSymlinkLoop.
func realPath(abs string) (string, error) {
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(abs)
	cur := vol + sep
	pending := splitPath(abs[len(vol):])
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		info, err := os.Lstat(next)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", errSymlinkLoop
		}
		dest, err := os.Readlink(next)
		if err != nil {
			cur = next // replaced since Lstat: take it as it is now
			continue
		}
		if v := filepath.VolumeName(dest); filepath.IsAbs(dest) || (len(dest) > len(v) && os.IsPathSeparator(dest[len(v)])) {
			// An absolute target restarts from its volume's root (a rooted
			// one without a volume, from the current volume's).
			cur = vol + sep
			if v != "" {
				cur = v + sep
			}
			dest = dest[len(v):]
		}
		pending = append(splitPath(dest), pending...)
	}
	return cur, nil
}

// splitPath splits p into its components; separators and empty
// components are dropped.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// within reports whether p is root or lies below it. Both must be clean
// absolute paths.
func within(root, p string) bool {
	if p == root {
		return true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// isSensitive reports whether the workspace-relative slash path rel is
// sensitive (spec tool-runtime §10.2). The command guard decides with the
// same function, so the terminal and the file tools never disagree.
func isSensitive(rel string, write bool) bool { return cmdguard.SensitivePath(rel, write) }

// sensitiveDir reports whether everything below a directory called name
// (lowercased) is sensitive.
func sensitiveDir(name string) bool { return cmdguard.SensitiveDir(name) }

// ioReason is the part of an I/O error worth showing: the system's reason
// without the absolute path it was about.
func ioReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}
