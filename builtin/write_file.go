package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/demiurge/demiurge/effect"
)

// Modes of what the file tools create in the workspace: these are the
// user's files, not the Host's private state.
const (
	workspaceFileMode fs.FileMode = 0o644
	workspaceDirMode  fs.FileMode = 0o755
)

func writeFile(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "write_file",
		Description: "Write text to a file in the workspace, replacing its content. Creates parent directories by default. Use patch for targeted edits.",
		Schema: objectSchema(map[string]any{
			"path":               map[string]any{"type": "string", "description": "File path, relative to the workspace."},
			"content":            map[string]any{"type": "string", "description": "The complete new content."},
			"create_parent_dirs": map[string]any{"type": "boolean", "default": true},
		}, "path", "content"),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		Capability:     "fs.write",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter: pathTool[writeArgs]{
			deps: d, op: opWrite, action: "fs.write",
			path: func(a writeArgs) string { return a.Path },
			run:  runWriteFile,
		}.adapter(writeArgs{CreateParentDirs: true}),
	}
}

type writeArgs struct {
	Path             string `json:"path"`
	Content          string `json:"content"`
	CreateParentDirs bool   `json:"create_parent_dirs"`
}

// runWriteFile replaces a workspace file atomically: either the whole new
// content is in place, or the old content (or no file) is.
func runWriteFile(_ context.Context, c *pathCall[writeArgs]) (effect.Outcome, error) {
	w, t, content := c.w, c.t, c.args.Content
	root, err := w.openRoot()
	if err != nil {
		return invalid("write failed: %s: %s", t.show, ioReason(err)), nil
	}
	defer root.Close()

	mode, out, ok := prepareWrite(root, t, c.args.CreateParentDirs)
	if !ok {
		return out, nil
	}
	if err := writeAtomic(root, t.rel, []byte(content), mode); err != nil {
		return invalid("write failed: %s: %s", t.show, ioReason(err)), nil
	}
	chars := utf8.RuneCountInString(content)
	return succeeded(
		fmt.Sprintf("wrote %d chars to %s", chars, t.show),
		map[string]any{"path": t.show, "chars": chars},
	), nil
}

// prepareWrite checks that t can be written as a regular file and returns
// the mode it gets: the existing file's, else workspaceFileMode. With
// mkdirs the missing parent directories are created.
func prepareWrite(root *os.Root, t target, mkdirs bool) (fs.FileMode, effect.Outcome, bool) {
	if t.rel == "." {
		return 0, invalid("path is a directory: %s", t.show), false
	}
	info, err := root.Lstat(t.rel)
	switch {
	case err == nil && info.IsDir():
		return 0, invalid("path is a directory: %s", t.show), false
	case err == nil && !info.Mode().IsRegular():
		return 0, invalid("path is not a file: %s", t.show), false
	case err == nil:
		return info.Mode().Perm(), effect.Outcome{}, true
	case !os.IsNotExist(err):
		return 0, invalid("write failed: %s: %s", t.show, ioReason(err)), false
	}
	parent := filepath.Dir(t.rel)
	if pinfo, err := root.Stat(parent); err == nil {
		if !pinfo.IsDir() {
			return 0, invalid("parent is not a directory: %s", filepath.ToSlash(parent)), false
		}
		return workspaceFileMode, effect.Outcome{}, true
	}
	if !mkdirs {
		return 0, invalid("parent directory does not exist: %s", filepath.ToSlash(parent)), false
	}
	if err := root.MkdirAll(parent, workspaceDirMode); err != nil {
		return 0, invalid("write failed: %s: %s", t.show, ioReason(err)), false
	}
	return workspaceFileMode, effect.Outcome{}, true
}
