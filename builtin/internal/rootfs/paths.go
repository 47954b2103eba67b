package rootfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Modes of what the file tools create in the workspace: these are the
// user's files, not the Host's private state.
const (
	FileMode fs.FileMode = 0o644
	DirMode  fs.FileMode = 0o755
)

// maxPatchBytes bounds the files patch (and skill_manage patch) rewrite:
// the whole file is held in memory to replace text in it.
const MaxEditBytes = 16 << 20

// SplitPath splits p into its components; separators and empty
// components are dropped.
func SplitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// LinkOnPath returns the first existing component of the core-relative
// path rel that is a symbolic link (slash form), or "".
func LinkOnPath(root *os.Root, rel string) string {
	parts := SplitPath(rel)
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		info, err := root.Lstat(p)
		if err != nil {
			return ""
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return filepath.ToSlash(p)
		}
	}
	return ""
}

// ReadSmall reads a skill file whole, at most maxPatchBytes.
func ReadSmall(root *os.Root, rel string) (string, error) {
	f, err := root.Open(rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxEditBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > MaxEditBytes {
		return "", fmt.Errorf("file is larger than %d bytes", MaxEditBytes)
	}
	return string(data), nil
}

// IsBelow reports whether the clean relative path p lies strictly below
// dir ("." is the root of both).
func IsBelow(dir, p string) bool {
	if dir == "." {
		return p != "." && p != ".." && !StartsWithDotDot(p)
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && !StartsWithDotDot(rel)
}

func StartsWithDotDot(p string) bool {
	return p == ".." || len(p) > 2 && p[:2] == ".." && os.IsPathSeparator(p[2])
}
