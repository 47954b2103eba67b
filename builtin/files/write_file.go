package files

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/udiff"
	"github.com/demiurge/demiurge/builtin/internal/workspace"
	"github.com/demiurge/demiurge/effect"
)

func WriteFile(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "write_file",
		Description: "Write text to a file in the workspace, replacing its content. Creates parent directories by default. Use patch for targeted edits.",
		Schema: tool.ObjectSchema(map[string]any{
			"path":               map[string]any{"type": "string", "description": "File path, relative to the workspace."},
			"content":            map[string]any{"type": "string", "description": "The complete new content."},
			"create_parent_dirs": map[string]any{"type": "boolean", "default": true},
		}, "path", "content"),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		Capability:     "fs.write",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter: pathTool[writeArgs]{
			deps: d, op: workspace.OpWrite, action: "fs.write",
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
	root, err := w.OpenRoot()
	if err != nil {
		return tool.Invalid("write failed: %s: %s", t.Show, tool.IOReason(err)), nil
	}
	defer root.Close()

	mode, out, ok := prepareWrite(root, t, c.args.CreateParentDirs)
	if !ok {
		return out, nil
	}
	before, diffable := previousContent(root, t.Rel, len(content))
	if err := c.pt.deps.writer.Write(root, t.Rel, []byte(content), mode); err != nil {
		return tool.Invalid("write failed: %s: %s", t.Show, tool.IOReason(err)), nil
	}
	chars := utf8.RuneCountInString(content)
	data := map[string]any{"path": t.Show, "chars": chars}
	if diffable {
		// What the write changed, for the operator's tool card (the
		// model sees the content line only).
		data["diff"] = tool.TruncateText(udiff.Text(t.Show, before, content), tool.OutputChars)
	}
	return tool.Succeeded(fmt.Sprintf("wrote %d chars to %s", chars, t.Show), data), nil
}

// maxDiffBytes bounds the old and the new content write_file diffs; a
// bigger write is reported without a diff.
const maxDiffBytes = 1 << 20

// previousContent is the file's content before a write of newLen bytes
// ("" for a file that does not exist yet) and whether a diff of the two is
// worth making: both within maxDiffBytes and the old one readable. It
// never fails the write.
func previousContent(root *os.Root, rel string, newLen int) (string, bool) {
	if newLen > maxDiffBytes {
		return "", false
	}
	f, err := root.Open(rel)
	if os.IsNotExist(err) {
		return "", true
	}
	if err != nil {
		return "", false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDiffBytes+1))
	if err != nil || len(data) > maxDiffBytes {
		return "", false
	}
	return string(data), true
}

// prepareWrite checks that t can be written as a regular file and returns
// the mode it gets: the existing file's, else workspaceFileMode. With
// mkdirs the missing parent directories are created.
func prepareWrite(root *os.Root, t workspace.Target, mkdirs bool) (fs.FileMode, effect.Outcome, bool) {
	if t.Rel == "." {
		return 0, tool.Invalid("path is a directory: %s", t.Show), false
	}
	info, err := root.Lstat(t.Rel)
	switch {
	case err == nil && info.IsDir():
		return 0, tool.Invalid("path is a directory: %s", t.Show), false
	case err == nil && !info.Mode().IsRegular():
		return 0, tool.Invalid("path is not a file: %s", t.Show), false
	case err == nil:
		return info.Mode().Perm(), effect.Outcome{}, true
	case !os.IsNotExist(err):
		return 0, tool.Invalid("write failed: %s: %s", t.Show, tool.IOReason(err)), false
	}
	parent := filepath.Dir(t.Rel)
	if pinfo, err := root.Stat(parent); err == nil {
		if !pinfo.IsDir() {
			return 0, tool.Invalid("parent is not a directory: %s", filepath.ToSlash(parent)), false
		}
		return rootfs.FileMode, effect.Outcome{}, true
	}
	if !mkdirs {
		return 0, tool.Invalid("parent directory does not exist: %s", filepath.ToSlash(parent)), false
	}
	if err := root.MkdirAll(parent, rootfs.DirMode); err != nil {
		return 0, tool.Invalid("write failed: %s: %s", t.Show, tool.IOReason(err)), false
	}
	return rootfs.FileMode, effect.Outcome{}, true
}
