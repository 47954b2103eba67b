package demiurge

import (
	"os"
	"path/filepath"
	"strings"
)

// ContainedPath is the Host's rule for a local file a turn names for a
// delivery (send_image, send_file, a result artifact) and for a channel
// about to upload one. It resolves p (relative to workspace) and returns
// the absolute path when it lies inside workspace or sessionRoot, both
// lexically and after resolving symbolic links of the parts that exist.
// ok is false otherwise, and always when both roots are empty (fail
// closed).
func ContainedPath(p, workspace, sessionRoot string) (string, bool) {
	if p == "" {
		return "", false
	}
	abs := p
	if !filepath.IsAbs(abs) {
		if workspace == "" {
			return "", false
		}
		abs = filepath.Join(workspace, abs)
	}
	abs = filepath.Clean(abs)
	for _, root := range []string{workspace, sessionRoot} {
		if root == "" || !filepath.IsAbs(root) {
			continue
		}
		root = filepath.Clean(root)
		if !within(root, abs) {
			continue
		}
		// A symlink inside the root may point outside it: check the real
		// path too when the file (or its nearest existing parent) exists.
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			realRoot = root
		}
		if real, ok := realExisting(abs); ok && !within(realRoot, real) {
			continue
		}
		return abs, true
	}
	return "", false
}

// realExisting resolves symlinks of the longest existing prefix of p and
// re-attaches the rest.
func realExisting(p string) (string, bool) {
	rest := ""
	for cur := p; ; {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", false
			}
			return filepath.Join(real, rest), true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
