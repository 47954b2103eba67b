package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/cmdguard"
	"github.com/demiurge/demiurge/effect"
)

// Workspace operations. Reads and writes differ in what they may touch:
// writes are refused for protected names and for a few more sensitive ones.
const (
	OpRead  = "read"
	OpWrite = "write"
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
	errNoUserHome  = errors.New("the user's home directory is unknown")
)

// Workspace is the scope of one tool call: the turn's workspace directory,
// its real path, the names writes may not touch, and the Host's private
// paths no file tool may touch.
type Workspace struct {
	root      string          // absolute, every symbolic link resolved
	protected map[string]bool // lowercased file names writes refuse
	hidden    []string        // absolute real paths hidden from agents (see hides)
}

// Target is a resolved path. Writes only ever resolve inside the
// workspace; a read may lie outside it or be sensitive, and then needs
// the operator (see pathTool).
type Target struct {
	Abs  string // absolute real path (symbolic links resolved as far as it exists)
	Rel  string // inside: relative to the root in OS form, "." for the root; the name for os.Root
	Show string // how results and messages name the path: rel in slash form, or abs when outside

	Outside   bool // a read outside the workspace (spec tool-runtime §10.1)
	Sensitive bool // a read of a sensitive path (§10.2)
}

// DirAndName are the directory to open an os.Root at and the name under
// it for I/O on t: the workspace and rel inside it; for a read outside,
// the target's own directory and base name, so that a link swapped in
// later cannot lead out of the directory the operator approved.
func (t Target) DirAndName(w *Workspace) (dir, name string) {
	if !t.Outside {
		return w.root, t.Rel
	}
	if d := filepath.Dir(t.Abs); d != t.Abs {
		return d, filepath.Base(t.Abs)
	}
	return t.Abs, "." // the file system root
}

// New returns the scope rooted at dir, which must be an existing
// directory. hidden are the Host's private paths (the runtime home, the
// private homes beside it); they are resolved through symbolic links as
// far as they exist.
func New(dir string, protected, hidden []string) (*Workspace, error) {
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
	w := &Workspace{root: real, protected: make(map[string]bool, len(protected))}
	for _, name := range protected {
		if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
			w.protected[name] = true
		}
	}
	for _, h := range hidden {
		if !filepath.IsAbs(h) {
			continue
		}
		h = filepath.Clean(h)
		w.hidden = append(w.hidden, h)
		if r := hiddenRealPath(h); r != h {
			w.hidden = append(w.hidden, r)
		}
	}
	return w, nil
}

// hiddenReal caches the real paths of the Host's private paths: they are
// the Host's own directories, fixed for the life of the process, and
// resolving them on every call would cost more than the call (one lstat
// per component of each).
var hiddenReal sync.Map // clean absolute path → real path

func hiddenRealPath(h string) string {
	if r, ok := hiddenReal.Load(h); ok {
		return r.(string)
	}
	r, err := RealPath(h)
	if err != nil {
		return h // a link loop: the literal path is all there is to hide
	}
	hiddenReal.Store(h, r)
	return r
}

// HostPaths are what a tool call's workspace needs of the Host: the
// runtime home, the paths the sandbox hides from every agent process (the
// runtime home, its private sibling, the Host's configuration) and the
// file names writes refuse everywhere.
type HostPaths struct {
	Home      string
	Hidden    []string
	Protected []string
}

// Open is New for a tool call: a problem is the outcome the model sees.
// The hidden paths are h.Hidden plus h.Home itself, so a Host that forgot
// to name its home still keeps it private; the turn's protected names
// join h.Protected.
func Open(inv effect.Invocation, h HostPaths) (*Workspace, effect.Outcome, bool) {
	hidden := slices.Clip(h.Hidden)
	if h.Home != "" {
		hidden = append(hidden, h.Home)
	}
	w, err := New(inv.Turn.Workspace, append(slices.Clip(h.Protected), inv.Turn.ProtectedNames...), hidden)
	if err != nil {
		return nil, tool.Invalid("%s: %v", inv.Entry.Name, err), false
	}
	return w, effect.Outcome{}, true
}

// Hides reports whether the real path p is private to the Host. The rule
// is the sandbox's mount plan (package sandbox): every hidden path is
// covered and the workspace is bound back over it, the deeper one winning
// and the workspace winning a tie. So with the workspace inside the
// runtime home its files stay visible and the rest of the home does not,
// and with the workspace at the runtime home the home's own entries
// (runtime/, config.yaml, …) stay hidden inside it.
func (w *Workspace) Hides(p string) bool {
	deepest := -1
	for _, h := range w.hidden {
		if Within(h, p) {
			deepest = max(deepest, depth(h))
		}
	}
	if deepest < 0 {
		return false
	}
	return !Within(w.root, p) || depth(w.root) < deepest
}

// depth counts the components of a clean absolute path ("/" is 0).
func depth(p string) int {
	return len(rootfs.SplitPath(p[len(filepath.VolumeName(p)):]))
}

// Root is the workspace directory, every symbolic link resolved.
func (w *Workspace) Root() string { return w.root }

// OpenRoot opens the workspace for I/O. Every read and write goes through
// the returned os.Root, so a symbolic link swapped in after resolution can
// still not lead outside the workspace.
func (w *Workspace) OpenRoot() (*os.Root, error) { return os.OpenRoot(w.root) }

// Resolve maps a path argument to a target, or to the outcome that
// refuses it. Relative paths are taken from the root and "~" is the user's
// home; symbolic links are followed as far as the path exists. A path the
// Host keeps private (hides) is refused for every operation: not even the
// operator can approve it. A write must lie inside the root, and is
// refused for protected names and sensitive paths. A read may lie outside
// the root or be sensitive: the target says so, and the tool asks the
// operator (spec tool-runtime §1.3, §10). A refusal changes nothing.
func (w *Workspace) Resolve(value, op string) (Target, effect.Outcome, bool) {
	if strings.IndexByte(value, 0) >= 0 {
		return Target{}, tool.Invalid("invalid path: contains a NUL byte"), false
	}
	if len(value) > maxPathBytes {
		return Target{}, tool.Invalid("invalid path: %d bytes, limit %d", len(value), maxPathBytes), false
	}
	real, err := w.realPath(value)
	switch {
	case errors.Is(err, errSymlinkLoop):
		return Target{}, tool.Denied("symlink_loop", "path cannot be resolved: too many levels of symbolic links: %s", value), false
	case errors.Is(err, errNoUserHome):
		return Target{}, tool.Invalid("invalid path: %s: %v", value, err), false
	case err == nil && w.Hides(real):
		return Target{}, tool.Denied("host_private", "path is private to the Host: %s", value), false
	}
	inside := err == nil && Within(w.root, real)
	if !inside {
		if err != nil || op != OpRead {
			return Target{}, tool.Denied("workspace_escape", "path escapes workspace: %s", value), false
		}
		show := filepath.ToSlash(real)
		return Target{Abs: real, Show: show, Outside: true, Sensitive: IsSensitive(show, false)}, effect.Outcome{}, true
	}
	rel, err := filepath.Rel(w.root, real)
	if err != nil {
		return Target{}, tool.Denied("workspace_escape", "path escapes workspace: %s", value), false
	}
	t := Target{Abs: real, Rel: rel, Show: filepath.ToSlash(rel)}
	if op == OpWrite {
		if name := filepath.Base(real); w.protected[strings.ToLower(name)] {
			return Target{}, tool.Denied("protected_file", "write blocked for protected file: %s", name), false
		}
	}
	if IsSensitive(t.Show, op == OpWrite) {
		if op != OpRead {
			return Target{}, tool.Denied("sensitive_path", "sensitive path denied: %s", t.Show), false
		}
		t.Sensitive = true
	}
	return t, effect.Outcome{}, true
}

// realPath returns the absolute real path value names, relative paths
// taken from the root. It does not clean the path lexically first: ".."
// after a symbolic link leaves the link's target, as the kernel would.
// "~" that cannot be expanded is errNoUserHome, never a name in the
// workspace.
func (w *Workspace) realPath(value string) (string, error) {
	p := value
	if p == "" {
		p = "."
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", errNoUserHome
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = w.root + string(filepath.Separator) + p
	}
	return RealPath(p)
}

// RealPath resolves every symbolic link of the absolute path abs, like
// POSIX realpath, except that the path need not exist: a component that is
// missing (or cannot be inspected) is kept as written and resolution goes
// on below it, so ".." can still climb back out of it. More than
// maxSymlinks links is errSymlinkLoop.
func RealPath(abs string) (string, error) {
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(abs)
	cur := vol + sep
	pending := rootfs.SplitPath(abs[len(vol):])
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
		pending = append(rootfs.SplitPath(dest), pending...)
	}
	return cur, nil
}

// Within reports whether p is root or lies below it. Both must be clean
// absolute paths.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// IsSensitive reports whether the workspace-relative slash path rel is
// sensitive (spec tool-runtime §10.2). The command guard decides with the
// same function, so the terminal and the file tools never disagree.
func IsSensitive(rel string, write bool) bool { return cmdguard.SensitivePath(rel, write) }

// SensitiveDir reports whether everything below a directory called name
// (lowercased) is sensitive.
func SensitiveDir(name string) bool { return cmdguard.SensitiveDir(name) }
